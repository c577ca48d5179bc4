//! Webhook delivery under load and across processes (issue 12): fair across companies, never
//! twice, transient failures retried, generic texts in the log, the encryption key checked at
//! start. Real receivers on 127.0.0.1, the real binaries.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use testkit::processes::cli_with;
use testkit::{wait_until, Receiver, SilentReceiver, Worker};

use crate::helpers::*;
use crate::lifecycle::{create, synced_with};

/// Registers `url` for `client`; its id.
fn register(client: &testkit::Client, url: &str) -> String {
    client
        .post_json("/api/webhook-urls", &json!({"url": url}))
        .expect(200)
        .data()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn b_body() -> Value {
    let mut body = pending_body();
    body["casoDeUsoIdTemplate"] = json!("tpl-b-seguro");
    body
}

#[test]
fn a_companys_silent_receivers_do_not_delay_another_companys_webhooks() {
    // Each of A's attempts hangs for the whole timeout: one sequential sender would make B
    // wait 6 x 4 s = 24 s.
    let app = synced_with(&[("APP__WEBHOOKS__TIMEOUT_MS", "4000")]);
    let silent: Vec<SilentReceiver> = (0..6).map(|_| SilentReceiver::start()).collect();
    let silent_ids: Vec<String> = silent.iter().map(|r| register(&app.a, &r.url)).collect();
    create(&app.a, PENDENTE, &pending_body());
    let accepted = || silent.iter().map(SilentReceiver::accepted).sum::<usize>();
    assert!(
        wait_until(Duration::from_secs(10), || accepted() >= 4),
        "A's deliveries never started"
    );

    let receiver = Receiver::start(&[]);
    register(&app.b, &receiver.url);
    let started = Instant::now();
    create(&app.b, PENDENTE, &b_body());
    let got = receiver.wait_for(1, Duration::from_secs(30));
    let waited = started.elapsed();

    assert_eq!(got.len(), 1, "B's event never arrived");
    assert_eq!(got[0].json()["type"], "solicitacao.criada");
    assert!(
        waited < Duration::from_secs(5),
        "B's delivery waited {waited:?} behind A's silent receivers"
    );
    assert!(
        accepted() <= 4,
        "A had {} deliveries in flight at once; its share is 4",
        accepted()
    );

    // A's attempts end as timeouts, retried, and the log says only that.
    let log_of = |id: &str| {
        app.a
            .get(&format!("/api/webhook-urls/{id}/entregas"))
            .expect(200)
    };
    let timed_out = wait_until(Duration::from_secs(20), || {
        log_of(&silent_ids[0]).data()[0]["tentativas"][0]["erro"] == "tempo esgotado"
    });
    assert!(timed_out, "{}", log_of(&silent_ids[0]).text);
    let log = log_of(&silent_ids[0]);
    assert_eq!(log.data()[0]["status"], "pendente", "a timeout is retried");
    assert!(!log.text.contains("127.0.0.1"), "{}", log.text);
}

#[test]
fn two_worker_processes_and_a_receiver_slower_than_a_claim_never_send_a_webhook_twice() {
    let app = synced_with(&[("APP__WORKERS__RUN_IN_SERVE", "false")]);
    let receiver = Receiver::answering_after(Duration::from_secs(9));
    register(&app.a, &receiver.url);
    let events = 10;
    for _ in 0..events {
        create(&app.a, PENDENTE, &pending_body());
    }
    let env = [
        ("APP__WORKERS__STATUS_POLL_SECONDS", "0"),
        ("APP__WORKERS__EXPIRY_SECONDS", "0"),
        ("APP__WORKERS__SYNC_SECONDS", "0"),
        ("APP__WORKERS__DELIVERY_POLL_MS", "50"),
        ("APP__WEBHOOKS__TIMEOUT_MS", "12000"),
    ];
    let _w1 = Worker::start_with(&app.db, &app.sim, &env);
    let _w2 = Worker::start_with(&app.db, &app.sim, &env);

    let delivered = wait_until(Duration::from_secs(60), || {
        app.db
            .scalar("SELECT count(*) AS v FROM webhook_entregas WHERE status = 'entregue'")
            == events
    });
    assert!(delivered, "not every event was delivered");
    std::thread::sleep(Duration::from_secs(2));

    let got = receiver.received();
    let ids: HashSet<&str> = got.iter().map(|r| r.header("webhook-id")).collect();
    assert_eq!(ids.len(), events as usize, "every event arrived");
    assert_eq!(got.len(), events as usize, "no webhook-id arrived twice");
    assert_eq!(
        app.db
            .scalar("SELECT count(*) AS v FROM webhook_tentativas"),
        events,
        "one attempt recorded per delivery"
    );
}

#[test]
fn a_process_started_with_another_encryption_key_refuses_to_start_naming_the_setting() {
    let app = synced_with(&[]);
    let receiver = Receiver::start(&[]);
    register(&app.a, &receiver.url);
    // A valid key (base64 of 32 bytes), just not the one the stored secret was encrypted with.
    let other_key = "Hx4dHBsaGRgXFhUUExIREA8ODQwLCgkIBwYFBAMCAQA=";

    for command in ["worker", "serve"] {
        let out = cli_with(
            &app.db,
            &app.sim,
            &[
                ("APP__WEBHOOKS__ENCRYPTION_KEY", other_key),
                ("APP__SERVER__PORT", "0"),
            ],
            &[command],
        );

        assert!(!out.status.success(), "{command} started");
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.trim().lines().last().unwrap_or_default();
        assert!(last.starts_with("error: "), "{command}: {err}");
        assert!(
            last.contains("webhooks.encryption_key")
                && last.contains("APP__WEBHOOKS__ENCRYPTION_KEY"),
            "{command}: {err}"
        );
        assert!(!err.contains(other_key), "the key is never printed");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("running"));
    }
}

