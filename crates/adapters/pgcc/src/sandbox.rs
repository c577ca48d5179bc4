//! The sandbox's PGCC: a [`PgccGateway`] simulated inside the service for the sandbox companies
//! (keys `cak_test_`, docs/api.md "Sandbox"), so a company can build and test its integration
//! before it is accredited with the PGCC. Nothing here goes over the network.
//!
//! It is the simulator's own rules, used as a library: the creation body is the one the HTTP
//! gateway sends, read and validated as `pgcc-sim` reads it ([`pgcc_sim::NovaSolicitacao`]); the
//! use cases are a `pgcc-sim` seed company; a request's status moves by [`pgcc_sim::Move`] and is
//! read at a time (expiry included) by [`pgcc_sim::lido_em`].
//!
//! What it holds: nothing. A request's whole story (what its subject does and when, from the
//! magic CPF; its variant, creation and expiry instants) is written into the PGCC id it mints, so
//! every replica and worker answers the same about it, memory does not grow with the sandbox's
//! traffic, and the data goes when the sandbox purge deletes the rows (docs/decisions.md,
//! "The sandbox").

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use domain::{Cnpj, ConsentStatus, PgccUseCase};
use pgcc_sim::SolicitacaoStatus;
use pgcc_sim::{lido_em, Move, NovaSolicitacao, SeedCasoDeUso, SeedEmpresa, SeedVinculo};
use ports::{PgccConsentCreated, PgccConsentStatus, PgccError, PgccGateway, PgccNewConsent};
use uuid::Uuid;

use crate::gateway::creation_body;

pub use ports::SANDBOX_PGCC_ID_PREFIX;

/// The sandbox's one link (vínculo): every sandbox company holds the same use cases under it.
pub const SANDBOX_LINK_ID: Uuid = Uuid::from_u128(0x5a4d_b0c5_0000_4000_8000_0000_0000_0001);

/// The fixed use cases of every sandbox company (template id, title), as docs/api.md lists them.
pub const SANDBOX_USE_CASES: [(&str, &str); 3] = [
    ("sandbox-abertura-de-conta", "Abertura de conta (sandbox)"),
    ("sandbox-analise-de-credito", "Análise de crédito (sandbox)"),
    (
        "sandbox-portabilidade-de-salario",
        "Portabilidade de salário (sandbox)",
    ),
];

/// The magic CPFs (docs/api.md, "Sandbox"): what the simulated subject or PGCC does.
pub const CPF_ACCEPTS_AFTER_5_S: &str = "10000000108";
pub const CPF_REFUSES_AFTER_5_S: &str = "10000000280";
pub const CPF_REVOKES_5_S_AFTER_ACTIVE: &str = "10000000361";
pub const CPF_ANSWERS_429: &str = "10000000442";
pub const CPF_ANSWERS_503: &str = "10000000523";
pub const CPF_TIMES_OUT: &str = "10000000604";

/// The `Retry-After` (seconds) of the 429 the sandbox answers.
pub const SANDBOX_RETRY_AFTER_SECONDS: u64 = 30;

/// How long the simulated subject takes to answer (or to revoke once active).
const SUBJECT_DELAY: TimeDelta = TimeDelta::seconds(5);

/// The reason the simulated subject gives, reported with its refusal or revocation.
const REFUSAL_REASON: &str = "sandbox: o titular recusou";
const REVOCATION_REASON: &str = "sandbox: o titular revogou";

/// What the subject of a created request does, by its CPF. One letter in the PGCC id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Subject {
    /// Any other CPF: nothing (an `ativo` request stays active, a `pendente` one pending).
    Silent,
    Accepts,
    Refuses,
    Revokes,
}

impl Subject {
    fn of_cpf(cpf: &str) -> Self {
        match cpf {
            CPF_ACCEPTS_AFTER_5_S => Subject::Accepts,
            CPF_REFUSES_AFTER_5_S => Subject::Refuses,
            CPF_REVOKES_5_S_AFTER_ACTIVE => Subject::Revokes,
            _ => Subject::Silent,
        }
    }

    fn letter(self) -> char {
        match self {
            Subject::Silent => 'q',
            Subject::Accepts => 'a',
            Subject::Refuses => 'r',
            Subject::Revokes => 'v',
        }
    }

    fn from_letter(letter: char) -> Option<Self> {
        Some(match letter {
            'q' => Subject::Silent,
            'a' => Subject::Accepts,
            'r' => Subject::Refuses,
            'v' => Subject::Revokes,
            _ => return None,
        })
    }

