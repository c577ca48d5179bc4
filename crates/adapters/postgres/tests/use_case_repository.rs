mod common;

use common::webhook::{deliveries_of, events_of, register, set_disabled, sorted, url_ids};
use common::{at, create_company, pool};
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use domain::{Company, EventType, PgccUseCase, SyncCounts, UseCase, WebhookEvent};
use ports::{UseCaseRepository, WebhookUrlRepository};
use postgres_adapter::models::CasoDeUsoRow;
use postgres_adapter::schema::casos_de_uso;
use postgres_adapter::{PgUseCaseRepository, PgWebhookUrlRepository};
use serde_json::Value;
use testkit::TestDb;
use uuid::Uuid;

const VINCULO_A: Uuid = Uuid::from_u128(0xa);
const VINCULO_B: Uuid = Uuid::from_u128(0xb);

fn item(vinculo_id: Uuid, template_id: &str, titulo: &str) -> PgccUseCase {
    PgccUseCase {
        link_id: vinculo_id,
        template_id: template_id.to_owned(),
        title: titulo.to_owned(),
        other_fields: "{}".to_owned(),
    }
}

/// Every row of the company, removed ones included, by template id.
fn rows_of(db: &TestDb, empresa: &Company) -> Vec<CasoDeUsoRow> {
    casos_de_uso::table
        .filter(casos_de_uso::empresa_id.eq(empresa.id.0))
        .order(casos_de_uso::pgcc_provider_template_id.asc())
        .select(CasoDeUsoRow::as_select())
        .load(&mut db.conn())
        .unwrap()
}

fn titles(use_cases: &[UseCase]) -> Vec<&str> {
    use_cases.iter().map(|u| u.title.as_str()).collect()
}

#[test]
fn a_first_sync_inserts_every_template_with_a_new_id_included_and_synced_now() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgUseCaseRepository::new(pool);
    let t1 = at("2026-05-01T12:00:00.123456Z");

    let counts = repo
        .apply_sync(
            acme.id,
            &[
                item(VINCULO_A, "tpl-1", "Crédito"),
                item(VINCULO_B, "tpl-2", "Abertura de conta"),
            ],
            t1,
        )
        .unwrap();

    assert_eq!(
        counts,
        SyncCounts {
            inserted: 2,
            updated: 0,
            removed: 0,
            total: 2
        }
    );
    let rows = rows_of(&db, &acme);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].pgcc_provider_template_id.as_deref(), Some("tpl-1"));
    assert_eq!(rows[0].titulo, "Crédito");
    assert_eq!(rows[0].vinculo_id, Some(VINCULO_A));
    assert_eq!(rows[1].vinculo_id, Some(VINCULO_B));
    for row in &rows {
        assert_eq!(row.id.get_version_num(), 4);
        assert_eq!(row.data_inclusao, t1);
        assert_eq!(row.data_ultima_sincronizacao_pgcc, Some(t1));
        assert_eq!(row.removido_em, None);
    }
}

#[test]
fn a_later_sync_updates_known_templates_inserts_new_ones_and_removes_missing_ones() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgUseCaseRepository::new(pool);
    let t1 = at("2026-05-01T12:00:00Z");
    let t2 = at("2026-05-02T12:00:00Z");
    repo.apply_sync(
        acme.id,
        &[
            item(VINCULO_A, "tpl-1", "Crédito"),
            item(VINCULO_A, "tpl-2", "Seguro"),
        ],
        t1,
    )
    .unwrap();
    let before = rows_of(&db, &acme);

    let counts = repo
        .apply_sync(
            acme.id,
            &[
                item(VINCULO_B, "tpl-1", "Crédito pessoal"),
                item(VINCULO_A, "tpl-3", "Abertura de conta"),
            ],
            t2,
        )
        .unwrap();

    assert_eq!(
        counts,
        SyncCounts {
            inserted: 1,
            updated: 1,
            removed: 1,
            total: 2
        }
    );
    let rows = rows_of(&db, &acme);
    assert_eq!(rows.len(), 3, "a removed use case keeps its row");
    let (tpl1, tpl2, tpl3) = (&rows[0], &rows[1], &rows[2]);
    assert_eq!(tpl1.id, before[0].id, "an updated use case keeps its id");
    assert_eq!(tpl1.titulo, "Crédito pessoal");
    assert_eq!(tpl1.vinculo_id, Some(VINCULO_B));
    assert_eq!(tpl1.data_inclusao, t1);
    assert_eq!(tpl1.data_ultima_sincronizacao_pgcc, Some(t2));
    assert_eq!(tpl1.removido_em, None);
    assert_eq!(tpl2.removido_em, Some(t2));
    assert_eq!(tpl2.data_ultima_sincronizacao_pgcc, Some(t1));
    assert_eq!(tpl3.data_inclusao, t2);
    assert_eq!(tpl3.removido_em, None);
    assert_eq!(
        titles(&repo.list(acme.id, None).unwrap()),
        ["Abertura de conta", "Crédito pessoal"]
    );
}

