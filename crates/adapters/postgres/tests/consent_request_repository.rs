mod common;

use common::consent::{
    active_request, create, hash_of, history, history_count, pending_request, stored, tenant, Spec,
    Tenant, CPF,
};
use common::{at, cnpj, create_company, now, pool};
use diesel::prelude::*;
use domain::{ConsentStatus, StatusChange, TransitionCause};
use ports::{ConsentRequestRepository, RepoError};
use postgres_adapter::schema::solicitacoes_consentimento;
use postgres_adapter::{PgConsentRequestRepository, PgPool};
use testkit::TestDb;
use uuid::Uuid;

/// How many requests are confirmed (the ones the API sees).
fn confirmed_count(db: &TestDb) -> i64 {
    solicitacoes_consentimento::table
        .filter(solicitacoes_consentimento::criacao.eq("confirmada"))
        .count()
        .get_result(&mut db.conn())
        .unwrap()
}

/// A company with the use cases `tpl-1` and `tpl-2`; returns it and `tpl-1`'s id.
fn company_with_use_case(pool: &PgPool) -> (domain::Company, Uuid) {
    let Tenant { company, tpl1, .. } = tenant(pool, "ACME", "112223330001");
    (company, tpl1)
}

#[test]
fn an_active_request_is_stored_with_every_field_flattened() {
    let db = TestDb::new();
    let pool = pool(&db);
    let (acme, caso_de_uso_id) = company_with_use_case(&pool);
    let request = active_request(&acme);

    create(&PgConsentRequestRepository::new(pool), &request).unwrap();

    let row = stored(&db, request.id);
    assert_eq!(row.empresa_id, acme.id.0);
    assert_eq!(row.caso_de_uso_id, caso_de_uso_id);
    assert_eq!(row.caso_de_uso_id_template, "tpl-1");
    assert_eq!(row.cpf_titular, CPF);
    assert_eq!(row.tipo_titular, "PessoaFisica");
    assert_eq!(row.modalidade_acesso, "Indireto");
    assert_eq!(
        row.cnpj_anuente.as_deref(),
        Some(cnpj("998887770001").as_str())
    );
    assert_eq!(row.data_expiracao_consentimento, at("2027-05-01T12:00:00Z"));
    assert_eq!(
        row.data_titular_respondeu_consentimento,
        Some(at("2026-05-01T11:59:59.654321Z"))
    );
    assert_eq!(row.prova_coleta.as_deref(), Some("assinatura digital 123"));
    assert_eq!(row.status, "ativo");
    assert_eq!(row.pgcc_id.as_deref(), Some("pgcc-0001"));
    assert_eq!(row.criado_em, at("2026-05-01T12:00:01Z"));
    assert_eq!(row.atualizado_em, at("2026-05-01T12:00:02Z"));
    assert_eq!(row.hash, request.hash);
    assert_eq!(row.try_into_domain().unwrap(), request);
}

#[test]
fn a_pending_request_is_stored_without_an_answer() {
    let db = TestDb::new();
    let pool = pool(&db);
    let (acme, _) = company_with_use_case(&pool);
    let request = pending_request(&acme);

    create(&PgConsentRequestRepository::new(pool), &request).unwrap();

    let row = stored(&db, request.id);
    assert_eq!(row.status, "pendente");
    assert_eq!(row.modalidade_acesso, "Direto");
    assert_eq!(row.cnpj_anuente, None);
    assert_eq!(row.data_titular_respondeu_consentimento, None);
    assert_eq!(row.prova_coleta, None);
    assert_eq!(row.try_into_domain().unwrap(), request);
}

#[test]
fn a_second_request_with_the_same_pgcc_id_for_the_company_is_refused() {
    let db = TestDb::new();
    let pool = pool(&db);
    let (acme, _) = company_with_use_case(&pool);
    let repo = PgConsentRequestRepository::new(pool);
    let first = active_request(&acme);
    create(&repo, &first).unwrap();
    let mut again = active_request(&acme);
    again.pgcc_id = first.pgcc_id.clone();

    let result = create(&repo, &again);

    assert!(
        matches!(result, Err(RepoError::Unexpected(_))),
        "{result:?}"
    );
    assert_eq!(confirmed_count(&db), 1);
    assert_eq!(
        stored(&db, again.id).pgcc_id,
        None,
        "the refused confirmation left the request unconfirmed"
    );
    assert_eq!(history_count(&db), 1, "the refused request left no history");
}

