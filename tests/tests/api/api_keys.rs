//! API key lifecycle through the real binaries: the key's format and checksum, `api-key list`
//! and `api-key revoke`, revocation seen by every running instance, the last use, and no key in
//! clear anywhere (database dump, logs).

use std::process::{Command, Output};
use std::time::Duration;

use testkit::processes::{cli, company_with_key, single_line};
use testkit::{wait_until, Api, Client, Sim, TestDb};

use crate::helpers::*;

fn ok(out: Output, what: &str) -> Output {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The lines `api-key list` prints for company `empresa`, split on tabs.
fn list(db: &TestDb, sim: &Sim, empresa: &str) -> Vec<Vec<String>> {
    let out = ok(
        cli(db, sim, &["api-key", "list", "--empresa", empresa]),
        "api-key list",
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| line.split('\t').map(str::to_owned).collect())
        .collect()
}

/// The id `api-key list` shows for the key whose prefix starts `key`.
fn id_of(db: &TestDb, sim: &Sim, empresa: &str, key: &str) -> String {
    list(db, sim, empresa)
        .into_iter()
        .find(|line| key.starts_with(&line[1]))
        .map(|line| line[0].clone())
        .expect("the key is listed")
}

/// The lower-case hex SHA-256 of `key`, computed by PostgreSQL: what `api_keys.hash` holds.
fn sha256_hex(db: &TestDb, key: &str) -> String {
    db.text(&format!(
        "SELECT encode(sha256(convert_to('{key}', 'UTF8')), 'hex') AS v"
    ))
    .unwrap()
}

/// The random part of a key (`cak_<this>_<checksum>`): what must never be found anywhere.
fn secret_of(key: &str) -> &str {
    &key[4..68]
}

#[test]
fn an_issued_key_has_the_prefix_the_random_part_and_a_checksum_and_a_corrupted_one_is_401() {
    let app = TestApp::spawn();
    let key = &app.key_a;

    let (body, checksum) = key.rsplit_once('_').unwrap();
    assert!(body.starts_with("cak_"), "{key}");
    assert_eq!(secret_of(key).len(), 64);
    assert!(secret_of(key)
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    assert_eq!(checksum.len(), 8);

    app.a.get("/api/casos-de-uso").expect(200);
    // One character of the random part changed: the checksum no longer matches.
    let flipped = if key.as_bytes()[10] == b'0' { "1" } else { "0" };
    let mistyped = format!("{}{flipped}{}", &key[..10], &key[11..]);
    // The checksum dropped: a key of the first format that was never issued.
    for bad in [mistyped.as_str(), body, &key[..key.len() - 1]] {
        app.a
            .with_key(Some(bad))
            .get("/api/casos-de-uso")
            .expect(401);
    }
}

#[test]
fn a_key_of_the_first_format_without_checksum_still_works() {
    let app = TestApp::spawn();
    let legacy = format!("cak_{}", "7e".repeat(32));
    let hash = sha256_hex(&app.db, &legacy);
    app.db.scalar(&format!(
        "WITH k AS (INSERT INTO api_keys (id, empresa_id, hash, prefixo) \
         VALUES (gen_random_uuid(), '{}', '{hash}', '{}') RETURNING 1) \
         SELECT count(*) AS v FROM k",
        app.company_a,
        &legacy[..12]
    ));

    app.a
        .with_key(Some(&legacy))
        .get("/api/casos-de-uso")
        .expect(200);
}

#[test]
fn api_key_list_prints_one_line_per_key_starting_with_its_id_and_never_the_key_or_its_hash() {
    let app = TestApp::spawn();
    let second = single_line(
        &ok(
            cli(
                &app.db,
                &app.sim,
                &["api-key", "issue", "--empresa", &app.company_a],
            ),
            "api-key issue",
        )
        .stdout,
    );
    app.a.get("/api/casos-de-uso").expect(200);
    let second_id = id_of(&app.db, &app.sim, &app.company_a, &second);
    ok(
        cli(&app.db, &app.sim, &["api-key", "revoke", &second_id]),
        "api-key revoke",
    );

    let out = ok(
        cli(
            &app.db,
            &app.sim,
            &["api-key", "list", "--empresa", &app.company_a],
        ),
        "api-key list",
    );
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    let lines = list(&app.db, &app.sim, &app.company_a);

    assert_eq!(lines.len(), 2, "{text}");
    for line in &lines {
        assert_eq!(
            line.len(),
            6,
            "id, prefix, created, last use, revoked, scopes: {line:?}"
        );
        uuid::Uuid::parse_str(&line[0]).expect("each line starts with the key's id");
        assert!(
            line[1].starts_with("cak_") && line[1].len() == 12,
            "{line:?}"
        );
        chrono::DateTime::parse_from_rfc3339(&line[2]).expect("created");
    }
    let (used, revoked) = (&lines[0], &lines[1]);
    assert!(app.key_a.starts_with(&used[1]));
    chrono::DateTime::parse_from_rfc3339(&used[3]).expect("the first key was used");
    assert_eq!(used[4], "-", "not revoked");
    assert_eq!(revoked[0], second_id);
    assert_eq!(revoked[3], "-", "never used");
    chrono::DateTime::parse_from_rfc3339(&revoked[4]).expect("revoked");
    for key in [&app.key_a, &second] {
        assert!(!text.contains(secret_of(key)), "{text}");
        assert!(!text.contains(&sha256_hex(&app.db, key)), "{text}");
    }
    // company B's key is not company A's
    assert_eq!(list(&app.db, &app.sim, &app.company_b).len(), 1);
}

#[test]
fn a_key_revoked_through_the_cli_is_refused_at_once_by_every_running_instance() {
    let db = TestDb::new();
    let sim = Sim::start(&seed());
    let (company, key) = company_with_key(&db, &sim, "Empresa A", CNPJ_A);
    let (_, other_key) = company_with_key(&db, &sim, "Empresa B", CNPJ_B);
    let first = Api::start(&db, &sim);
    let second = Api::start(&db, &sim);
    let clients: Vec<Client> = [&first, &second]
        .iter()
        .map(|api| Client::new(&api.base_url, Some(&key)))
        .collect();
    for client in &clients {
        client.get("/api/casos-de-uso").expect(200);
    }

    let id = id_of(&db, &sim, &company, &key);
    let out = ok(
        cli(&db, &sim, &["api-key", "revoke", &id]),
        "api-key revoke",
    );
    assert!(out.stdout.is_empty());

    // Right after the command returns, with no wait: nothing caches keys.
    for client in &clients {
        let refused = client.get("/api/casos-de-uso").expect(401);
        assert_eq!(refused.json["isPgccErro"], false);
        client
            .post_empty("/api/casos-de-uso/sincronizar")
            .expect(401);
    }
    for api in [&first, &second] {
        Client::new(&api.base_url, Some(&other_key))
            .get("/api/casos-de-uso")
            .expect(200);
    }
}

#[test]
fn revoking_twice_changes_nothing_and_revoking_an_unknown_key_fails() {
    let app = TestApp::spawn();
    let id = id_of(&app.db, &app.sim, &app.company_a, &app.key_a);
    ok(
        cli(&app.db, &app.sim, &["api-key", "revoke", &id]),
        "first revoke",
    );
    let at = app.db.text(&format!(
        "SELECT revogado_em::text AS v FROM api_keys WHERE id = '{id}'"
    ));

    let again = ok(
        cli(&app.db, &app.sim, &["api-key", "revoke", &id]),
        "second revoke",
    );
    assert!(String::from_utf8_lossy(&again.stderr).contains("already revoked"));
    assert_eq!(
        app.db.text(&format!(
            "SELECT revogado_em::text AS v FROM api_keys WHERE id = '{id}'"
        )),
        at
    );

    let unknown = cli(
        &app.db,
        &app.sim,
        &["api-key", "revoke", "7d0f7a56-6a36-4c43-9d0e-3b8c8f1b9a11"],
    );
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no API key"));
    let not_uuid = cli(&app.db, &app.sim, &["api-key", "revoke", "abc"]);
    assert!(!not_uuid.status.success());
    app.b.get("/api/casos-de-uso").expect(200);
}

#[test]
fn the_last_use_of_a_key_is_recorded_at_most_once_a_minute() {
    let app = TestApp::spawn();
    let last_use = || {
        app.db.text(&format!(
            "SELECT ultimo_uso_em::text AS v FROM api_keys WHERE empresa_id = '{}'",
            app.company_a
        ))
    };
    assert_eq!(last_use(), None, "issued, never used");

    app.a.get("/api/casos-de-uso").expect(200);
    let first = last_use().expect("recorded on first use");
    for _ in 0..5 {
        app.a.get("/api/casos-de-uso").expect(200);
    }
    assert_eq!(
        last_use().as_ref(),
        Some(&first),
        "not rewritten within the minute"
    );

    // A minute later (moved back in the database rather than waited for; the running instance
    // learns of the correction from the change feed, within milliseconds, told as an operator
    // tells it: docs/operations.md, "Caches")
    app.db.scalar(&format!(
        "WITH u AS (UPDATE api_keys SET ultimo_uso_em = now() - interval '61 seconds' \
         WHERE empresa_id = '{0}' RETURNING 1) \
         SELECT count(*) + count(pg_notify('consent_api_cache', '{0}')) AS v FROM u",
        app.company_a
    ));
    let recorded_again = wait_until(Duration::from_secs(3), || {
        app.a.get("/api/casos-de-uso").expect(200);
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM api_keys WHERE empresa_id = '{}' \
             AND ultimo_uso_em > now() - interval '61 seconds'",
            app.company_a
        )) == 1
    });
    assert!(recorded_again, "recorded again after a minute");
}