#[test]
fn a_removed_template_that_comes_back_is_restored_with_its_id_and_counted_as_updated() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgUseCaseRepository::new(pool);
    let t1 = at("2026-05-01T12:00:00Z");
    let t2 = at("2026-05-02T12:00:00Z");
    let t3 = at("2026-05-03T12:00:00Z");
    repo.apply_sync(acme.id, &[item(VINCULO_A, "tpl-1", "Crédito")], t1)
        .unwrap();
    let original_id = rows_of(&db, &acme)[0].id;

    let gone = repo.apply_sync(acme.id, &[], t2).unwrap();
    assert_eq!(
        gone,
        SyncCounts {
            inserted: 0,
            updated: 0,
            removed: 1,
            total: 0
        }
    );
    assert_eq!(repo.list(acme.id, None).unwrap(), vec![]);
    assert_eq!(repo.find_by_template(acme.id, "tpl-1").unwrap(), None);

    let back = repo
        .apply_sync(acme.id, &[item(VINCULO_A, "tpl-1", "Crédito")], t3)
        .unwrap();

    assert_eq!(
        back,
        SyncCounts {
            inserted: 0,
            updated: 1,
            removed: 0,
            total: 1
        }
    );
    let rows = rows_of(&db, &acme);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].id, original_id);
    assert_eq!(rows[0].removido_em, None);
    assert_eq!(rows[0].data_inclusao, t1);
    assert_eq!(rows[0].data_ultima_sincronizacao_pgcc, Some(t3));
}

#[test]
fn syncing_the_same_list_again_refreshes_every_row_and_removes_nothing() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgUseCaseRepository::new(pool);
    let items = [
        item(VINCULO_A, "tpl-1", "Crédito"),
        item(VINCULO_A, "tpl-2", "Seguro"),
    ];
    repo.apply_sync(acme.id, &items, at("2026-05-01T12:00:00Z"))
        .unwrap();

    let counts = repo
        .apply_sync(acme.id, &items, at("2026-05-02T12:00:00Z"))
        .unwrap();

    assert_eq!(
        counts,
        SyncCounts {
            inserted: 0,
            updated: 2,
            removed: 0,
            total: 2
        }
    );
}

#[test]
fn a_template_listed_twice_in_one_sync_is_stored_once() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgUseCaseRepository::new(pool);

    let counts = repo
        .apply_sync(
            acme.id,
            &[
                item(VINCULO_A, "tpl-1", "Crédito"),
                item(VINCULO_B, "tpl-1", "Crédito (cópia)"),
            ],
            at("2026-05-01T12:00:00Z"),
        )
        .unwrap();

    assert_eq!(
        counts,
        SyncCounts {
            inserted: 1,
            updated: 0,
            removed: 0,
            total: 1
        }
    );
    let rows = rows_of(&db, &acme);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].titulo, "Crédito");
}

#[test]
fn syncing_an_unknown_company_fails_and_stores_nothing() {
    let db = TestDb::new();
    let pool = pool(&db);
    let repo = PgUseCaseRepository::new(pool);
    let ghost = common::company("Fantasma", "112223330001");

    let result = repo.apply_sync(
        ghost.id,
        &[item(VINCULO_A, "tpl-1", "Crédito")],
        at("2026-05-01T12:00:00Z"),
    );

    assert!(
        matches!(result, Err(ports::RepoError::Unexpected(_))),
        "{result:?}"
    );
    let count: i64 = casos_de_uso::table
        .count()
        .get_result(&mut db.conn())
        .unwrap();
    assert_eq!(count, 0);
}