    /// The subject's moves, each at its offset from the creation: the sandbox's timeline.
    /// `Accepts` and `Refuses` answer a pending request (an active one has been answered);
    /// `Revokes` revokes 5 s after the request is active (accepting a pending one first).
    fn moves(self, initial: SolicitacaoStatus) -> Vec<(TimeDelta, Move, Option<&'static str>)> {
        let pending = initial == SolicitacaoStatus::Pendente;
        match self {
            Subject::Silent => vec![],
            Subject::Accepts => vec![(SUBJECT_DELAY, Move::Aceitar, None)],
            Subject::Refuses => vec![(SUBJECT_DELAY, Move::Recusar, Some(REFUSAL_REASON))],
            Subject::Revokes if pending => vec![
                (SUBJECT_DELAY, Move::Aceitar, None),
                (SUBJECT_DELAY * 2, Move::Revogar, Some(REVOCATION_REASON)),
            ],
            Subject::Revokes => vec![(SUBJECT_DELAY, Move::Revogar, Some(REVOCATION_REASON))],
        }
    }
}

/// A sandbox request, as its PGCC id tells it:
/// `sandbox-<subject><variant>-<created ms>-<expiry ms>-<32 hex>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SandboxRequest {
    subject: Subject,
    initial: SolicitacaoStatus,
    created: DateTime<Utc>,
    expires: DateTime<Utc>,
    nonce: Uuid,
}

impl SandboxRequest {
    fn id(&self) -> String {
        let variant = if self.initial == SolicitacaoStatus::Ativo {
            'a'
        } else {
            'p'
        };
        format!(
            "{SANDBOX_PGCC_ID_PREFIX}{}{variant}-{}-{}-{}",
            self.subject.letter(),
            self.created.timestamp_millis(),
            self.expires.timestamp_millis(),
            self.nonce.simple()
        )
    }

    fn parse(id: &str) -> Option<Self> {
        let mut parts = id.strip_prefix(SANDBOX_PGCC_ID_PREFIX)?.split('-');
        let kind: Vec<char> = parts.next()?.chars().collect();
        let [subject, variant] = kind[..] else {
            return None;
        };
        let instant = |text: &str| Utc.timestamp_millis_opt(text.parse().ok()?).single();
        let created = instant(parts.next()?)?;
        let expires = instant(parts.next()?)?;
        let nonce = Uuid::try_parse(parts.next()?).ok()?;
        if parts.next().is_some() {
            return None;
        }
        Some(SandboxRequest {
            subject: Subject::from_letter(subject)?,
            initial: match variant {
                'a' => SolicitacaoStatus::Ativo,
                'p' => SolicitacaoStatus::Pendente,
                _ => return None,
            },
            created,
            expires,
            nonce,
        })
    }

    /// Its status at `now`, when it last changed and the reason of that change: the subject's
    /// moves that are due, applied with the simulator's transitions (an expired request moves no
    /// more), then read at `now` as the simulator reads it (expiry).
    fn status_at(&self, now: DateTime<Utc>) -> (SolicitacaoStatus, Option<&'static str>) {
        let mut status = self.initial;
        let mut changed = self.created;
        let mut reason = None;
        for (offset, mv, why) in self.subject.moves(self.initial) {
            let at = self.created + offset;
            if at > now {
                break;
            }
            let (current, _) = lido_em(status, Some(self.expires), changed, at);
            match mv.target(current) {
                Some(next) if current == status => {
                    status = next;
                    changed = at;
                    reason = why;
                }
                _ => break,
            }
        }
        let (read, _) = lido_em(status, Some(self.expires), changed, now);
        (read, if read == status { reason } else { None })
    }

    /// When its subject moves next after `now`, if a move is still to come before it expires:
    /// the status worker looks again then, so the move reaches the company within seconds, as
    /// the timeline promises, and not at the steady recheck of an `ativo` request (15 min).
    fn next_change_at(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.subject
            .moves(self.initial)
            .into_iter()
            .map(|(offset, _, _)| self.created + offset)
            .find(|at| *at > now)
            .filter(|at| *at < self.expires)
    }
}

/// The sandbox's PGCC (see the module's documentation).
#[derive(Debug, Default, Clone)]
pub struct SandboxPgcc;

impl SandboxPgcc {
    pub fn new() -> Self {
        SandboxPgcc
    }

    /// Whether `pgcc_id` is one the sandbox minted (its shape; the router's test).
    pub fn minted(pgcc_id: &str) -> bool {
        pgcc_id.starts_with(SANDBOX_PGCC_ID_PREFIX)
    }

