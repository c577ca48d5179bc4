//! The retention purge on PostgreSQL: rows seeded with explicit timestamps around the cutoffs,
//! then exactly which rows are gone or blanked, and that each call handles at most its batch.

mod common;

use chrono::{DateTime, Duration, Utc};
use common::consent::{tenant, Tenant, CPF};
use common::webhook::register;
use common::{at, pool};
use diesel::prelude::*;
use diesel::sql_types::{Nullable, Text, Timestamptz, Uuid as SqlUuid};
use domain::WebhookUrl;
use ports::RetentionRepository;
use postgres_adapter::schema::{
    solicitacoes_consentimento as sc, webhook_entregas as we, webhook_eventos as ev,
    webhook_tentativas as wt,
};
use postgres_adapter::PgRetentionRepository;
use testkit::TestDb;
use uuid::Uuid;

/// The purge's "now" in these tests.
fn now() -> DateTime<Utc> {
    at("2026-06-30T00:00:00Z")
}

/// 30 days before [`now`].
fn webhook_cutoff() -> DateTime<Utc> {
    now() - Duration::days(30)
}

/// 7 days before [`now`].
fn cancelled_cutoff() -> DateTime<Utc> {
    now() - Duration::days(7)
}

/// An event created at `criado_em`, to be given deliveries by the test ([`delivery`]).
fn event(db: &TestDb, t: &Tenant, criado_em: &str) -> Uuid {
    write_event(db, t, criado_em, false)
}

/// An event written when no URL took it: marked `sem_entregas`, as the outbox marks it.
fn lonely_event(db: &TestDb, t: &Tenant, criado_em: &str) -> Uuid {
    write_event(db, t, criado_em, true)
}

fn write_event(db: &TestDb, t: &Tenant, criado_em: &str, sem_entregas: bool) -> Uuid {
    let id = Uuid::new_v4();
    diesel::sql_query(
        "INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em, sem_entregas)
         VALUES ($1, $2, 'casos-de-uso.sincronizados', '{}', $3, $4)",
    )
    .bind::<SqlUuid, _>(id)
    .bind::<SqlUuid, _>(t.company.id.0)
    .bind::<Timestamptz, _>(at(criado_em))
    .bind::<diesel::sql_types::Bool, _>(sem_entregas)
    .execute(&mut db.conn())
    .unwrap();
    id
}

/// A webhook URL of the tenant, registered long before every row of these tests.
fn url_of(pool: &postgres_adapter::PgPool, t: &Tenant, url: &str) -> WebhookUrl {
    register(pool, &t.company, url, at("2026-01-01T00:00:00Z"))
}

/// A delivery of `evento` to `url` in `status`, last changed at `atualizado_em`, with
/// `attempts` attempts.
fn delivery(
    db: &TestDb,
    evento: Uuid,
    url: &WebhookUrl,
    status: &str,
    atualizado_em: &str,
    attempts: usize,
) -> Uuid {
    let id = Uuid::new_v4();
    let next = (status == "pendente").then(|| at(atualizado_em));
    diesel::sql_query(
        "INSERT INTO webhook_entregas (id, evento_id, webhook_url_id, empresa_id, status,
             tentativas, proxima_tentativa_em, criado_em, atualizado_em)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)",
    )
    .bind::<SqlUuid, _>(id)
    .bind::<SqlUuid, _>(evento)
    .bind::<SqlUuid, _>(url.id)
    .bind::<SqlUuid, _>(url.company_id.0)
    .bind::<Text, _>(status)
    .bind::<diesel::sql_types::Integer, _>(attempts as i32)
    .bind::<Nullable<Timestamptz>, _>(next)
    .bind::<Timestamptz, _>(at(atualizado_em))
    .execute(&mut db.conn())
    .unwrap();
    for _ in 0..attempts {
        diesel::sql_query(
            "INSERT INTO webhook_tentativas (empresa_id, entrega_id, em, status_http, latencia_ms, erro)
             VALUES ($1, $2, $3, 500, 12, 'HTTP 500')",
        )
        .bind::<SqlUuid, _>(url.company_id.0)
        .bind::<SqlUuid, _>(id)
        .bind::<Timestamptz, _>(at(atualizado_em))
        .execute(&mut db.conn())
        .unwrap();
    }
    id
}

