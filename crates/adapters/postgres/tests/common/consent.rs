//! Consent request fixtures: a company with two synchronized use cases (`tpl-1`, `tpl-2`),
//! requests in any status, and direct reads of the stored rows.

use std::time::Duration;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::{
    AccessMode, ActiveAnswer, Company, ConsentRequest, ConsentStatus, Cpf, CreationVariant,
    PgccUseCase, SubjectType, ValidConsentRequest,
};
use ports::{
    Confirmation, ConsentRequestRepository, CreationStart, RepoError, StatusCheckSchedule,
    UseCaseRepository,
};
use postgres_adapter::models::{SolicitacaoConsentimentoRow, SolicitacaoHistoricoRow};
use postgres_adapter::schema::{solicitacoes_consentimento, solicitacoes_historico};
use postgres_adapter::{
    connect, PgConsentRequestRepository, PgPool, PgStatusCheckSchedule, PgUseCaseRepository,
    PoolSettings,
};
use testkit::TestDb;
use uuid::Uuid;

use super::{at, cnpj, create_company};

/// The subject of most requests, unmasked.
pub const CPF: &str = "52998224725";
/// Another valid CPF, unmasked.
pub const OTHER_CPF: &str = "11144477735";

pub fn cpf(digits: &str) -> Cpf {
    Cpf::parse(digits).expect("a valid CPF")
}

/// A pool of `size` connections on `db`, for tests that run repository calls in parallel.
pub fn pool_of(db: &TestDb, size: u32) -> PgPool {
    connect(
        db.url(),
        &PoolSettings {
            max_size: size,
            checkout_timeout: Duration::from_secs(30),
            ..PoolSettings::default()
        },
    )
    .expect("build the pool")
}

/// The PGCC link of both use cases of a [`tenant`].
pub const LINK: Uuid = Uuid::from_u128(0xa);

/// A company with the use cases `tpl-1` and `tpl-2`.
pub struct Tenant {
    pub company: Company,
    pub tpl1: Uuid,
    pub tpl2: Uuid,
}

/// Creates a company (`cnpj_base`: 12 digits) and synchronizes its two use cases.
pub fn tenant(pool: &PgPool, nome: &str, cnpj_base: &str) -> Tenant {
    let company = create_company(pool, nome, cnpj_base);
    let use_cases = PgUseCaseRepository::new(pool.clone());
    use_cases
        .apply_sync(
            company.id,
            &[
                PgccUseCase {
                    link_id: LINK,
                    template_id: "tpl-1".to_owned(),
                    title: "Crédito".to_owned(),
                    other_fields: "{}".to_owned(),
                },
                PgccUseCase {
                    link_id: LINK,
                    template_id: "tpl-2".to_owned(),
                    title: "Seguro".to_owned(),
                    other_fields: "{}".to_owned(),
                },
            ],
            at("2026-05-01T12:00:00Z"),
        )
        .unwrap();
    let id = |template| {
        use_cases
            .find_by_template(company.id, template)
            .unwrap()
            .unwrap()
            .id
    };
    let (tpl1, tpl2) = (id("tpl-1"), id("tpl-2"));
    Tenant {
        company,
        tpl1,
        tpl2,
    }
}

/// A hash unique to the request (64 lower-case hex digits, like a SHA-256).
pub fn hash_of(id: Uuid) -> String {
    format!("{:064x}", id.as_u128())
}

/// An active request of `tpl-1` with every optional field set; `pgcc_id` is `pgcc-0001`.
pub fn active_request(empresa: &Company) -> ConsentRequest {
    let id = Uuid::new_v4();
    ConsentRequest {
        id,
        company_id: empresa.id,
        content: ValidConsentRequest {
            variant: CreationVariant::Active,
            template_id: "tpl-1".to_owned(),
            subject_cpf: Cpf::parse("529.982.247-25").unwrap(),
            access_mode: AccessMode::Indirect,
            subject_type: SubjectType::NaturalPerson,
            consent_expires_at: at("2027-05-01T12:00:00Z"),
            answer: Some(ActiveAnswer {
                subject_answered_at: at("2026-05-01T11:59:59.654321Z"),
                proof_of_collection: "assinatura digital 123".to_owned(),
            }),
            consenting_cnpj: Some(cnpj("998887770001")),
        },
        status: ConsentStatus::Active,
        pgcc_id: "pgcc-0001".to_owned(),
        hash: hash_of(id),
        hash_salt: "00112233445566778899aabbccddeeff".into(),
        created_at: at("2026-05-01T12:00:01Z"),
        updated_at: at("2026-05-01T12:00:02Z"),
        use_case_version: Some(1),
    }
}