#[test]
fn no_key_is_in_clear_in_a_pg_dump_of_the_database_or_in_any_log_line() {
    let app = TestApp::spawn();
    // Use the keys, well and badly: a corrupted key (same random part) is refused.
    app.a.get("/api/casos-de-uso").expect(200);
    app.b
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let corrupted = format!("{}_00000000", &app.key_a[..68]);
    app.a
        .with_key(Some(&corrupted))
        .get("/api/casos-de-uso")
        .expect(401);
    let mut cli_output = String::new();
    for args in [
        vec!["api-key", "list", "--empresa", app.company_a.as_str()],
        vec!["api-key", "issue", "--empresa", app.company_b.as_str()],
    ] {
        let out = ok(cli(&app.db, &app.sim, &args), "cli");
        cli_output.push_str(&String::from_utf8_lossy(&out.stderr));
    }

    let dump = Command::new("pg_dump")
        .arg("--data-only")
        .arg("--dbname")
        .arg(app.db.url())
        .output()
        .expect("pg_dump on PATH");
    assert!(
        dump.status.success(),
        "pg_dump: {}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let dump = String::from_utf8_lossy(&dump.stdout);
    assert!(
        dump.contains("COPY public.api_keys"),
        "the dump has the keys' table"
    );
    assert!(
        dump.contains(&sha256_hex(&app.db, &app.key_a)),
        "the hash is what is stored"
    );
    let api_log = std::fs::read_to_string(&app.api.log).unwrap();
    let sim_log = std::fs::read_to_string(&app.sim.log).unwrap();
    for key in [&app.key_a, &app.key_b] {
        for (what, text) in [
            ("pg_dump", dump.as_ref()),
            ("consent-api log", api_log.as_str()),
            ("pgcc-sim log", sim_log.as_str()),
            ("CLI stderr", cli_output.as_str()),
        ] {
            assert!(
                !text.contains(secret_of(key)),
                "{what} contains a key's random part"
            );
        }
    }
}