/// A consent request row in creation state `criacao`, created (and, unless confirmed, last
/// attempted) at `when`, with the subject's CPF and a proof of collection.
fn request(db: &TestDb, t: &Tenant, criacao: &str, when: &str) -> Uuid {
    let id = Uuid::new_v4();
    let confirmed = criacao == "confirmada";
    diesel::sql_query(
        "INSERT INTO solicitacoes_consentimento (id, empresa_id, caso_de_uso_id,
             caso_de_uso_id_template, cpf_titular, tipo_titular, modalidade_acesso,
             data_expiracao_consentimento, data_titular_respondeu_consentimento, prova_coleta,
             status, pgcc_id, criado_em, atualizado_em, hash, criacao, criacao_tentativa_em)
         VALUES ($1, $2, $3, 'tpl-1', $4, 'PessoaFisica', 'Direto', '2027-01-01T00:00:00Z',
             $5, 'assinatura digital 123', 'ativo', $6, $5, $5, $7, $8, $9)",
    )
    .bind::<SqlUuid, _>(id)
    .bind::<SqlUuid, _>(t.company.id.0)
    .bind::<SqlUuid, _>(t.tpl1)
    .bind::<Text, _>(CPF)
    .bind::<Timestamptz, _>(at(when))
    .bind::<Nullable<Text>, _>(confirmed.then(|| format!("pgcc-{id}")))
    .bind::<Text, _>(format!("{:064x}", id.as_u128()))
    .bind::<Text, _>(criacao)
    .bind::<Nullable<Timestamptz>, _>((!confirmed).then(|| at(when)))
    .execute(&mut db.conn())
    .unwrap();
    id
}

/// An idempotency key of the tenant naming request `id`.
fn idempotency_key(db: &TestDb, t: &Tenant, id: Uuid) {
    diesel::sql_query(
        "INSERT INTO chaves_idempotencia (empresa_id, chave, impressao, estado, recurso_id,
             dono, bloqueada_ate, criado_em)
         VALUES ($1, 'pedido-1', repeat('a', 64), 'em_andamento', $2, $2, now(), now())",
    )
    .bind::<SqlUuid, _>(t.company.id.0)
    .bind::<SqlUuid, _>(id)
    .execute(&mut db.conn())
    .unwrap();
}

fn sorted(mut ids: Vec<Uuid>) -> Vec<Uuid> {
    ids.sort();
    ids
}

fn event_ids(db: &TestDb) -> Vec<Uuid> {
    sorted(ev::table.select(ev::id).load(&mut db.conn()).unwrap())
}

fn delivery_ids(db: &TestDb) -> Vec<Uuid> {
    sorted(we::table.select(we::id).load(&mut db.conn()).unwrap())
}

fn attempts_of(db: &TestDb, id: Uuid) -> i64 {
    wt::table
        .filter(wt::entrega_id.eq(id))
        .count()
        .get_result(&mut db.conn())
        .unwrap()
}

/// (cpf, proof, hash, blanked at) of request `id`.
type Personal = (String, Option<String>, String, Option<DateTime<Utc>>);

fn personal(db: &TestDb, id: Uuid) -> Personal {
    sc::table
        .filter(sc::id.eq(id))
        .select((
            sc::cpf_titular,
            sc::prova_coleta,
            sc::hash,
            sc::dados_apagados_em,
        ))
        .first(&mut db.conn())
        .unwrap()
}

fn untouched(id: Uuid) -> Personal {
    (
        CPF.to_owned(),
        Some("assinatura digital 123".to_owned()),
        format!("{:064x}", id.as_u128()),
        None,
    )
}

/// Runs every kind until a call comes back short of `batch`, as the worker does.
fn purge_all(repo: &PgRetentionRepository, batch: u32) -> (u32, u32, u32) {
    let mut total = (0, 0, 0);
    loop {
        let d = repo
            .purge_webhook_deliveries(webhook_cutoff(), batch)
            .unwrap();
        let e = repo.purge_webhook_events(webhook_cutoff(), batch).unwrap();
        let b = repo
            .blank_cancelled_creations(cancelled_cutoff(), now(), batch)
            .unwrap();
        assert!(d <= batch && e <= batch && b <= batch, "{d} {e} {b}");
        total = (total.0 + d, total.1 + e, total.2 + b);
        if d < batch && e < batch && b < batch {
            return total;
        }
    }
}