    /// The sandbox as a simulator seed company: its one link and the fixed use cases.
    fn seed_company(cnpj: &Cnpj) -> SeedEmpresa {
        SeedEmpresa {
            cnpj: cnpj.as_str().to_owned(),
            vinculos: vec![SeedVinculo {
                id: SANDBOX_LINK_ID,
                casos_de_uso: SANDBOX_USE_CASES
                    .iter()
                    .map(|(template_id, titulo)| SeedCasoDeUso {
                        template_id: (*template_id).to_owned(),
                        titulo: (*titulo).to_owned(),
                    })
                    .collect(),
            }],
        }
    }
}

fn consent_status(status: SolicitacaoStatus) -> ConsentStatus {
    match status {
        SolicitacaoStatus::Pendente => ConsentStatus::Pending,
        SolicitacaoStatus::Ativo => ConsentStatus::Active,
        SolicitacaoStatus::Recusado => ConsentStatus::Refused,
        SolicitacaoStatus::Expirado => ConsentStatus::Expired,
        SolicitacaoStatus::Revogado => ConsentStatus::Revoked,
    }
}

impl PgccGateway for SandboxPgcc {
    fn list_use_cases(&self, company_cnpj: &Cnpj) -> Result<Vec<PgccUseCase>, PgccError> {
        Ok(Self::seed_company(company_cnpj)
            .vinculos
            .into_iter()
            .flat_map(|vinculo| {
                vinculo
                    .casos_de_uso
                    .into_iter()
                    .map(move |caso| PgccUseCase {
                        link_id: vinculo.id,
                        template_id: caso.template_id,
                        title: caso.titulo,
                        other_fields: "{}".to_owned(),
                    })
            })
            .collect())
    }

    fn create_consent_request(
        &self,
        consent: &PgccNewConsent,
    ) -> Result<PgccConsentCreated, PgccError> {
        // The body the HTTP gateway would send, read as the simulator reads it.
        let body = serde_json::to_value(creation_body(consent))
            .and_then(serde_json::from_value::<NovaSolicitacao>)
            .map_err(|e| PgccError::Unexpected(anyhow::Error::new(e).context("sandbox body")))?;
        if body.validate().is_err() {
            return Err(PgccError::Rejected { status: 400 });
        }
        match body.cpf_titular.as_str() {
            CPF_ANSWERS_429 => {
                return Err(PgccError::TryLater {
                    status: 429,
                    retry_after_seconds: Some(SANDBOX_RETRY_AFTER_SECONDS),
                })
            }
            CPF_ANSWERS_503 => return Err(PgccError::Failed { status: 503 }),
            // A PGCC that does not answer within the client's timeout: the same outcome, at
            // once, so no blocking thread waits out a timeout for a simulation.
            CPF_TIMES_OUT => return Err(PgccError::Timeout),
            _ => {}
        }
        if Self::seed_company(&consent.company_cnpj)
            .vinculo_with_template(&body.template_id, body.vinculo_id)
            .is_none()
        {
            return Err(PgccError::Rejected { status: 404 });
        }
        let expires = DateTime::parse_from_rfc3339(&body.data_expiracao_consentimento)
            .map(|d| d.with_timezone(&Utc))
            .map_err(|_| PgccError::Rejected { status: 400 })?;
        let request = SandboxRequest {
            subject: Subject::of_cpf(&body.cpf_titular),
            initial: body.status,
            created: Utc::now(),
            expires,
            nonce: Uuid::new_v4(),
        };
        Ok(PgccConsentCreated {
            pgcc_id: request.id(),
        })
    }

    fn consent_statuses(&self, pgcc_ids: &[String]) -> Result<Vec<PgccConsentStatus>, PgccError> {
        let now = Utc::now();
        let mut seen = std::collections::HashSet::new();
        Ok(pgcc_ids
            .iter()
            .filter(|id| seen.insert(id.as_str()))
            .filter_map(|id| {
                let request = SandboxRequest::parse(id)?;
                let (status, reason) = request.status_at(now);
                Some(PgccConsentStatus {
                    pgcc_id: id.clone(),
                    status: Some(consent_status(status)),
                    reason: reason.map(str::to_owned),
                    next_change_at: request.next_change_at(now),
                    company_cnpj: None,
                })
            })
            .collect())
    }