/// Gives company `empresa` `events` events, each with one pending delivery due an hour ago to
/// every URL of the company, in SQL (as a backlog built by receivers that never answer would
/// leave them), then lets PostgreSQL know the table's new size as autovacuum would.
fn backlog(app: &TestApp, empresa: &str, events: u32) {
    use diesel::connection::SimpleConnection;
    // in batches, each event with its deliveries: one transaction holding the cluster's oldest
    // transaction id for the whole backlog holds every other test's events and checkpoints
    let base = app
        .db
        .text("SELECT (now() - interval '1 hour')::text AS v")
        .unwrap();
    let event = "md5('{empresa}' || ':' || i)::uuid".replace("{empresa}", empresa);
    let at = format!("'{base}'::timestamptz + i * interval '1 microsecond'");
    app.db.seed_in_batches(u64::from(events), |lo, hi| {
        format!(
            "INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em)
             SELECT {event}, '{empresa}', 'solicitacao.criada', '{{}}', {at}
             FROM generate_series({lo}, {hi}) i;
             INSERT INTO webhook_entregas (id, evento_id, webhook_url_id, empresa_id, status,
                                           tentativas, proxima_tentativa_em, criado_em,
                                           atualizado_em)
             SELECT gen_random_uuid(), {event}, u.id, u.empresa_id, 'pendente', 0, {at}, {at},
                    {at}
             FROM generate_series({lo}, {hi}) i, webhook_urls u
             WHERE u.empresa_id = '{empresa}';"
        )
    });
    app.db
        .conn()
        .batch_execute("VACUUM ANALYZE webhook_entregas")
        .expect("vacuum");
}

#[test]
fn a_million_pending_deliveries_of_one_company_neither_delay_another_nor_the_removal_of_its_url() {
    // A's receivers never answer: its senders hang for the timeout and its backlog stays due.
    let app = synced_with(&[("APP__WEBHOOKS__TIMEOUT_MS", "4000")]);
    let silent: Vec<SilentReceiver> = (0..2).map(|_| SilentReceiver::start()).collect();
    let a_urls: Vec<String> = silent.iter().map(|r| register(&app.a, &r.url)).collect();
    backlog(&app, &app.company_a, 500_000);
    let pending_to = |url: &str| {
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM webhook_entregas \
             WHERE webhook_url_id = '{url}' AND status = 'pendente'"
        ))
    };
    assert_eq!(pending_to(&a_urls[0]), 500_000);
    let accepted = || silent.iter().map(SilentReceiver::accepted).sum::<usize>();
    assert!(
        wait_until(Duration::from_secs(20), || accepted() >= 1),
        "A's deliveries never started"
    );

    let receiver = Receiver::start(&[]);
    register(&app.b, &receiver.url);
    let started = Instant::now();
    create(&app.b, PENDENTE, &b_body());
    let got = receiver.wait_for(1, Duration::from_secs(30));
    let waited = started.elapsed();

    assert_eq!(got.len(), 1, "B's event never arrived");
    assert!(
        waited < Duration::from_secs(5),
        "B's delivery waited {waited:?} beside A's million"
    );

    let started = Instant::now();
    app.a
        .delete(&format!("/api/webhook-urls/{}", a_urls[0]))
        .expect(200);
    let answered = started.elapsed();
    assert!(
        answered < Duration::from_secs(1),
        "removing a URL with 500,000 pending deliveries took {answered:?}"
    );
    eprintln!("B's delivery after {waited:?}; the DELETE answered in {answered:?}");

    // Cancelled behind the answer, in batches; the other URL's stay pending.
    let started = Instant::now();
    assert!(
        wait_until(Duration::from_secs(180), || pending_to(&a_urls[0]) == 0),
        "{} deliveries of the removed URL still pending",
        pending_to(&a_urls[0])
    );
    eprintln!("its deliveries cancelled in {:?}", started.elapsed());
    assert!(pending_to(&a_urls[1]) > 499_000);
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM webhook_entregas \
             WHERE webhook_url_id = '{}' AND status = 'cancelada'",
            a_urls[0]
        )),
        500_000
    );
}