#[test]
fn the_purge_deletes_exactly_the_old_final_deliveries_with_their_attempts_and_the_old_events_left_without_any(
) {
    let db = TestDb::new();
    let pool = pool(&db);
    let t = tenant(&pool, "ACME", "112223330001");
    let url = url_of(&pool, &t, "https://acme.example/a");
    let url_b = url_of(&pool, &t, "https://acme.example/b");
    // The tenant's use-case sync of 2026-05-01 wrote an event (no URL then): old, no delivery.
    let synced = event_ids(&db);
    assert_eq!(synced.len(), 1);
    let repo = PgRetentionRepository::new(pool);

    // Old event, every delivery final and old: all of it goes.
    let done = event(&db, &t, "2026-04-01T00:00:00Z");
    let delivered = delivery(&db, done, &url, "entregue", "2026-04-01T00:00:01Z", 2);
    let failed = delivery(&db, done, &url_b, "falhou", "2026-04-02T00:00:00Z", 1);
    // Old event with a pending delivery (its URL disabled for months): the pending one and the
    // event stay; its old delivered sibling goes.
    let waiting = event(&db, &t, "2026-04-01T00:00:00Z");
    let pending = delivery(&db, waiting, &url, "pendente", "2026-04-01T00:00:00Z", 3);
    let sibling = delivery(&db, waiting, &url_b, "entregue", "2026-04-01T00:00:00Z", 1);
    // Old event whose delivery was replayed and delivered recently: both stay.
    let replayed = event(&db, &t, "2026-04-01T00:00:00Z");
    let recent = delivery(&db, replayed, &url, "entregue", "2026-06-20T00:00:00Z", 2);
    // Old event whose delivery was cancelled (URL removed): both go.
    let cancelled = event(&db, &t, "2026-04-01T00:00:00Z");
    let cancelled_delivery = delivery(&db, cancelled, &url, "cancelada", "2026-04-03T00:00:00Z", 0);
    // Old event that never had a delivery (no URL then): goes.
    let lonely = lonely_event(&db, &t, "2026-03-01T00:00:00Z");
    // Event and delivery younger than the retention: stay. One just inside the cutoff too.
    let young = event(&db, &t, "2026-06-25T00:00:00Z");
    let young_delivery = delivery(&db, young, &url, "entregue", "2026-06-25T00:00:00Z", 1);
    let edge = event(&db, &t, "2026-05-31T00:00:00Z");
    let edge_delivery = delivery(&db, edge, &url, "falhou", "2026-05-31T00:00:00Z", 1);

    let (deliveries, events, blanked) = purge_all(&repo, 500);

    // done and cancelled went with their last deliveries; lonely and the sync's event (which
    // the outbox marked: no URL then) by the event purge.
    assert_eq!((deliveries, events, blanked), (4, 2, 0));
    assert_eq!(
        delivery_ids(&db),
        sorted(vec![pending, recent, young_delivery, edge_delivery])
    );
    assert_eq!(event_ids(&db), sorted(vec![waiting, replayed, young, edge]));
    for gone in [delivered, failed, sibling, cancelled_delivery] {
        assert_eq!(attempts_of(&db, gone), 0, "attempts of {gone}");
    }
    assert_eq!(attempts_of(&db, pending), 3);
    assert_eq!(attempts_of(&db, recent), 2);
    for gone in [done, cancelled, lonely, synced[0]] {
        assert!(!event_ids(&db).contains(&gone), "event {gone} purged");
    }
}

