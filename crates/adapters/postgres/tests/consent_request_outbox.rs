//! The outbox writes of [`PgConsentRequestRepository`]: creation, transition and expiry each
//! write exactly one event and one pending delivery per active URL of the company, in the
//! transaction of the change.

mod common;

use std::sync::Barrier;
use std::thread;

use chrono::{DateTime, TimeDelta, Utc};
use common::at;
use common::consent::{create, history, history_count, pool_of, stored, tenant, Spec, Tenant, CPF};
use common::webhook::{
    deliveries, deliveries_of, events, events_of, register, set_disabled, sorted, url_ids,
};
use diesel::connection::SimpleConnection;
use domain::{
    ConsentRequest, ConsentStatus, EventType, Reason, TransitionCause, WebhookEvent, WebhookUrl,
};
use ports::{ConsentRequestRepository, WebhookUrlRepository};
use postgres_adapter::models::WebhookEventoRow;
use postgres_adapter::{PgConsentRequestRepository, PgPool, PgWebhookUrlRepository};
use serde_json::Value;
use testkit::TestDb;
use uuid::Uuid;

use ConsentStatus::{Active, Expired, Pending, Refused, Revoked};

fn created() -> DateTime<Utc> {
    at("2026-05-01T12:00:00Z")
}

fn now() -> DateTime<Utc> {
    at("2026-06-01T12:00:00Z")
}

/// Two companies; ACME has two active URLs, a removed one and a disabled one; Globex one URL.
struct World {
    db: TestDb,
    pool: PgPool,
    acme: Tenant,
    globex: Tenant,
    acme_active: Vec<Uuid>,
    globex_active: Vec<Uuid>,
}

fn world(pool_size: u32) -> World {
    let db = TestDb::new();
    let pool = pool_of(&db, pool_size);
    let acme = tenant(&pool, "ACME", "112223330001");
    let globex = tenant(&pool, "Globex", "445556660001");
    let url = |t: &Tenant, path: &str, day: u32| -> WebhookUrl {
        register(
            &pool,
            &t.company,
            &format!("https://{path}"),
            at(&format!("2026-01-{day:02}T00:00:00Z")),
        )
    };
    let a1 = url(&acme, "acme.example/1", 1);
    let a2 = url(&acme, "acme.example/2", 2);
    let removed = url(&acme, "acme.example/removed", 3);
    let disabled = url(&acme, "acme.example/disabled", 4);
    let g1 = url(&globex, "globex.example/1", 1);
    assert!(PgWebhookUrlRepository::new(pool.clone())
        .soft_delete(acme.company.id, removed.id, at("2026-02-01T00:00:00Z"))
        .unwrap());
    set_disabled(&db, disabled.id, Some(at("2026-02-01T00:00:00Z")));
    World {
        acme_active: sorted(vec![a1.id, a2.id]),
        globex_active: vec![g1.id],
        db,
        pool,
        acme,
        globex,
    }
}

/// The consent events (not the synchronizations of the fixtures).
fn consent_events(db: &TestDb) -> Vec<WebhookEventoRow> {
    events(db)
        .into_iter()
        .filter(|e| e.tipo.starts_with("solicitacao."))
        .collect()
}