/// A pending request of `tpl-1` (no answer, `Direto`); `pgcc_id` is `pgcc-0002`.
pub fn pending_request(empresa: &Company) -> ConsentRequest {
    let mut request = active_request(empresa);
    request.content.variant = CreationVariant::Pending;
    request.content.answer = None;
    request.content.access_mode = AccessMode::Direct;
    request.content.consenting_cnpj = None;
    request.status = ConsentStatus::Pending;
    request.pgcc_id = "pgcc-0002".to_owned();
    request
}

/// What varies between the requests of a test; everything else is `active_request`'s.
#[derive(Debug, Clone)]
pub struct Spec {
    pub template: &'static str,
    pub cpf: &'static str,
    pub status: ConsentStatus,
    pub criado_em: DateTime<Utc>,
    pub expira_em: DateTime<Utc>,
}

impl Spec {
    /// An `ativo` request of `tpl-1` for [`CPF`], created at `criado_em`, expiring in 2027.
    pub fn new(criado_em: DateTime<Utc>) -> Spec {
        Spec {
            template: "tpl-1",
            cpf: CPF,
            status: ConsentStatus::Active,
            criado_em,
            expira_em: at("2027-05-01T12:00:00Z"),
        }
    }

    pub fn template(mut self, template: &'static str) -> Spec {
        self.template = template;
        self
    }

    pub fn cpf(mut self, cpf: &'static str) -> Spec {
        self.cpf = cpf;
        self
    }

    pub fn status(mut self, status: ConsentStatus) -> Spec {
        self.status = status;
        self
    }

    pub fn expira_em(mut self, expira_em: DateTime<Utc>) -> Spec {
        self.expira_em = expira_em;
        self
    }
}

impl Tenant {
    pub fn use_case(&self, template: &str) -> Uuid {
        match template {
            "tpl-1" => self.tpl1,
            "tpl-2" => self.tpl2,
            other => panic!("no use case {other}"),
        }
    }

    /// The request `spec` describes, with its own id, `pgcc_id` and hash. Pending and refused
    /// requests carry no answer.
    pub fn request(&self, spec: &Spec) -> ConsentRequest {
        let mut request = match spec.status {
            ConsentStatus::Pending | ConsentStatus::Refused => pending_request(&self.company),
            _ => active_request(&self.company),
        };
        request.content.template_id = spec.template.to_owned();
        request.content.subject_cpf = cpf(spec.cpf);
        request.content.consent_expires_at = spec.expira_em;
        request.status = spec.status;
        request.pgcc_id = format!("pgcc-{}", request.id.simple());
        request.created_at = spec.criado_em;
        request.updated_at = spec.criado_em;
        request
    }

    /// Creates the request `spec` describes (see [`create`]) and returns it.
    pub fn create(&self, repo: &PgConsentRequestRepository, spec: &Spec) -> ConsentRequest {
        let request = self.request(spec);
        create(repo, &request).expect("create the request");
        request
    }
}

/// Stores `request` the way production creates one: `begin_creation` (attempted at its
/// creation instant), then `confirm_creation` under its `pgcc_id`, due for a status check now.
/// A request in a status no creation makes (refused, expired, revoked: the owner's functions
/// hold the state machine, issue 36) is created pending and moved there by the PGCC's word at
/// its creation instant, as production would: tests use this to set up requests in every
/// status. A begin, a confirmation or a move that does not go through is an error.
pub fn create(
    repo: &PgConsentRequestRepository,
    request: &ConsentRequest,
) -> Result<(), RepoError> {
    let created = if request.status.is_terminal() {
        let mut pending = request.clone();
        pending.status = ConsentStatus::Pending;
        pending
    } else {
        request.clone()
    };
    match repo.begin_creation(&created, created.created_at)? {
        CreationStart::Started { .. } => {}
        start => {
            return Err(RepoError::Unexpected(anyhow::anyhow!(
                "the creation did not start: {start:?}"
            )))
        }
    }
    match repo.confirm_creation(&created, &created.pgcc_id, Utc::now())? {
        Confirmation::Confirmed => {}
        other => {
            return Err(RepoError::Unexpected(anyhow::anyhow!(
                "the creation was not confirmed: {other:?}"
            )))
        }
    }
    if created.status != request.status {
        let moved = repo.transition(
            request.company_id,
            request.id,
            ConsentStatus::Pending,
            request.status,
            domain::TransitionCause::Pgcc,
            None,
            request.updated_at,
        )?;
        if !moved {
            return Err(RepoError::Unexpected(anyhow::anyhow!(
                "the request was not moved to {}",
                request.status
            )));
        }
    }
    Ok(())
}