#[test]
fn the_purge_blanks_only_old_cancelled_creations_no_key_names_and_never_a_confirmed_request() {
    let db = TestDb::new();
    let pool = pool(&db);
    let t = tenant(&pool, "ACME", "112223330001");
    let repo = PgRetentionRepository::new(pool);
    let old_cancelled = request(&db, &t, "cancelada", "2026-06-01T00:00:00Z");
    let keyed = request(&db, &t, "cancelada", "2026-06-01T00:00:00Z");
    idempotency_key(&db, &t, keyed);
    let young_cancelled = request(&db, &t, "cancelada", "2026-06-28T00:00:00Z");
    let old_confirmed = request(&db, &t, "confirmada", "2026-01-01T00:00:00Z");
    let old_unfinished = request(&db, &t, "em_andamento", "2026-01-01T00:00:00Z");

    let (deliveries, events, blanked) = purge_all(&repo, 500);

    // The tenant's sync event (old, no delivery) goes too.
    assert_eq!((deliveries, events, blanked), (0, 1, 1));
    assert_eq!(
        personal(&db, old_cancelled),
        (
            "00000000000".to_owned(),
            None,
            format!("apagado:{old_cancelled}"),
            Some(now())
        )
    );
    for kept in [keyed, young_cancelled, old_confirmed, old_unfinished] {
        assert_eq!(personal(&db, kept), untouched(kept), "{kept}");
    }
    // What is not personal stays.
    let (template, criacao, status): (String, String, String) = sc::table
        .filter(sc::id.eq(old_cancelled))
        .select((sc::caso_de_uso_id_template, sc::criacao, sc::status))
        .first(&mut db.conn())
        .unwrap();
    assert_eq!(
        (template.as_str(), criacao.as_str(), status.as_str()),
        ("tpl-1", "cancelada", "ativo")
    );
    // A second run finds nothing more to do.
    assert_eq!(purge_all(&repo, 500), (0, 0, 0));
}

#[test]
fn the_database_refuses_marking_a_confirmed_request_blanked() {
    let db = TestDb::new();
    let pool = pool(&db);
    let t = tenant(&pool, "ACME", "112223330001");
    let confirmed = request(&db, &t, "confirmada", "2026-01-01T00:00:00Z");

    let result = diesel::update(sc::table.filter(sc::id.eq(confirmed)))
        .set(sc::dados_apagados_em.eq(Some(now())))
        .execute(&mut db.conn());

    let message = result.unwrap_err().to_string();
    assert!(
        message.contains("solicitacoes_consentimento_dados_apagados_check"),
        "{message}"
    );
}

#[test]
fn each_call_handles_at_most_its_batch_and_repeating_it_finishes_the_work() {
    let db = TestDb::new();
    let pool = pool(&db);
    let t = tenant(&pool, "ACME", "112223330001");
    let url = url_of(&pool, &t, "https://acme.example/a");
    let repo = PgRetentionRepository::new(pool);
    for _ in 0..5 {
        let e = event(&db, &t, "2026-04-01T00:00:00Z");
        delivery(&db, e, &url, "entregue", "2026-04-01T00:00:00Z", 1);
        request(&db, &t, "cancelada", "2026-06-01T00:00:00Z");
    }

    let counts: Vec<u32> = (0..4)
        .map(|_| repo.purge_webhook_deliveries(webhook_cutoff(), 2).unwrap())
        .collect();
    assert_eq!(counts, [2, 2, 1, 0]);
    // The five events went with their deliveries; the sync's event (no URL then) is left.
    assert_eq!(event_ids(&db).len(), 1);
    let counts: Vec<u32> = (0..3)
        .map(|_| repo.purge_webhook_events(webhook_cutoff(), 2).unwrap())
        .collect();
    assert_eq!(counts, [1, 0, 0]);
    let counts: Vec<u32> = (0..4)
        .map(|_| {
            repo.blank_cancelled_creations(cancelled_cutoff(), now(), 2)
                .unwrap()
        })
        .collect();
    assert_eq!(counts, [2, 2, 1, 0]);
    assert_eq!(delivery_ids(&db), Vec::<Uuid>::new());
    assert_eq!(event_ids(&db), Vec::<Uuid>::new());
}

#[test]
fn a_batch_of_zero_does_nothing() {
    let db = TestDb::new();
    let pool = pool(&db);
    let t = tenant(&pool, "ACME", "112223330001");
    let url = url_of(&pool, &t, "https://acme.example/a");
    let repo = PgRetentionRepository::new(pool);
    let e = event(&db, &t, "2026-04-01T00:00:00Z");
    let d = delivery(&db, e, &url, "entregue", "2026-04-01T00:00:00Z", 0);

    assert_eq!(
        repo.purge_webhook_deliveries(webhook_cutoff(), 0).unwrap(),
        0
    );
    assert_eq!(repo.purge_webhook_events(webhook_cutoff(), 0).unwrap(), 0);

    assert_eq!(delivery_ids(&db), vec![d]);
}