#[test]
fn a_failed_creation_names_the_operation_and_never_the_cpf() {
    let db = TestDb::new();
    let pool = pool(&db);
    let (acme, _) = company_with_use_case(&pool);
    let mut request = active_request(&acme);
    // not 32 hex digits: the table's check refuses the row
    request.hash_salt = "not-a-salt".to_owned();

    let error = PgConsentRequestRepository::new(pool)
        .begin_creation(&request, now())
        .unwrap_err();

    let text = match &error {
        RepoError::Unexpected(e) => format!("{e:#} {e:?}"),
        other => panic!("expected Unexpected, got {other:?}"),
    };
    assert!(
        text.contains("storing a consent request before the PGCC creates it"),
        "{text}"
    );
    assert!(!text.contains(CPF), "{text}");
    assert!(!text.contains("not-a-salt"), "{text}");
}

#[test]
fn the_status_column_refuses_a_value_outside_the_five_statuses() {
    let db = TestDb::new();
    let pool = pool(&db);
    let (acme, _) = company_with_use_case(&pool);
    let request = active_request(&acme);
    create(&PgConsentRequestRepository::new(pool), &request).unwrap();

    let result = diesel::update(
        solicitacoes_consentimento::table.filter(solicitacoes_consentimento::id.eq(request.id)),
    )
    .set(solicitacoes_consentimento::status.eq("aprovado"))
    .execute(&mut db.conn());

    assert!(result.is_err());
    assert_eq!(stored(&db, request.id).status, "ativo");
}

#[test]
fn creation_writes_the_first_history_entry_and_makes_the_request_due() {
    let db = TestDb::new();
    let pool = pool(&db);
    let (acme, _) = company_with_use_case(&pool);
    let repo = PgConsentRequestRepository::new(pool);
    let active = active_request(&acme);
    let pending = pending_request(&acme);
    let before = now();

    create(&repo, &active).unwrap();
    create(&repo, &pending).unwrap();

    for request in [&active, &pending] {
        let rows = history(&db, request.id);
        assert_eq!(rows.len(), 1, "{rows:?}");
        let first = &rows[0];
        assert_eq!(first.solicitacao_id, request.id);
        assert_eq!(first.de, None);
        assert_eq!(first.para, request.status.as_str());
        assert_eq!(first.em, request.created_at);
        assert_eq!(first.causa, "empresa");
        let due = common::consent::next_check(&db, request.id).expect("scheduled");
        assert!(
            due >= before && due <= now(),
            "{due} not the confirmation time"
        );
    }
    assert_eq!(history_count(&db), 2);
}

#[test]
fn a_second_request_with_the_same_hash_for_the_company_is_refused_without_history() {
    let db = TestDb::new();
    let pool = pool(&db);
    let (acme, _) = company_with_use_case(&pool);
    let repo = PgConsentRequestRepository::new(pool);
    let first = active_request(&acme);
    create(&repo, &first).unwrap();
    let mut again = pending_request(&acme);
    again.hash = first.hash.clone();

    let result = create(&repo, &again);

    assert!(
        matches!(result, Err(RepoError::Unexpected(_))),
        "{result:?}"
    );
    let count: i64 = solicitacoes_consentimento::table
        .count()
        .get_result(&mut db.conn())
        .unwrap();
    assert_eq!(count, 1);
    assert_eq!(history(&db, again.id), []);
    assert_eq!(history_count(&db), 1);
}

#[test]
fn two_companies_may_store_the_same_hash() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = tenant(&pool, "ACME", "112223330001");
    let globex = tenant(&pool, "Globex", "445556660001");
    let repo = PgConsentRequestRepository::new(pool);
    let ours = acme.request(&Spec::new(at("2026-05-01T12:00:00Z")));
    let mut theirs = globex.request(&Spec::new(at("2026-05-01T12:00:00Z")));
    theirs.hash = ours.hash.clone();

    create(&repo, &ours).unwrap();
    create(&repo, &theirs).unwrap();

    assert_eq!(stored(&db, theirs.id).hash, ours.hash);
}