/// The stored row of request `id`.
pub fn stored(db: &TestDb, id: Uuid) -> SolicitacaoConsentimentoRow {
    solicitacoes_consentimento::table
        .filter(solicitacoes_consentimento::id.eq(id))
        .select(SolicitacaoConsentimentoRow::as_select())
        .first(&mut db.conn())
        .unwrap()
}

/// The stored history of request `id`, in order.
pub fn history(db: &TestDb, id: Uuid) -> Vec<SolicitacaoHistoricoRow> {
    solicitacoes_historico::table
        .filter(solicitacoes_historico::solicitacao_id.eq(id))
        .order((solicitacoes_historico::em, solicitacoes_historico::id))
        .select(SolicitacaoHistoricoRow::as_select())
        .load(&mut db.conn())
        .unwrap()
}

/// How many history rows exist, of every request.
pub fn history_count(db: &TestDb) -> i64 {
    solicitacoes_historico::table
        .count()
        .get_result(&mut db.conn())
        .unwrap()
}

/// Sets when request `id` is next due for a status check (its row of `verificacoes_status`).
pub fn set_next_check(db: &TestDb, id: Uuid, when: DateTime<Utc>) {
    diesel::sql_query("UPDATE verificacoes_status SET proxima_em = $1 WHERE solicitacao_id = $2")
        .bind::<diesel::sql_types::Timestamptz, _>(when)
        .bind::<diesel::sql_types::Uuid, _>(id)
        .execute(&mut db.conn())
        .unwrap();
}

/// Sets every scheduled status check due at `when`.
pub fn set_every_next_check(db: &TestDb, when: DateTime<Utc>) {
    diesel::sql_query("UPDATE verificacoes_status SET proxima_em = $1")
        .bind::<diesel::sql_types::Timestamptz, _>(when)
        .execute(&mut db.conn())
        .unwrap();
}

#[derive(QueryableByName)]
struct NextCheck {
    #[diesel(sql_type = diesel::sql_types::Timestamptz)]
    proxima_em: DateTime<Utc>,
}

/// When request `id`'s next status check is; `None` when none is scheduled by its own row (none
/// at all, or its company's sweep checks it: see [`sweep_lane`]).
pub fn next_check(db: &TestDb, id: Uuid) -> Option<DateTime<Utc>> {
    diesel::sql_query(
        "SELECT proxima_em FROM verificacoes_status
         WHERE solicitacao_id = $1 AND proxima_em <> 'infinity'",
    )
    .bind::<diesel::sql_types::Uuid, _>(id)
    .get_result::<NextCheck>(&mut db.conn())
    .optional()
    .unwrap()
    .map(|r| r.proxima_em)
}

#[derive(QueryableByName)]
struct SweepLane {
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    varredura: Option<String>,
}

/// The sweep lane request `id` is checked by (`pendente` or `ativo`); `None`: by its own row, or
/// not at all.
pub fn sweep_lane(db: &TestDb, id: Uuid) -> Option<String> {
    diesel::sql_query("SELECT varredura FROM verificacoes_status WHERE solicitacao_id = $1")
        .bind::<diesel::sql_types::Uuid, _>(id)
        .get_result::<SweepLane>(&mut db.conn())
        .optional()
        .unwrap()
        .and_then(|r| r.varredura)
}

/// Up to `limit` due status checks of every company (in the repository's company order), each
/// company's claimed as the worker does.
pub fn claim_checks(
    schedule: &PgStatusCheckSchedule,
    limit: u32,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
) -> Vec<ports::StatusCheckItem> {
    let mut claimed = Vec::new();
    for due in schedule
        .companies_with_due_status_checks(now, None, 1_000)
        .unwrap()
    {
        let room = limit.saturating_sub(claimed.len() as u32);
        if room == 0 {
            break;
        }
        claimed.extend(
            schedule
                .claim_status_checks(due, room, now, lease_until)
                .unwrap(),
        );
    }
    claimed
}