#[test]
fn listing_orders_by_title_then_id_and_filters_by_vinculo() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgUseCaseRepository::new(pool);
    repo.apply_sync(
        acme.id,
        &[
            item(VINCULO_A, "tpl-1", "Seguro"),
            item(VINCULO_B, "tpl-2", "Crédito"),
            item(VINCULO_A, "tpl-3", "Abertura de conta"),
            item(VINCULO_A, "tpl-4", "Crédito"),
        ],
        at("2026-05-01T12:00:00Z"),
    )
    .unwrap();

    let all = repo.list(acme.id, None).unwrap();
    let only_a = repo.list(acme.id, Some(VINCULO_A)).unwrap();
    let none = repo.list(acme.id, Some(Uuid::from_u128(0xc))).unwrap();

    assert_eq!(
        titles(&all),
        ["Abertura de conta", "Crédito", "Crédito", "Seguro"]
    );
    assert!(all[1].id < all[2].id, "equal titles are ordered by id");
    assert_eq!(titles(&only_a), ["Abertura de conta", "Crédito", "Seguro"]);
    assert!(only_a
        .iter()
        .all(|u| u.link_id == Some(VINCULO_A) && u.company_id == acme.id));
    assert_eq!(none, vec![]);
}

#[test]
fn two_companies_never_see_or_touch_each_others_use_cases() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let globex = create_company(&pool, "Globex", "998887770001");
    let repo = PgUseCaseRepository::new(pool);
    let t1 = at("2026-05-01T12:00:00Z");
    repo.apply_sync(acme.id, &[item(VINCULO_A, "tpl-1", "Crédito ACME")], t1)
        .unwrap();
    repo.apply_sync(globex.id, &[item(VINCULO_A, "tpl-1", "Crédito Globex")], t1)
        .unwrap();

    assert_eq!(titles(&repo.list(acme.id, None).unwrap()), ["Crédito ACME"]);
    assert_eq!(
        titles(&repo.list(globex.id, None).unwrap()),
        ["Crédito Globex"]
    );
    assert_eq!(
        repo.find_by_template(globex.id, "tpl-1")
            .unwrap()
            .map(|u| u.title),
        Some("Crédito Globex".to_owned())
    );

    let counts = repo
        .apply_sync(acme.id, &[], at("2026-05-02T12:00:00Z"))
        .unwrap();

    assert_eq!(counts.removed, 1);
    assert_eq!(
        titles(&repo.list(globex.id, None).unwrap()),
        ["Crédito Globex"]
    );
    assert_eq!(rows_of(&db, &globex)[0].removido_em, None);
    assert_eq!(repo.find_by_template(acme.id, "tpl-1").unwrap(), None);
}

#[test]
fn find_by_template_returns_the_companys_use_case() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgUseCaseRepository::new(pool);
    let t1 = at("2026-05-01T12:00:00Z");
    repo.apply_sync(acme.id, &[item(VINCULO_A, "tpl-1", "Crédito")], t1)
        .unwrap();
    let row = rows_of(&db, &acme).remove(0);

    let found = repo.find_by_template(acme.id, "tpl-1").unwrap();

    assert_eq!(
        found,
        Some(UseCase {
            id: row.id,
            company_id: acme.id,
            link_id: Some(VINCULO_A),
            title: "Crédito".to_owned(),
            pgcc_provider_template_id: Some("tpl-1".to_owned()),
            added_at: t1,
            last_synced_at: Some(t1),
        })
    );
    assert_eq!(repo.find_by_template(acme.id, "tpl-9").unwrap(), None);
}

// --- outbox ---