/// `event` is about `expected` (as it is after the change), of type `tipo` at `at`, its payload
/// is exactly the domain's serialization, and it went to exactly `urls`, pending and due at `at`.
fn assert_event(
    db: &TestDb,
    event: &WebhookEventoRow,
    tipo: EventType,
    expected: &ConsentRequest,
    at: DateTime<Utc>,
    urls: &[Uuid],
) {
    assert_eq!(event.tipo, tipo.as_str());
    assert_eq!(event.empresa_id, expected.company_id.0);
    assert_eq!(event.criado_em, at);
    // the domain's event of this type (a refusal or revocation with `motivo: null`)
    let mut domain_event = WebhookEvent::consent(tipo, expected, at);
    domain_event.id = event.id;
    assert_eq!(
        event.payload,
        serde_json::to_string(&domain_event.payload()).unwrap()
    );
    assert_payload_shape(&event.payload, tipo, at);
    let json: Value = serde_json::from_str(&event.payload).unwrap();
    assert_eq!(json["data"]["id"], expected.id.to_string());
    assert_eq!(json["data"]["status"], expected.status.as_str());

    let sent = deliveries_of(db, event.id);
    assert_eq!(url_ids(&sent), urls, "one delivery per active URL");
    for d in &sent {
        assert_eq!(d.empresa_id, expected.company_id.0);
        assert_eq!(d.status, "pendente");
        assert_eq!(d.tentativas, 0);
        assert_eq!(d.proxima_tentativa_em, Some(at), "due at once");
        assert_eq!(
            (d.criado_em, d.atualizado_em, d.entregue_em),
            (at, at, None)
        );
    }
}

/// `{"type", "timestamp", "data"}` and no personal data beyond the masked CPF.
fn assert_payload_shape(payload: &str, tipo: EventType, at: DateTime<Utc>) {
    let json: Value = serde_json::from_str(payload).unwrap();
    let mut keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["data", "timestamp", "type"]);
    assert_eq!(json["type"], tipo.as_str());
    let timestamp = DateTime::parse_from_rfc3339(json["timestamp"].as_str().unwrap()).unwrap();
    assert_eq!(timestamp, at);
    assert!(json["data"].is_object());
    assert!(!payload.contains(CPF), "the full CPF leaked: {payload}");
    assert!(
        !payload.contains("529.982.247-25"),
        "the full CPF leaked: {payload}"
    );
    assert!(
        !payload.contains("assinatura digital"),
        "the proof of consent leaked"
    );
    if json["data"].get("cpfTitular").is_some() {
        assert_eq!(json["data"]["cpfTitular"], "***.982.247-**");
    }
}

/// `request` after moving to `to` at `at`.
fn moved(request: &ConsentRequest, to: ConsentStatus, at: DateTime<Utc>) -> ConsentRequest {
    let mut request = request.clone();
    request.status = to;
    request.updated_at = at;
    request
}

// --- creation ---

#[test]
fn creating_a_request_writes_one_event_and_one_delivery_per_active_url_of_the_company() {
    let w = world(2);
    let repo = PgConsentRequestRepository::new(w.pool.clone());

    let request = w.acme.create(&repo, &Spec::new(created()).status(Pending));

    let written = consent_events(&w.db);
    assert_eq!(written.len(), 1, "{written:?}");
    assert_event(
        &w.db,
        &written[0],
        EventType::RequestCreated,
        &request,
        request.created_at,
        &w.acme_active,
    );
    assert_eq!(
        deliveries(&w.db).len(),
        2,
        "removed, disabled and Globex's URLs get none"
    );

    let theirs = w.globex.create(&repo, &Spec::new(created()));
    let written = consent_events(&w.db);
    assert_eq!(written.len(), 2);
    let event = written
        .iter()
        .find(|e| e.empresa_id == w.globex.company.id.0)
        .unwrap();
    assert_event(
        &w.db,
        event,
        EventType::RequestCreated,
        &theirs,
        created(),
        &w.globex_active,
    );
}

#[test]
fn a_company_without_webhook_urls_gets_its_event_and_no_delivery() {
    let db = TestDb::new();
    let pool = pool_of(&db, 2);
    let acme = tenant(&pool, "ACME", "112223330001");
    let repo = PgConsentRequestRepository::new(pool);

    let request = acme.create(&repo, &Spec::new(created()));

    let written = consent_events(&db);
    assert_eq!(written.len(), 1);
    assert_event(
        &db,
        &written[0],
        EventType::RequestCreated,
        &request,
        created(),
        &[],
    );
    assert_eq!(deliveries(&db), []);
}