#[test]
fn get_returns_the_request_and_its_history_in_order_even_at_the_same_instant() {
    let db = TestDb::new();
    let pool = pool(&db);
    let (acme, _) = company_with_use_case(&pool);
    let repo = PgConsentRequestRepository::new(pool);
    let request = pending_request(&acme);
    create(&repo, &request).unwrap();
    // Both changes at the creation instant: only the insertion order tells them apart.
    let t = request.created_at;
    let id = request.id;
    let (pendente, ativo, revogado) = (
        ConsentStatus::Pending,
        ConsentStatus::Active,
        ConsentStatus::Revoked,
    );
    assert!(repo
        .transition(acme.id, id, pendente, ativo, TransitionCause::Pgcc, None, t)
        .unwrap());
    assert!(repo
        .transition(
            acme.id,
            id,
            ativo,
            revogado,
            TransitionCause::Company,
            None,
            t
        )
        .unwrap());

    let record = repo.get(acme.id, id).unwrap().expect("the request");

    let mut expected = request.clone();
    expected.status = revogado;
    expected.updated_at = t;
    assert_eq!(record.request, expected);
    assert_eq!(
        record.history,
        [
            StatusChange {
                from: None,
                to: pendente,
                at: t,
                cause: TransitionCause::Company,
                reason: None,
            },
            StatusChange {
                from: Some(pendente),
                to: ativo,
                at: t,
                cause: TransitionCause::Pgcc,
                reason: None,
            },
            StatusChange {
                from: Some(ativo),
                to: revogado,
                at: t,
                cause: TransitionCause::Company,
                reason: None,
            },
        ]
    );
}

#[test]
fn get_orders_the_history_by_instant_before_insertion() {
    let db = TestDb::new();
    let pool = pool(&db);
    let (acme, _) = company_with_use_case(&pool);
    let repo = PgConsentRequestRepository::new(pool);
    let request = pending_request(&acme);
    create(&repo, &request).unwrap();
    // An entry inserted last but earlier in time (a clock behind another process's) sorts first.
    let earlier = request.created_at - chrono::TimeDelta::seconds(1);
    assert!(repo
        .transition(
            acme.id,
            request.id,
            ConsentStatus::Pending,
            ConsentStatus::Refused,
            TransitionCause::Pgcc,
            None,
            earlier,
        )
        .unwrap());

    let record = repo.get(acme.id, request.id).unwrap().unwrap();

    let order: Vec<_> = record.history.iter().map(|c| (c.from, c.at)).collect();
    assert_eq!(
        order,
        [
            (Some(ConsentStatus::Pending), earlier),
            (None, request.created_at)
        ]
    );
}

#[test]
fn get_of_another_companys_request_or_an_unknown_id_is_none() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = tenant(&pool, "ACME", "112223330001");
    let globex = create_company(&pool, "Globex", "445556660001");
    let repo = PgConsentRequestRepository::new(pool);
    let request = acme.create(&repo, &Spec::new(at("2026-05-01T12:00:00Z")));

    assert!(repo.get(acme.company.id, request.id).unwrap().is_some());
    assert_eq!(repo.get(globex.id, request.id).unwrap(), None);
    assert_eq!(repo.get(acme.company.id, Uuid::new_v4()).unwrap(), None);
}

#[test]
fn find_by_hash_finds_only_the_companys_own_request() {
    let db = TestDb::new();
    let pool = pool(&db);
    let acme = tenant(&pool, "ACME", "112223330001");
    let globex = tenant(&pool, "Globex", "445556660001");
    let repo = PgConsentRequestRepository::new(pool);
    let ours = acme.create(&repo, &Spec::new(at("2026-05-01T12:00:00Z")));
    let other = acme.create(&repo, &Spec::new(at("2026-05-01T12:00:01Z")));
    let theirs = globex.create(&repo, &Spec::new(at("2026-05-01T12:00:00Z")));

    assert_eq!(
        repo.find_by_hash(acme.company.id, &ours.hash).unwrap(),
        Some(ours.clone())
    );
    assert_eq!(
        repo.find_by_hash(acme.company.id, &other.hash).unwrap(),
        Some(other)
    );
    assert_eq!(
        repo.find_by_hash(acme.company.id, &theirs.hash).unwrap(),
        None
    );
    assert_eq!(
        repo.find_by_hash(globex.company.id, &ours.hash).unwrap(),
        None
    );
    assert_eq!(
        repo.find_by_hash(acme.company.id, &hash_of(Uuid::new_v4()))
            .unwrap(),
        None
    );
}