#[test]
fn each_sync_that_changes_something_writes_one_event_with_its_counts_to_the_companys_active_urls() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let globex = create_company(&pool, "Globex", "998887770001");
    let a1 = register(
        &pool,
        &acme,
        "https://acme.example/1",
        at("2026-01-01T00:00:00Z"),
    );
    let a2 = register(
        &pool,
        &acme,
        "https://acme.example/2",
        at("2026-01-02T00:00:00Z"),
    );
    let removed = register(
        &pool,
        &acme,
        "https://acme.example/r",
        at("2026-01-03T00:00:00Z"),
    );
    let disabled = register(
        &pool,
        &acme,
        "https://acme.example/d",
        at("2026-01-04T00:00:00Z"),
    );
    register(
        &pool,
        &globex,
        "https://globex.example/1",
        at("2026-01-01T00:00:00Z"),
    );
    PgWebhookUrlRepository::new(pool.clone())
        .soft_delete(acme.id, removed.id, at("2026-02-01T00:00:00Z"))
        .unwrap();
    set_disabled(&db, disabled.id, Some(at("2026-02-01T00:00:00Z")));
    let repo = PgUseCaseRepository::new(pool);
    let t1 = at("2026-05-01T12:00:00.5Z");
    let t2 = at("2026-05-02T12:00:00Z");
    let t3 = at("2026-05-03T12:00:00Z");

    let counts = repo
        .apply_sync(acme.id, &[item(VINCULO_A, "tpl-1", "Crédito")], t1)
        .unwrap();
    let unchanged = repo
        .apply_sync(acme.id, &[item(VINCULO_A, "tpl-1", "Crédito")], t2)
        .unwrap();
    let renamed = repo
        .apply_sync(acme.id, &[item(VINCULO_A, "tpl-1", "Crédito pessoal")], t3)
        .unwrap();

    let written = events_of(&db, "casos-de-uso.sincronizados");
    assert_eq!(
        written.len(),
        2,
        "one per sync that changed something, none for the other"
    );
    for (event, counts, when) in [(&written[0], counts, t1), (&written[1], renamed, t3)] {
        assert_eq!(event.empresa_id, acme.id.0);
        assert_eq!(event.criado_em, when);
        let expected = WebhookEvent {
            id: event.id,
            ..WebhookEvent::sync(acme.id, counts, when)
        };
        assert_eq!(
            event.payload,
            serde_json::to_string(&expected.payload()).unwrap()
        );
        let json: Value = serde_json::from_str(&event.payload).unwrap();
        assert_eq!(json["type"], EventType::UseCasesSynced.as_str());
        assert_eq!(json["data"]["total"], 1);
        let sent = deliveries_of(&db, event.id);
        assert_eq!(url_ids(&sent), sorted(vec![a1.id, a2.id]));
        for d in &sent {
            assert_eq!(
                (d.status.as_str(), d.proxima_tentativa_em),
                ("pendente", Some(when))
            );
        }
    }
    assert_eq!(counts.inserted, 1);
    assert_eq!(unchanged.updated, 1, "refreshed, if unchanged");
    assert_eq!(renamed.updated, 1);
}

#[test]
fn a_sync_that_removes_or_brings_back_a_template_writes_its_event() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgUseCaseRepository::new(pool);
    let both = [
        item(VINCULO_A, "tpl-1", "Crédito"),
        item(VINCULO_A, "tpl-2", "Seguro"),
    ];
    repo.apply_sync(acme.id, &both, at("2026-05-01T00:00:00Z"))
        .unwrap();
    repo.apply_sync(acme.id, &both[..1], at("2026-05-02T00:00:00Z"))
        .unwrap();
    repo.apply_sync(acme.id, &both, at("2026-05-03T00:00:00Z"))
        .unwrap();
    repo.apply_sync(acme.id, &both, at("2026-05-04T00:00:00Z"))
        .unwrap();

    let written = events_of(&db, "casos-de-uso.sincronizados");
    let when: Vec<_> = written.iter().map(|e| e.criado_em).collect();
    assert_eq!(
        when,
        [
            at("2026-05-01T00:00:00Z"),
            at("2026-05-02T00:00:00Z"),
            at("2026-05-03T00:00:00Z")
        ],
        "insert, removal and return each told; the last sync changed nothing"
    );
}

#[test]
fn a_sync_whose_event_cannot_be_written_changes_nothing() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgUseCaseRepository::new(pool);
    repo.apply_sync(
        acme.id,
        &[item(VINCULO_A, "tpl-1", "Crédito")],
        at("2026-05-01T00:00:00Z"),
    )
    .unwrap();
    let before = rows_of(&db, &acme);
    db.conn()
        .batch_execute(
            "ALTER TABLE webhook_eventos ADD CONSTRAINT recusa_tudo CHECK (false) NOT VALID",
        )
        .unwrap();

    let result = repo.apply_sync(
        acme.id,
        &[item(VINCULO_B, "tpl-2", "Seguro")],
        at("2026-05-02T00:00:00Z"),
    );

    assert!(result.is_err());
    assert_eq!(rows_of(&db, &acme), before);
}

/// (version, current fingerprint) of the company's use case of `template`.
fn version_of(db: &TestDb, empresa: &Company, template: &str) -> (i64, Option<String>) {
    casos_de_uso::table
        .filter(casos_de_uso::empresa_id.eq(empresa.id.0))
        .filter(casos_de_uso::pgcc_provider_template_id.eq(template))
        .select((casos_de_uso::versao, casos_de_uso::impressao))
        .first(&mut db.conn())
        .unwrap()
}