/// The rows a confirmation wrote for `request`: (history entries, audit entries, status
/// checks scheduled, its `solicitacao.criada` event's `sem_entregas`).
fn confirmation_rows(db: &TestDb, request: &ConsentRequest) -> (i64, i64, i64, Vec<bool>) {
    #[derive(diesel::QueryableByName)]
    struct Rows {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        historico: i64,
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        auditoria: i64,
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        verificacoes: i64,
        #[diesel(sql_type = diesel::sql_types::Array<diesel::sql_types::Bool>)]
        sem_entregas: Vec<bool>,
    }
    use diesel::RunQueryDsl;
    let rows: Rows = diesel::sql_query(
        "SELECT (SELECT count(*) FROM solicitacoes_historico WHERE solicitacao_id = $1) AS historico,
                (SELECT count(*) FROM auditoria_entradas WHERE solicitacao_id = $1) AS auditoria,
                (SELECT count(*) FROM verificacoes_status WHERE solicitacao_id = $1) AS verificacoes,
                ARRAY(SELECT sem_entregas FROM webhook_eventos
                      WHERE tipo = 'solicitacao.criada' AND payload::jsonb -> 'data' ->> 'id' = $1::text)
                    AS sem_entregas",
    )
    .bind::<diesel::sql_types::Uuid, _>(request.id)
    .get_result(&mut db.conn())
    .unwrap();
    (
        rows.historico,
        rows.auditoria,
        rows.verificacoes,
        rows.sem_entregas,
    )
}

/// The `transacao` of `request`'s creation event and of its audit entries.
fn confirmation_transactions(db: &TestDb, request: &ConsentRequest) -> (i64, Vec<i64>) {
    #[derive(diesel::QueryableByName)]
    struct Transactions {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        evento: i64,
        #[diesel(sql_type = diesel::sql_types::Array<diesel::sql_types::BigInt>)]
        auditoria: Vec<i64>,
    }
    use diesel::RunQueryDsl;
    let found: Transactions = diesel::sql_query(
        "SELECT (SELECT transacao FROM webhook_eventos
                 WHERE tipo = 'solicitacao.criada' AND payload::jsonb -> 'data' ->> 'id' = $1::text)
                    AS evento,
                ARRAY(SELECT transacao FROM auditoria_entradas WHERE solicitacao_id = $1) AS auditoria",
    )
    .bind::<diesel::sql_types::Uuid, _>(request.id)
    .get_result(&mut db.conn())
    .unwrap();
    (found.evento, found.auditoria)
}

/// On Citus the confirmation is one call inside a transaction that first takes the
/// coordinator's transaction id and hands it to the call (the worker's own is not the log's);
/// on one node the call is alone and takes its own. Both write the same rows, and the event and
/// the audit entry carry the same transaction.
#[test]
fn a_confirmation_as_on_citus_writes_what_the_single_call_writes_at_one_transaction() {
    let w = world(2);
    let one_statement = PgConsentRequestRepository::new(w.pool.clone());
    let routed = PgConsentRequestRepository::new(w.pool.clone()).writing_as_on_citus();
    let loner = tenant(&w.pool, "Loner", "778889990001");

    let single = w
        .acme
        .create(&one_statement, &Spec::new(created()).status(Pending));
    let split = w
        .acme
        .create(&routed, &Spec::new(created()).status(Pending));
    let without_urls = loner.create(&routed, &Spec::new(created()).status(Active));

    assert_eq!(confirmation_rows(&w.db, &single), (1, 1, 1, vec![false]));
    assert_eq!(
        confirmation_rows(&w.db, &split),
        confirmation_rows(&w.db, &single),
        "the same history, audit entry, status check and event"
    );
    let event = consent_events(&w.db)
        .into_iter()
        .find(|e| e.payload.contains(&split.id.to_string()))
        .unwrap();
    assert_event(
        &w.db,
        &event,
        EventType::RequestCreated,
        &split,
        split.created_at,
        &w.acme_active,
    );
    assert_eq!(
        confirmation_rows(&w.db, &without_urls),
        (1, 1, 1, vec![true]),
        "no URL took the event: marked, no delivery"
    );
    assert_eq!(
        stored(&w.db, split.id).pgcc_id.as_deref(),
        Some(split.pgcc_id.as_str())
    );
    for request in [&single, &split] {
        let (evento, auditoria) = confirmation_transactions(&w.db, request);
        assert_eq!(
            auditoria,
            vec![evento],
            "the event and the audit entry in one transaction"
        );
    }

    // confirmed twice: the second writes nothing
    let again = routed
        .confirm_creation(&split, &split.pgcc_id, Utc::now())
        .unwrap();
    assert!(
        matches!(again, ports::Confirmation::AlreadyConfirmed { .. }),
        "{again:?}"
    );
    assert_eq!(confirmation_rows(&w.db, &split), (1, 1, 1, vec![false]));
}