/// `n` old events of the tenant, each held by one delivery to `url` stuck `pendente` (made with
/// SQL, as a URL that never answers leaves them).
fn stuck(db: &TestDb, url: &WebhookUrl, n: i64) {
    diesel::sql_query(
        "WITH ev AS (
             INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em)
             SELECT gen_random_uuid(), $1, 'solicitacao.criada', '{}',
                    '2026-03-01T00:00:00Z'::timestamptz + g * interval '1 second'
             FROM generate_series(1, $3) g
             RETURNING id, criado_em
         )
         INSERT INTO webhook_entregas (id, evento_id, webhook_url_id, empresa_id, status,
             tentativas, proxima_tentativa_em, criado_em, atualizado_em)
         SELECT gen_random_uuid(), ev.id, $2, $1, 'pendente', 9, ev.criado_em, ev.criado_em,
                ev.criado_em
         FROM ev",
    )
    .bind::<SqlUuid, _>(url.company_id.0)
    .bind::<SqlUuid, _>(url.id)
    .bind::<diesel::sql_types::BigInt, _>(n)
    .execute(&mut db.conn())
    .unwrap();
}

#[test]
fn a_company_whose_old_events_are_held_by_stuck_deliveries_never_holds_back_anothers_purge() {
    let db = TestDb::new();
    let pool = pool(&db);
    let a = tenant(&pool, "ACME", "112223330001");
    let b = tenant(&pool, "Beta", "445556660001");
    let url_a = url_of(&pool, &a, "https://acme.example/a");
    let url_b = url_of(&pool, &b, "https://beta.example/b");
    // A: 5,000 old events, each held by a delivery stuck pending; they can go only once their
    // deliveries do. Oldest of all, so a purge walking events by age would read them first.
    stuck(&db, &url_a, 5_000);
    // B: an old delivered event and an old event no URL took.
    let delivered = event(&db, &b, "2026-04-01T00:00:00Z");
    delivery(
        &db,
        delivered,
        &url_b,
        "entregue",
        "2026-04-01T00:00:01Z",
        1,
    );
    let lonely = lonely_event(&db, &b, "2026-04-02T00:00:00Z");
    let before = event_ids(&db).len();
    let repo = PgRetentionRepository::new(pool);

    // A batch of 1 takes B's old delivery (with its event): A's stuck ones are not in the way.
    assert_eq!(
        repo.purge_webhook_deliveries(webhook_cutoff(), 1).unwrap(),
        1
    );
    // Three events can go: B's lonely one and both tenants' use-case sync events (no URL then).
    assert_eq!(repo.purge_webhook_events(webhook_cutoff(), 3).unwrap(), 3);

    let left = event_ids(&db);
    assert!(!left.contains(&delivered) && !left.contains(&lonely));
    assert_eq!(left.len(), before - 4);
    assert_eq!(purge_all(&repo, 100), (0, 0, 0), "nothing else can go");
    let pending: i64 = we::table
        .filter(we::empresa_id.eq(a.company.id.0))
        .filter(we::status.eq("pendente"))
        .count()
        .get_result(&mut db.conn())
        .unwrap();
    assert_eq!(pending, 5_000, "A's stuck deliveries stay");
}

/// An event shared by two URLs goes with the last of its deliveries, whichever purge call takes
/// it: with a batch of 1, the first call leaves the event (its other delivery is still there),
/// the second takes both.
#[test]
fn an_event_goes_with_its_last_delivery_not_before() {
    let db = TestDb::new();
    let pool = pool(&db);
    let t = tenant(&pool, "ACME", "112223330001");
    let url = url_of(&pool, &t, "https://acme.example/a");
    let url_b = url_of(&pool, &t, "https://acme.example/b");
    let shared = event(&db, &t, "2026-04-01T00:00:00Z");
    delivery(&db, shared, &url, "entregue", "2026-04-01T00:00:01Z", 1);
    delivery(&db, shared, &url_b, "falhou", "2026-04-02T00:00:00Z", 3);
    let repo = PgRetentionRepository::new(pool);

    assert_eq!(
        repo.purge_webhook_deliveries(webhook_cutoff(), 1).unwrap(),
        1
    );
    assert!(
        event_ids(&db).contains(&shared),
        "one delivery still holds it"
    );
    assert_eq!(
        repo.purge_webhook_deliveries(webhook_cutoff(), 1).unwrap(),
        1
    );
    assert!(!event_ids(&db).contains(&shared));
}