#[test]
fn a_changed_title_link_or_other_purpose_field_makes_the_next_version_and_the_same_fields_do_not() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let globex = create_company(&pool, "Globex", "998887770001");
    let repo = PgUseCaseRepository::new(pool);
    let (t1, t2, t3, t4, t5) = (
        at("2026-05-01T12:00:00Z"),
        at("2026-05-02T12:00:00Z"),
        at("2026-05-03T12:00:00Z"),
        at("2026-05-04T12:00:00Z"),
        at("2026-05-05T12:00:00Z"),
    );
    let mut with_purpose = item(VINCULO_B, "tpl-1", "Crédito pessoal");
    with_purpose.other_fields = r#"{"finalidade":"score"}"#.to_owned();

    repo.apply_sync(acme.id, &[item(VINCULO_A, "tpl-1", "Crédito")], t1)
        .unwrap();
    repo.apply_sync(acme.id, &[item(VINCULO_A, "tpl-1", "Crédito")], t2)
        .unwrap();
    repo.apply_sync(acme.id, &[item(VINCULO_A, "tpl-1", "Crédito pessoal")], t3)
        .unwrap();
    repo.apply_sync(acme.id, &[item(VINCULO_B, "tpl-1", "Crédito pessoal")], t4)
        .unwrap();
    repo.apply_sync(acme.id, &[with_purpose], t5).unwrap();

    let id = rows_of(&db, &acme)[0].id;
    let versions = repo.versions(acme.id, id).unwrap().unwrap();
    let summary: Vec<(i64, &str, Option<Uuid>, &str)> = versions
        .iter()
        .map(|v| {
            (
                v.version,
                v.title.as_str(),
                v.link_id,
                v.other_fields.as_str(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (1, "Crédito", Some(VINCULO_A), "{}"),
            (2, "Crédito pessoal", Some(VINCULO_A), "{}"),
            (3, "Crédito pessoal", Some(VINCULO_B), "{}"),
            (
                4,
                "Crédito pessoal",
                Some(VINCULO_B),
                r#"{"finalidade":"score"}"#
            ),
        ]
    );
    let dates: Vec<_> = versions
        .iter()
        .map(|v| (v.started_at, v.ended_at))
        .collect();
    assert_eq!(
        dates,
        [(t1, Some(t3)), (t3, Some(t4)), (t4, Some(t5)), (t5, None)]
    );
    assert_eq!(version_of(&db, &acme, "tpl-1").0, 4);
    assert_eq!(version_of(&db, &acme, "tpl-1").1, versions[3].fingerprint);
    // one event per new version, none for the sync that changed nothing
    let changes = events_of(&db, "casos-de-uso.alterado");
    let pairs: Vec<(i64, i64)> = changes
        .iter()
        .map(|e| {
            let json: Value = serde_json::from_str(&e.payload).unwrap();
            (
                json["data"]["versaoAnterior"].as_i64().unwrap(),
                json["data"]["versaoNova"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(pairs, [(1, 2), (2, 3), (3, 4)]);
    // another company's use case, or none, has no versions here
    assert_eq!(repo.versions(globex.id, id).unwrap(), None);
    assert_eq!(repo.versions(acme.id, Uuid::from_u128(404)).unwrap(), None);
}

#[test]
fn a_use_case_stored_before_versions_adopts_its_fingerprint_without_a_new_version() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = create_company(&pool, "ACME", "112223330001");
    let repo = PgUseCaseRepository::new(pool);
    repo.apply_sync(
        acme.id,
        &[
            item(VINCULO_A, "tpl-1", "Crédito"),
            item(VINCULO_A, "tpl-2", "Seguro"),
        ],
        at("2026-05-01T12:00:00Z"),
    )
    .unwrap();
    // as the migration leaves a row stored before it: version 1, no fingerprint
    db.conn()
        .batch_execute(
            "UPDATE casos_de_uso SET impressao = NULL; \
             UPDATE casos_de_uso_versoes SET impressao = NULL",
        )
        .unwrap();

    repo.apply_sync(
        acme.id,
        &[
            item(VINCULO_A, "tpl-1", "Crédito"),
            item(VINCULO_A, "tpl-2", "Seguro auto"),
        ],
        at("2026-05-02T12:00:00Z"),
    )
    .unwrap();

    let (same, fingerprint) = version_of(&db, &acme, "tpl-1");
    assert_eq!(same, 1, "unchanged fields adopt the fingerprint");
    assert_eq!(fingerprint.as_deref().map(str::len), Some(64));
    assert_eq!(
        version_of(&db, &acme, "tpl-2").0,
        2,
        "a changed title is a new version"
    );
    assert_eq!(events_of(&db, "casos-de-uso.alterado").len(), 1);
}