// --- transition ---

#[test]
fn each_transition_writes_the_event_of_its_new_status_about_the_updated_request() {
    let w = world(2);
    let repo = PgConsentRequestRepository::new(w.pool.clone());
    let empresa = w.acme.company.id;
    for (from, to, tipo) in [
        (Pending, Active, EventType::RequestActivated),
        (Pending, Refused, EventType::RequestRefused),
        (Active, Revoked, EventType::RequestRevoked),
        (Active, Expired, EventType::RequestExpired),
    ] {
        let request = w.acme.create(&repo, &Spec::new(created()).status(from));
        let before: Vec<Uuid> = consent_events(&w.db).iter().map(|e| e.id).collect();
        let when = created() + TimeDelta::hours(1);

        assert!(repo
            .transition(
                empresa,
                request.id,
                from,
                to,
                TransitionCause::Pgcc,
                None,
                when
            )
            .unwrap());

        let new: Vec<_> = consent_events(&w.db)
            .into_iter()
            .filter(|e| !before.contains(&e.id))
            .collect();
        assert_eq!(new.len(), 1, "{from:?} -> {to:?}: {new:?}");
        assert_event(
            &w.db,
            &new[0],
            tipo,
            &moved(&request, to, when),
            when,
            &w.acme_active,
        );
    }
}

#[test]
fn the_reason_given_with_a_transition_is_kept_in_its_history_entry_and_its_event() {
    let w = world(2);
    let repo = PgConsentRequestRepository::new(w.pool.clone());
    let empresa = w.acme.company.id;
    let request = w.acme.create(&repo, &Spec::new(created()).status(Pending));
    let when = created() + TimeDelta::hours(1);
    let motivo = Reason::parse("criada por engano").unwrap();

    assert!(repo
        .transition(
            empresa,
            request.id,
            Pending,
            Revoked,
            TransitionCause::Company,
            Some(motivo.clone()),
            when,
        )
        .unwrap());

    let record = repo.get(empresa, request.id).unwrap().unwrap();
    let last = record.history.last().unwrap();
    assert_eq!(
        (last.from, last.to, last.cause, last.reason.clone()),
        (
            Some(Pending),
            Revoked,
            TransitionCause::Company,
            Some(motivo.clone())
        )
    );
    let written = consent_events(&w.db);
    let revoked = written.last().unwrap();
    assert_eq!(revoked.tipo, "solicitacao.revogada");
    let json: Value = serde_json::from_str(&revoked.payload).unwrap();
    assert_eq!(json["data"]["motivo"], "criada por engano");
    assert_eq!(json["data"]["status"], "revogado");
    let mut expected = WebhookEvent::consent(
        EventType::RequestRevoked,
        &moved(&request, Revoked, when),
        when,
    )
    .with_reason(Some(motivo));
    expected.id = revoked.id;
    assert_eq!(
        revoked.payload,
        serde_json::to_string(&expected.payload()).unwrap()
    );
}