    fn revoke_consent_request(&self, pgcc_id: &str) -> Result<(), PgccError> {
        let request = SandboxRequest::parse(pgcc_id).ok_or(PgccError::Rejected { status: 404 })?;
        let (status, _) = request.status_at(Utc::now());
        Move::RevogarPelaEmpresa
            .target(status)
            .map(|_| ())
            .ok_or(PgccError::Rejected { status: 409 })
    }

    /// The sandbox holds a request only once it answered its creation, and it answers every
    /// creation it holds at once: a creation left unsettled (a magic CPF's 429, 503 or timeout)
    /// is one it never held.
    fn find_by_external_reference(
        &self,
        _company_cnpj: &Cnpj,
        _referencia_externa: Uuid,
    ) -> Result<Option<PgccConsentCreated>, PgccError> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(subject: Subject, initial: SolicitacaoStatus) -> SandboxRequest {
        SandboxRequest {
            subject,
            initial,
            created: Utc.timestamp_millis_opt(1_700_000_000_000).unwrap(),
            expires: Utc.timestamp_millis_opt(1_800_000_000_000).unwrap(),
            nonce: Uuid::from_u128(7),
        }
    }

    fn at(r: &SandboxRequest, seconds: i64) -> SolicitacaoStatus {
        r.status_at(r.created + TimeDelta::seconds(seconds)).0
    }

    #[test]
    fn an_id_reads_back_as_the_request_it_was_minted_for() {
        let r = request(Subject::Revokes, SolicitacaoStatus::Pendente);
        let id = r.id();
        assert!(SandboxPgcc::minted(&id));
        assert_eq!(SandboxRequest::parse(&id), Some(r));
        assert_eq!(SandboxRequest::parse("pgcc-0123"), None);
        assert_eq!(SandboxRequest::parse(&format!("{id}-x")), None);
    }

    #[test]
    fn the_magic_subjects_move_after_five_seconds_and_any_other_never() {
        use SolicitacaoStatus::*;
        let accepts = request(Subject::Accepts, Pendente);
        assert_eq!((at(&accepts, 4), at(&accepts, 5)), (Pendente, Ativo));
        let refuses = request(Subject::Refuses, Pendente);
        assert_eq!((at(&refuses, 4), at(&refuses, 6)), (Pendente, Recusado));
        let revokes = request(Subject::Revokes, Pendente);
        assert_eq!(
            (at(&revokes, 4), at(&revokes, 6), at(&revokes, 10)),
            (Pendente, Ativo, Revogado)
        );
        let revokes_active = request(Subject::Revokes, Ativo);
        assert_eq!(
            (at(&revokes_active, 4), at(&revokes_active, 5)),
            (Ativo, Revogado)
        );
        let silent = request(Subject::Silent, Pendente);
        assert_eq!(at(&silent, 1_000_000), Pendente);
    }

    #[test]
    fn the_next_move_is_told_until_the_last_one_and_never_past_the_expiry() {
        let next = |r: &SandboxRequest, seconds: i64| {
            r.next_change_at(r.created + TimeDelta::seconds(seconds))
                .map(|at| (at - r.created).num_seconds())
        };
        let revokes = request(Subject::Revokes, SolicitacaoStatus::Pendente);
        assert_eq!(
            (next(&revokes, 0), next(&revokes, 5), next(&revokes, 10)),
            (Some(5), Some(10), None)
        );
        let silent = request(Subject::Silent, SolicitacaoStatus::Pendente);
        assert_eq!(next(&silent, 0), None);
        let mut expiring = request(Subject::Accepts, SolicitacaoStatus::Pendente);
        expiring.expires = expiring.created + TimeDelta::seconds(2);
        assert_eq!(next(&expiring, 0), None);
    }

    #[test]
    fn an_expired_request_reads_expired_and_moves_no_more() {
        let mut r = request(Subject::Accepts, SolicitacaoStatus::Pendente);
        r.expires = r.created + TimeDelta::seconds(2);
        assert_eq!(at(&r, 10), SolicitacaoStatus::Expirado);
    }

    #[test]
    fn the_company_revokes_a_pending_or_active_request_and_not_a_refused_one() {
        let sandbox = SandboxPgcc::new();
        let mut r = request(Subject::Refuses, SolicitacaoStatus::Pendente);
        r.created = Utc::now();
        r.expires = r.created + TimeDelta::days(1);
        assert!(sandbox.revoke_consent_request(&r.id()).is_ok());
        r.created = Utc::now() - TimeDelta::seconds(60);
        assert!(matches!(
            sandbox.revoke_consent_request(&r.id()),
            Err(PgccError::Rejected { status: 409 })
        ));
    }
}
