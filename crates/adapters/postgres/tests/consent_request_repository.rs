mod common;

use common::{at, cnpj, create_company, pool};
use diesel::prelude::*;
use domain::{
    ActiveAnswer, Company, ConsentRequest, ConsentStatus, Cpf, CreationVariant, ModalidadeAcesso,
    PgccUseCase, TipoTitular, ValidConsentRequest,
};
use ports::{ConsentRequestRepository, RepoError, UseCaseRepository};
use postgres_adapter::models::SolicitacaoConsentimentoRow;
use postgres_adapter::schema::solicitacoes_consentimento;
use postgres_adapter::{PgConsentRequestRepository, PgPool, PgUseCaseRepository};
use testkit::TestDb;
use uuid::Uuid;

const CPF: &str = "52998224725";

/// A company with one synchronized use case (`tpl-1`); returns it and the use case's id.
fn company_with_use_case(pool: &PgPool) -> (Company, Uuid) {
    let acme = create_company(pool, "ACME", "112223330001");
    let use_cases = PgUseCaseRepository::new(pool.clone());
    use_cases
        .apply_sync(
            acme.id,
            &[PgccUseCase {
                vinculo_id: Uuid::from_u128(0xa),
                template_id: "tpl-1".to_owned(),
                titulo: "Crédito".to_owned(),
            }],
            at("2026-05-01T12:00:00Z"),
        )
        .unwrap();
    let id = use_cases
        .find_by_template(acme.id, "tpl-1")
        .unwrap()
        .unwrap()
        .id;
    (acme, id)
}

fn active_request(empresa: &Company, caso_de_uso_id: Uuid) -> ConsentRequest {
    ConsentRequest {
        id: Uuid::new_v4(),
        empresa_id: empresa.id,
        caso_de_uso_id,
        dados: ValidConsentRequest {
            variant: CreationVariant::Active,
            caso_de_uso_id_template: "tpl-1".to_owned(),
            cpf_titular: Cpf::parse("529.982.247-25").unwrap(),
            modalidade_acesso: ModalidadeAcesso::Indireto,
            tipo_titular: TipoTitular::PessoaFisica,
            data_expiracao_consentimento: at("2027-05-01T12:00:00Z"),
            resposta: Some(ActiveAnswer {
                data_titular_respondeu_consentimento: at("2026-05-01T11:59:59.654321Z"),
                prova_coleta: "assinatura digital 123".to_owned(),
            }),
            cnpj_anuente: Some(cnpj("998887770001")),
        },
        status: ConsentStatus::Ativo,
        pgcc_id: "pgcc-0001".to_owned(),
        criado_em: at("2026-05-01T12:00:01Z"),
        atualizado_em: at("2026-05-01T12:00:02Z"),
    }
}

fn pending_request(empresa: &Company, caso_de_uso_id: Uuid) -> ConsentRequest {
    let mut request = active_request(empresa, caso_de_uso_id);
    request.dados.variant = CreationVariant::Pending;
    request.dados.resposta = None;
    request.dados.modalidade_acesso = ModalidadeAcesso::Direto;
    request.dados.cnpj_anuente = None;
    request.status = ConsentStatus::Pendente;
    request.pgcc_id = "pgcc-0002".to_owned();
    request
}

fn stored(db: &TestDb, id: Uuid) -> SolicitacaoConsentimentoRow {
    solicitacoes_consentimento::table
        .find(id)
        .select(SolicitacaoConsentimentoRow::as_select())
        .first(&mut db.conn())
        .unwrap()
}

#[test]
fn an_active_request_is_stored_with_every_field_flattened() {
    let db = TestDb::new();
    let pool = pool(&db);
    let (acme, caso_de_uso_id) = company_with_use_case(&pool);
    let request = active_request(&acme, caso_de_uso_id);

    PgConsentRequestRepository::new(pool)
        .insert(&request)
        .unwrap();

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
    assert_eq!(row.pgcc_id, "pgcc-0001");
    assert_eq!(row.criado_em, at("2026-05-01T12:00:01Z"));
    assert_eq!(row.atualizado_em, at("2026-05-01T12:00:02Z"));
    assert_eq!(row.try_into_domain().unwrap(), request);
}

#[test]
fn a_pending_request_is_stored_without_an_answer() {
    let db = TestDb::new();
    let pool = pool(&db);
    let (acme, caso_de_uso_id) = company_with_use_case(&pool);
    let request = pending_request(&acme, caso_de_uso_id);

    PgConsentRequestRepository::new(pool)
        .insert(&request)
        .unwrap();

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
    let (acme, caso_de_uso_id) = company_with_use_case(&pool);
    let repo = PgConsentRequestRepository::new(pool);
    let first = active_request(&acme, caso_de_uso_id);
    repo.insert(&first).unwrap();
    let mut again = active_request(&acme, caso_de_uso_id);
    again.pgcc_id = first.pgcc_id.clone();

    let result = repo.insert(&again);

    assert!(
        matches!(result, Err(RepoError::Unexpected(_))),
        "{result:?}"
    );
    let count: i64 = solicitacoes_consentimento::table
        .count()
        .get_result(&mut db.conn())
        .unwrap();
    assert_eq!(count, 1);
}

#[test]
fn a_failed_insert_names_the_operation_and_never_the_cpf() {
    let db = TestDb::new();
    let pool = pool(&db);
    let (acme, _) = company_with_use_case(&pool);
    let unknown_use_case = Uuid::new_v4();

    let error = PgConsentRequestRepository::new(pool)
        .insert(&active_request(&acme, unknown_use_case))
        .unwrap_err();

    let text = match &error {
        RepoError::Unexpected(e) => format!("{e:#} {e:?}"),
        other => panic!("expected Unexpected, got {other:?}"),
    };
    assert!(text.contains("inserting a consent request"), "{text}");
    assert!(!text.contains(CPF), "{text}");
    assert!(!text.contains(&unknown_use_case.to_string()), "{text}");
}

#[test]
fn the_status_column_refuses_a_value_outside_the_five_statuses() {
    let db = TestDb::new();
    let pool = pool(&db);
    let (acme, caso_de_uso_id) = company_with_use_case(&pool);
    let request = active_request(&acme, caso_de_uso_id);
    PgConsentRequestRepository::new(pool)
        .insert(&request)
        .unwrap();

    let result = diesel::update(solicitacoes_consentimento::table.find(request.id))
        .set(solicitacoes_consentimento::status.eq("aprovado"))
        .execute(&mut db.conn());

    assert!(result.is_err());
    assert_eq!(stored(&db, request.id).status, "ativo");
}