#[test]
fn a_transition_that_loses_the_compare_and_set_writes_no_event() {
    let w = world(2);
    let repo = PgConsentRequestRepository::new(w.pool.clone());
    let request = w.acme.create(&repo, &Spec::new(created()).status(Pending));
    let when = created() + TimeDelta::hours(1);
    let empresa = w.acme.company.id;
    assert!(repo
        .transition(
            empresa,
            request.id,
            Pending,
            Active,
            TransitionCause::Pgcc,
            None,
            when
        )
        .unwrap());
    let events_before = events(&w.db);
    let deliveries_before = deliveries(&w.db);

    let stale = repo
        .transition(
            empresa,
            request.id,
            Pending,
            Refused,
            TransitionCause::Pgcc,
            None,
            when,
        )
        .unwrap();
    let by_other = repo
        .transition(
            w.globex.company.id,
            request.id,
            Active,
            Revoked,
            TransitionCause::Company,
            None,
            when,
        )
        .unwrap();
    let unknown = repo
        .transition(
            empresa,
            Uuid::new_v4(),
            Active,
            Revoked,
            TransitionCause::Company,
            None,
            when,
        )
        .unwrap();

    assert!(!stale && !by_other && !unknown);
    assert_eq!(events(&w.db), events_before);
    assert_eq!(deliveries(&w.db), deliveries_before);
}

#[test]
fn a_move_the_state_machine_does_not_make_is_refused_and_writes_nothing() {
    // ativo -> pendente: the owner's `consentimento_transicionar` refuses it (issue 36)
    let w = world(2);
    let repo = PgConsentRequestRepository::new(w.pool.clone());
    let request = w.acme.create(&repo, &Spec::new(created()).status(Active));
    let events_before = events(&w.db);

    let refused = repo.transition(
        w.acme.company.id,
        request.id,
        Active,
        Pending,
        TransitionCause::Pgcc,
        None,
        now(),
    );
    assert!(refused.is_err(), "{refused:?}");

    assert_eq!(history(&w.db, request.id).len(), 1);
    assert_eq!(events(&w.db), events_before);
}

#[test]
fn of_identical_transitions_racing_exactly_one_writes_its_event() {
    const RACERS: usize = 6;
    let w = world(RACERS as u32);
    let repo = PgConsentRequestRepository::new(w.pool.clone());
    let request = w.acme.create(&repo, &Spec::new(created()).status(Pending));
    let barrier = Barrier::new(RACERS);

    let wins = thread::scope(|s| {
        let racers: Vec<_> = (0..RACERS)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    repo.transition(
                        w.acme.company.id,
                        request.id,
                        Pending,
                        Refused,
                        TransitionCause::Pgcc,
                        None,
                        now(),
                    )
                    .unwrap()
                })
            })
            .collect();
        racers
            .into_iter()
            .map(|r| r.join().unwrap())
            .filter(|&won| won)
            .count()
    });

    assert_eq!(wins, 1);
    assert_eq!(events_of(&w.db, "solicitacao.recusada").len(), 1);
    assert_eq!(
        deliveries(&w.db).len(),
        2 * 2,
        "creation and refusal, to two URLs each"
    );
}

// --- expire_due ---

#[test]
fn expiry_writes_one_event_per_expired_request_about_it_expired() {
    let w = world(2);
    let repo = PgConsentRequestRepository::new(w.pool.clone());
    let spec = |status, expira_em| Spec::new(created()).status(status).expira_em(expira_em);
    let acme_due = w
        .acme
        .create(&repo, &spec(Active, now() - TimeDelta::days(1)));
    let globex_due = w.globex.create(&repo, &spec(Pending, now()));
    let live = w
        .acme
        .create(&repo, &spec(Active, now() + TimeDelta::days(1)));
    let refused = w
        .acme
        .create(&repo, &spec(Refused, now() - TimeDelta::days(1)));

    assert_eq!(repo.expire_due(now(), 100).unwrap(), 2);

    let expired = events_of(&w.db, "solicitacao.expirada");
    assert_eq!(expired.len(), 2, "{expired:?}");
    for (request, urls) in [(&acme_due, &w.acme_active), (&globex_due, &w.globex_active)] {
        let event = expired
            .iter()
            .find(|e| e.payload.contains(&request.id.to_string()))
            .unwrap();
        assert_event(
            &w.db,
            event,
            EventType::RequestExpired,
            &moved(request, Expired, now()),
            now(),
            urls,
        );
    }
    for request in [&live, &refused] {
        assert!(!expired
            .iter()
            .any(|e| e.payload.contains(&request.id.to_string())));
    }
    assert_eq!(repo.expire_due(now(), 100).unwrap(), 0);
    assert_eq!(events_of(&w.db, "solicitacao.expirada").len(), 2);
}

#[test]
fn two_expiry_workers_write_exactly_one_event_per_request() {
    const ROWS: usize = 60;
    let w = world(4);
    let repo = PgConsentRequestRepository::new(w.pool.clone());
    for i in 0..ROWS {
        let tenant = if i % 3 == 0 { &w.globex } else { &w.acme };
        tenant.create(
            &repo,
            &Spec::new(created()).expira_em(now() - TimeDelta::seconds(i as i64)),
        );
    }
    let barrier = Barrier::new(2);

    let total: u32 = thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    let mut total = 0;
                    loop {
                        let moved = repo.expire_due(now(), 7).unwrap();
                        if moved == 0 {
                            return total;
                        }
                        total += moved;
                    }
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });

    assert_eq!(total, ROWS as u32);
    let expired = events_of(&w.db, "solicitacao.expirada");
    assert_eq!(expired.len(), ROWS);
    let mut about: Vec<String> = expired
        .iter()
        .map(|e| {
            let json: Value = serde_json::from_str(&e.payload).unwrap();
            assert_eq!(json["data"]["status"], "expirado");
            json["data"]["id"].as_str().unwrap().to_owned()
        })
        .collect();
    about.sort();
    about.dedup();
    assert_eq!(about.len(), ROWS, "one event per request");
    let acme_rows = (0..ROWS).filter(|i| i % 3 != 0).count();
    let expiry_deliveries = w.db.scalar(
        "SELECT count(*) AS v FROM webhook_entregas d JOIN webhook_eventos e \
             ON e.id = d.evento_id WHERE e.tipo = 'solicitacao.expirada'",
    );
    assert_eq!(
        expiry_deliveries,
        (acme_rows * 2 + (ROWS - acme_rows)) as i64
    );
}

// --- atomicity ---

#[test]
fn when_the_event_cannot_be_written_the_change_is_not_made_either() {
    let w = world(2);
    let repo = PgConsentRequestRepository::new(w.pool.clone());
    let pending = w.acme.create(&repo, &Spec::new(created()).status(Pending));
    let due = w.acme.create(
        &repo,
        &Spec::new(created()).expira_em(now() - TimeDelta::days(1)),
    );
    let history_before = history_count(&w.db);
    w.db.conn()
        .batch_execute(
            "ALTER TABLE webhook_eventos ADD CONSTRAINT recusa_tudo CHECK (false) NOT VALID",
        )
        .unwrap();

    let new = w.acme.request(&Spec::new(created()));
    assert!(create(&repo, &new).is_err());
    assert!(repo
        .transition(
            w.acme.company.id,
            pending.id,
            Pending,
            Active,
            TransitionCause::Pgcc,
            None,
            now()
        )
        .is_err());
    assert!(repo.expire_due(now(), 10).is_err());

    // stored by its first phase, never confirmed: invisible, no history (the reconciler
    // settles it)
    assert_eq!(
        w.db.scalar(&format!(
            "SELECT count(*) AS v FROM solicitacoes_consentimento \
             WHERE id = '{}' AND criacao = 'confirmada'",
            new.id
        )),
        0
    );
    assert_eq!(stored(&w.db, pending.id).status, "pendente");
    assert_eq!(stored(&w.db, due.id).status, "ativo");
    assert_eq!(history_count(&w.db), history_before);
}
