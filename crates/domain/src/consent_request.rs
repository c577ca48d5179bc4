//! Consent requests (solicitações de consentimento): the input draft, its validation rules and the
//! stored entity.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::{Cnpj, CompanyId, ConsentStatus, Cpf, ValidationErrors};

/// Which creation endpoint was called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CreationVariant {
    /// `criar/ativo`: the subject has already answered.
    Active,
    /// `criar/pendente`: the service waits for the subject's answer.
    Pending,
}

/// The access modality (`modalidadeAcesso`). `Indireto` requires `cnpjAnuente`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AccessMode {
    /// `Direto`: no consenting company; `cnpjAnuente` is optional.
    Direct,
    /// `Indireto`: access through a consenting company, whose CNPJ (`cnpjAnuente`) is required.
    Indirect,
}

impl AccessMode {
    /// The wire name: `"Direto"` or `"Indireto"`.
    pub fn as_str(self) -> &'static str {
        match self {
            AccessMode::Direct => "Direto",
            AccessMode::Indirect => "Indireto",
        }
    }

    /// The wire name, exact spelling only (`"Direto"`, `"Indireto"`).
    pub fn parse(raw: &str) -> Option<AccessMode> {
        match raw {
            "Direto" => Some(AccessMode::Direct),
            "Indireto" => Some(AccessMode::Indirect),
            _ => None,
        }
    }
}

/// The kind of data subject (`tipoTitular`): only natural persons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubjectType {
    /// `PessoaFisica`: a natural person, identified by a CPF.
    NaturalPerson,
}

impl SubjectType {
    /// The wire name: `"PessoaFisica"`.
    pub fn as_str(self) -> &'static str {
        "PessoaFisica"
    }

    /// The wire name, exact spelling only (`"PessoaFisica"`).
    pub fn parse(raw: &str) -> Option<SubjectType> {
        (raw == "PessoaFisica").then_some(SubjectType::NaturalPerson)
    }
}

/// The body of a creation request as received: every field optional and the enumerations as
/// text, so that each broken rule is reported by field (422) instead of failing decoding (400).
///
/// Unlike the validated types, its `Debug` shows the raw CPF and proof of consent: do not log a
/// draft.
/// Serializable as the import's staged line (docs/imports.md): a storage form, not a wire form.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConsentRequestDraft {
    /// `casoDeUsoIdTemplate`: the PGCC template id of one of the company's use cases.
    pub template_id: Option<String>,
    /// `cpfTitular`: the data subject's CPF, formatted or digits only.
    pub subject_cpf: Option<String>,
    /// `modalidadeAcesso`: `Direto` or `Indireto`, as text.
    pub access_mode: Option<String>,
    /// `tipoTitular`: `PessoaFisica`, as text.
    pub subject_type: Option<String>,
    /// `dataExpiracaoConsentimento`: when the consent stops holding.
    pub consent_expires_at: Option<DateTime<Utc>>,
    /// `dataTitularRespondeuConsentimento`: when the subject answered (active requests only).
    pub subject_answered_at: Option<DateTime<Utc>>,
    /// `provaColeta`: the proof that the subject consented (active requests only).
    pub proof_of_collection: Option<String>,
    /// `cnpjAnuente`: the consenting company's CNPJ (required for `Indireto`).
    pub consenting_cnpj: Option<String>,
}

/// The subject's answer, present only on requests created active.
#[derive(Clone, PartialEq, Eq)]
pub struct ActiveAnswer {
    /// When the subject answered; before the request's expiry and not in the future.
    pub subject_answered_at: DateTime<Utc>,
    /// Proof of consent: personal data, never logged.
    pub proof_of_collection: String,
}

impl std::fmt::Debug for ActiveAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActiveAnswer")
            .field(
                "data_titular_respondeu_consentimento",
                &self.subject_answered_at,
            )
            .field("prova_coleta", &"<redacted>")
            .finish()
    }
}

/// A draft that passed every rule of its variant: built only by
/// [`ConsentRequestDraft::validate`], with typed, normalized fields. Its `Debug` is safe to log
/// (the CPF is masked, the proof of consent redacted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidConsentRequest {
    /// Which creation endpoint it came through.
    pub variant: CreationVariant,
    /// `casoDeUsoIdTemplate`, trimmed.
    pub template_id: String,
    /// `cpfTitular`, checked and normalized.
    pub subject_cpf: Cpf,
    /// `modalidadeAcesso`.
    pub access_mode: AccessMode,
    /// `tipoTitular`.
    pub subject_type: SubjectType,
    /// `dataExpiracaoConsentimento`; after the instant of validation.
    pub consent_expires_at: DateTime<Utc>,
    /// `Some` exactly when `variant` is `Active`.
    pub answer: Option<ActiveAnswer>,
    /// `cnpjAnuente`, checked and normalized; always `Some` for `Indireto`.
    pub consenting_cnpj: Option<Cnpj>,
}

impl ConsentRequestDraft {
    /// Checks every rule of `variant` at instant `now` and reports all broken ones, each under
    /// the JSON name of its field:
    /// - required (both variants): casoDeUsoIdTemplate (non-blank, at most
    ///   [`MAX_TEMPLATE_ID`] characters once trimmed, no U+0000), cpfTitular (valid CPF),
    ///   modalidadeAcesso (`Direto` | `Indireto`, exact spelling), tipoTitular (`PessoaFisica`
    ///   only), dataExpiracaoConsentimento (strictly after `now`);
    /// - cnpjAnuente: required and valid for `Indireto`; when given for `Direto`, must be valid
    ///   (a blank string counts as absent);
    /// - active: dataTitularRespondeuConsentimento required, not after `now`, strictly before the
    ///   expiry; provaColeta required and non-blank (at most [`MAX_PROOF_OF_COLLECTION`] characters, no
    ///   U+0000);
    /// - pending: dataTitularRespondeuConsentimento and provaColeta must be absent (`None`; an
    ///   empty string is still present).
    ///
    /// Each field is reported at most once (its first broken rule), in the order above; no
    /// message quotes the submitted value. On success the template is trimmed, the CPF and CNPJ
    /// are normalized, and `answer` is `Some` exactly for [`CreationVariant::Active`].
    pub fn validate(
        self,
        variant: CreationVariant,
        now: DateTime<Utc>,
    ) -> Result<ValidConsentRequest, ValidationErrors> {
        let mut errors = ValidationErrors::default();

        let template = match non_blank(self.template_id.as_deref()).map(str::trim) {
            None => reject(&mut errors, field::TEMPLATE_ID, msg::REQUIRED),
            Some(t) if t.chars().count() > MAX_TEMPLATE_ID => {
                reject(&mut errors, field::TEMPLATE_ID, msg::TEMPLATE_TOO_LONG)
            }
            Some(t) if t.contains('\0') => {
                reject(&mut errors, field::TEMPLATE_ID, NUL_CHARACTER_MESSAGE)
            }
            Some(t) => Some(t.to_owned()),
        };

        let cpf = match non_blank(self.subject_cpf.as_deref()) {
            None => reject(&mut errors, field::SUBJECT_CPF, msg::REQUIRED),
            Some(raw) => Cpf::parse(raw)
                .map_err(|e| errors.push(field::SUBJECT_CPF, e.to_string()))
                .ok(),
        };

        let access_mode = match non_blank(self.access_mode.as_deref()) {
            None => reject(&mut errors, field::ACCESS_MODE, msg::REQUIRED),
            Some(raw) => AccessMode::parse(raw)
                .or_else(|| reject(&mut errors, field::ACCESS_MODE, msg::INVALID_ACCESS_MODE)),
        };

        let event_type = match non_blank(self.subject_type.as_deref()) {
            None => reject(&mut errors, field::SUBJECT_TYPE, msg::REQUIRED),
            Some(raw) => SubjectType::parse(raw)
                .or_else(|| reject(&mut errors, field::SUBJECT_TYPE, msg::INVALID_SUBJECT_TYPE)),
        };

        let expiry = match self.consent_expires_at {
            None => reject(&mut errors, field::CONSENT_EXPIRES_AT, msg::REQUIRED),
            Some(exp) if exp <= now => reject(
                &mut errors,
                field::CONSENT_EXPIRES_AT,
                msg::EXPIRY_IN_THE_PAST,
            ),
            Some(exp) => Some(exp),
        };

        // `Some(answer)` when the answer rules of the variant hold: `Some(Some(_))` for active,
        // `Some(None)` for pending.
        let answer = match variant {
            CreationVariant::Active => {
                let answered_at = match self.subject_answered_at {
                    None => reject(&mut errors, field::SUBJECT_ANSWERED_AT, msg::REQUIRED),
                    Some(r) if r > now => reject(
                        &mut errors,
                        field::SUBJECT_ANSWERED_AT,
                        msg::ANSWER_IN_THE_FUTURE,
                    ),
                    Some(r) if self.consent_expires_at.is_some_and(|exp| r >= exp) => reject(
                        &mut errors,
                        field::SUBJECT_ANSWERED_AT,
                        msg::ANSWER_AFTER_EXPIRY,
                    ),
                    Some(r) => Some(r),
                };
                let proof = match self.proof_of_collection {
                    None => reject(&mut errors, field::PROOF_OF_COLLECTION, msg::REQUIRED),
                    Some(p) if p.trim().is_empty() => {
                        reject(&mut errors, field::PROOF_OF_COLLECTION, msg::REQUIRED)
                    }
                    Some(p) if p.chars().count() > MAX_PROOF_OF_COLLECTION => {
                        reject(&mut errors, field::PROOF_OF_COLLECTION, msg::PROOF_TOO_LONG)
                    }
                    Some(p) if p.contains('\0') => reject(
                        &mut errors,
                        field::PROOF_OF_COLLECTION,
                        NUL_CHARACTER_MESSAGE,
                    ),
                    Some(p) => Some(p),
                };
                answered_at.zip(proof).map(|(data, proof_of_collection)| {
                    Some(ActiveAnswer {
                        subject_answered_at: data,
                        proof_of_collection,
                    })
                })
            }
            CreationVariant::Pending => {
                if self.subject_answered_at.is_some() {
                    errors.push(field::SUBJECT_ANSWERED_AT, msg::NOT_ACCEPTED_WHEN_PENDING);
                }
                if self.proof_of_collection.is_some() {
                    errors.push(field::PROOF_OF_COLLECTION, msg::NOT_ACCEPTED_WHEN_PENDING);
                }
                Some(None)
            }
        };

        let cnpj = match non_blank(self.consenting_cnpj.as_deref()) {
            None if access_mode == Some(AccessMode::Indirect) => reject(
                &mut errors,
                field::CONSENTING_CNPJ,
                msg::CNPJ_REQUIRED_WHEN_INDIRECT,
            ),
            None => None,
            Some(raw) => Cnpj::parse(raw)
                .map_err(|e| errors.push(field::CONSENTING_CNPJ, e.to_string()))
                .ok(),
        };

        match (template, cpf, access_mode, event_type, expiry, answer) {
            (
                Some(template),
                Some(cpf),
                Some(access_mode),
                Some(event_type),
                Some(expiry),
                Some(answer),
            ) if errors.is_empty() => Ok(ValidConsentRequest {
                variant,
                template_id: template,
                subject_cpf: cpf,
                access_mode,
                subject_type: event_type,
                consent_expires_at: expiry,
                answer,
                consenting_cnpj: cnpj,
            }),
            _ => {
                debug_assert!(!errors.is_empty(), "a field was rejected without an error");
                Err(errors)
            }
        }
    }
}

/// The rule of every text stored or looked up in PostgreSQL, whose `text` cannot hold U+0000:
/// such a text is refused (422) rather than failing in the database (500).
pub const NUL_CHARACTER_MESSAGE: &str = "o texto não pode conter o caractere nulo (U+0000)";

/// Longest accepted `casoDeUsoIdTemplate`, in characters, after trimming.
pub const MAX_TEMPLATE_ID: usize = 200;
/// Longest accepted `provaColeta`, in characters.
pub const MAX_PROOF_OF_COLLECTION: usize = 100_000;

/// The JSON names of the fields of a consent request, as reported in [`ValidationErrors`].
pub mod field {
    /// The use case template id.
    pub const TEMPLATE_ID: &str = "casoDeUsoIdTemplate";
    /// The data subject's CPF.
    pub const SUBJECT_CPF: &str = "cpfTitular";
    /// The access modality.
    pub const ACCESS_MODE: &str = "modalidadeAcesso";
    /// The kind of data subject.
    pub const SUBJECT_TYPE: &str = "tipoTitular";
    /// The expiry of the consent.
    pub const CONSENT_EXPIRES_AT: &str = "dataExpiracaoConsentimento";
    /// When the subject answered.
    pub const SUBJECT_ANSWERED_AT: &str = "dataTitularRespondeuConsentimento";
    /// The proof of consent.
    pub const PROOF_OF_COLLECTION: &str = "provaColeta";
    /// The consenting company's CNPJ.
    pub const CONSENTING_CNPJ: &str = "cnpjAnuente";
}

/// Messages of the broken rules. None of them quotes the submitted value: a CPF, a CNPJ or a
/// proof of consent is personal data and must never appear in an error.
mod msg {
    pub const REQUIRED: &str = "o campo é obrigatório";
    pub const TEMPLATE_TOO_LONG: &str =
        "o identificador do template deve ter no máximo 200 caracteres";
    pub const INVALID_ACCESS_MODE: &str = "a modalidade de acesso deve ser Direto ou Indireto";
    pub const INVALID_SUBJECT_TYPE: &str = "o tipo de titular deve ser PessoaFisica";
    pub const EXPIRY_IN_THE_PAST: &str = "a data de expiração deve ser posterior ao momento atual";
    pub const ANSWER_IN_THE_FUTURE: &str = "a data da resposta do titular não pode estar no futuro";
    pub const ANSWER_AFTER_EXPIRY: &str =
        "a data da resposta do titular deve ser anterior à data de expiração";
    pub const PROOF_TOO_LONG: &str = "a prova de coleta deve ter no máximo 100000 caracteres";
    pub const NOT_ACCEPTED_WHEN_PENDING: &str = "não é aceito em solicitação pendente";
    pub const CNPJ_REQUIRED_WHEN_INDIRECT: &str =
        "o CNPJ anuente é obrigatório quando a modalidade de acesso é Indireto";
}

/// Records a broken rule of `field` and yields no value for it.
fn reject<T>(errors: &mut ValidationErrors, field: &str, message: &str) -> Option<T> {
    errors.push(field, message);
    None
}

/// The value when present and not blank.
fn non_blank(value: Option<&str>) -> Option<&str> {
    value.filter(|v| !v.trim().is_empty())
}

/// A stored consent request: the validated data plus what the service added (ids, status,
/// hash, timestamps).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentRequest {
    /// Our id of the request (`id` on the wire).
    pub id: Uuid,
    /// The company that created it.
    pub company_id: CompanyId,
    /// What the company submitted, validated.
    pub content: ValidConsentRequest,
    /// The stored status; see [`ConsentRequest::effective_status`] for what to report.
    pub status: ConsentStatus,
    /// The PGCC's id of the request (`pgccId` on the wire).
    pub pgcc_id: String,
    /// Lower-case hex SHA-256 of the request's canonical content (docs/hash-consulta.md),
    /// computed once at creation.
    pub hash: String,
    /// The hash's salt: 32 lower-case hex digits drawn at random for this request, part of its
    /// canonical content, so that the hash published beside a masked CPF cannot be searched for
    /// the CPF. Shown only where the CPF is shown in full (docs/hash-consulta.md).
    pub hash_salt: String,
    /// When it was created (`criadoEm`).
    pub created_at: DateTime<Utc>,
    /// When it last changed (`atualizadoEm`).
    pub updated_at: DateTime<Utc>,
    /// The version of its use case current when it was stored (`versaoCasoDeUso`): chosen by
    /// the repository in the statement that stores it, so `None` only on a request not stored
    /// yet; every request read back has it.
    pub use_case_version: Option<i64>,
}

impl ConsentRequest {
    /// The status to report at `now`: a `pendente` or `ativo` request whose expiry is not after
    /// `now` is `expirado`, even before the expiry worker has stored it.
    pub fn effective_status(&self, now: DateTime<Utc>) -> ConsentStatus {
        match self.status {
            ConsentStatus::Pending | ConsentStatus::Active
                if self.content.consent_expires_at <= now =>
            {
                ConsentStatus::Expired
            }
            stored => stored,
        }
    }

    /// Whether the consent holds at `now`: effectively `ativo`.
    pub fn is_valid_at(&self, now: DateTime<Utc>) -> bool {
        self.effective_status(now) == ConsentStatus::Active
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};

    use super::*;
    use crate::{CnpjError, CpfError};

    const CPF: &str = "123.456.789-09";
    const CNPJ: &str = "11.222.333/0001-81";
    const PROOF: &str = "assinatura-digital-do-titular";

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 6, 1, 12, 0, 0).unwrap()
    }

    fn active_draft() -> ConsentRequestDraft {
        ConsentRequestDraft {
            template_id: Some("tpl-marketing".into()),
            subject_cpf: Some(CPF.into()),
            access_mode: Some("Direto".into()),
            subject_type: Some("PessoaFisica".into()),
            consent_expires_at: Some(now() + Duration::days(365)),
            subject_answered_at: Some(now() - Duration::hours(1)),
            proof_of_collection: Some(PROOF.into()),
            consenting_cnpj: None,
        }
    }

    fn pending_draft() -> ConsentRequestDraft {
        ConsentRequestDraft {
            subject_answered_at: None,
            proof_of_collection: None,
            ..active_draft()
        }
    }

    fn errors_of(draft: ConsentRequestDraft, variant: CreationVariant) -> ValidationErrors {
        draft
            .validate(variant, now())
            .expect_err("the draft should be rejected")
    }

    fn fields(errors: &ValidationErrors) -> Vec<&str> {
        errors.fields().iter().map(|e| e.field.as_str()).collect()
    }

    /// Exactly one error, on `field`; returns its message.
    fn only_error(draft: ConsentRequestDraft, variant: CreationVariant, field: &str) -> String {
        let errors = errors_of(draft, variant);
        assert_eq!(fields(&errors), [field], "{errors:?}");
        errors.0.into_iter().next().unwrap().message
    }

    fn both_variants() -> [(CreationVariant, ConsentRequestDraft); 2] {
        [
            (CreationVariant::Active, active_draft()),
            (CreationVariant::Pending, pending_draft()),
        ]
    }

    // --- valid requests ---

    #[test]
    fn fully_valid_active_request_is_accepted_with_its_answer() {
        let valid = active_draft()
            .validate(CreationVariant::Active, now())
            .unwrap();
        assert_eq!(valid.variant, CreationVariant::Active);
        assert_eq!(valid.template_id, "tpl-marketing");
        assert_eq!(valid.subject_cpf.as_str(), "12345678909");
        assert_eq!(valid.access_mode, AccessMode::Direct);
        assert_eq!(valid.subject_type, SubjectType::NaturalPerson);
        assert_eq!(valid.consent_expires_at, now() + Duration::days(365));
        assert_eq!(
            valid.answer,
            Some(ActiveAnswer {
                subject_answered_at: now() - Duration::hours(1),
                proof_of_collection: PROOF.into(),
            })
        );
        assert_eq!(valid.consenting_cnpj, None);
    }

    #[test]
    fn fully_valid_pending_request_is_accepted_without_an_answer() {
        let valid = pending_draft()
            .validate(CreationVariant::Pending, now())
            .unwrap();
        assert_eq!(valid.variant, CreationVariant::Pending);
        assert_eq!(valid.subject_cpf.as_str(), "12345678909");
        assert_eq!(valid.answer, None);
        assert_eq!(valid.consenting_cnpj, None);
    }

    #[test]
    fn template_is_trimmed() {
        let draft = ConsentRequestDraft {
            template_id: Some("  tpl-1 \t".into()),
            ..active_draft()
        };
        let valid = draft.validate(CreationVariant::Active, now()).unwrap();
        assert_eq!(valid.template_id, "tpl-1");
    }

    #[test]
    fn template_of_exactly_200_characters_after_trimming_is_accepted() {
        let draft = ConsentRequestDraft {
            template_id: Some(format!("  {}  ", "é".repeat(200))),
            ..active_draft()
        };
        let valid = draft.validate(CreationVariant::Active, now()).unwrap();
        assert_eq!(valid.template_id.chars().count(), 200);
    }

    #[test]
    fn indireto_with_a_valid_cnpj_anuente_is_accepted_and_normalized() {
        for (variant, draft) in both_variants() {
            let draft = ConsentRequestDraft {
                access_mode: Some("Indireto".into()),
                consenting_cnpj: Some("12.abc.345/01de-35".into()),
                ..draft
            };
            let valid = draft.validate(variant, now()).unwrap();
            assert_eq!(valid.access_mode, AccessMode::Indirect);
            assert_eq!(
                valid.consenting_cnpj.as_ref().map(Cnpj::as_str),
                Some("12ABC34501DE35")
            );
        }
    }

    #[test]
    fn direto_with_a_valid_cnpj_anuente_keeps_it() {
        let draft = ConsentRequestDraft {
            consenting_cnpj: Some(CNPJ.into()),
            ..active_draft()
        };
        let valid = draft.validate(CreationVariant::Active, now()).unwrap();
        assert_eq!(
            valid.consenting_cnpj.as_ref().map(Cnpj::as_str),
            Some("11222333000181")
        );
    }

    #[test]
    fn direto_with_a_blank_cnpj_anuente_treats_it_as_absent() {
        for blank in ["", "   "] {
            let draft = ConsentRequestDraft {
                consenting_cnpj: Some(blank.into()),
                ..active_draft()
            };
            let valid = draft.validate(CreationVariant::Active, now()).unwrap();
            assert_eq!(valid.consenting_cnpj, None);
        }
    }

    #[test]
    fn answer_given_exactly_now_is_accepted() {
        let draft = ConsentRequestDraft {
            subject_answered_at: Some(now()),
            ..active_draft()
        };
        assert!(draft.validate(CreationVariant::Active, now()).is_ok());
    }

    #[test]
    fn expiry_one_second_after_now_is_accepted() {
        let draft = ConsentRequestDraft {
            consent_expires_at: Some(now() + Duration::seconds(1)),
            ..pending_draft()
        };
        assert!(draft.validate(CreationVariant::Pending, now()).is_ok());
    }

    #[test]
    fn prova_coleta_of_exactly_100000_characters_is_accepted() {
        let draft = ConsentRequestDraft {
            proof_of_collection: Some("x".repeat(MAX_PROOF_OF_COLLECTION)),
            ..active_draft()
        };
        assert!(draft.validate(CreationVariant::Active, now()).is_ok());
    }

    // --- casoDeUsoIdTemplate ---

    #[test]
    fn missing_template_is_reported_on_caso_de_uso_id_template_only() {
        for (variant, draft) in both_variants() {
            let draft = ConsentRequestDraft {
                template_id: None,
                ..draft
            };
            let message = only_error(draft, variant, "casoDeUsoIdTemplate");
            assert_eq!(message, "o campo é obrigatório");
        }
    }

    #[test]
    fn blank_template_is_reported_as_missing() {
        for (variant, draft) in both_variants() {
            let draft = ConsentRequestDraft {
                template_id: Some(" \t ".into()),
                ..draft
            };
            let message = only_error(draft, variant, "casoDeUsoIdTemplate");
            assert_eq!(message, "o campo é obrigatório");
        }
    }

    #[test]
    fn template_longer_than_200_characters_is_rejected() {
        let draft = ConsentRequestDraft {
            template_id: Some("a".repeat(201)),
            ..active_draft()
        };
        let message = only_error(draft, CreationVariant::Active, "casoDeUsoIdTemplate");
        assert!(message.contains("200"), "{message}");
    }

    // --- cpfTitular ---

    #[test]
    fn missing_or_blank_cpf_is_reported_on_cpf_titular_only() {
        for (variant, draft) in both_variants() {
            for cpf in [None, Some("   ".to_string())] {
                let draft = ConsentRequestDraft {
                    subject_cpf: cpf,
                    ..draft.clone()
                };
                let message = only_error(draft, variant, "cpfTitular");
                assert_eq!(message, "o campo é obrigatório");
            }
        }
    }

    #[test]
    fn cpf_with_wrong_check_digits_is_reported_with_the_cpf_error_message() {
        for (variant, draft) in both_variants() {
            let draft = ConsentRequestDraft {
                subject_cpf: Some("123.456.789-00".into()),
                ..draft
            };
            let message = only_error(draft, variant, "cpfTitular");
            assert_eq!(message, CpfError::CheckDigits.to_string());
        }
    }

    #[test]
    fn cpf_with_letters_length_or_repetition_problems_uses_the_matching_message() {
        let cases = [
            ("1234567890a", CpfError::Characters),
            ("1234567890", CpfError::Length),
            ("222.222.222-22", CpfError::RepeatedDigits),
        ];
        for (raw, expected) in cases {
            let draft = ConsentRequestDraft {
                subject_cpf: Some(raw.into()),
                ..active_draft()
            };
            let message = only_error(draft, CreationVariant::Active, "cpfTitular");
            assert_eq!(message, expected.to_string(), "{raw}");
        }
    }

    // --- modalidadeAcesso ---

    #[test]
    fn missing_modalidade_is_reported_on_modalidade_acesso_only() {
        for (variant, draft) in both_variants() {
            let draft = ConsentRequestDraft {
                access_mode: None,
                ..draft
            };
            let message = only_error(draft, variant, "modalidadeAcesso");
            assert_eq!(message, "o campo é obrigatório");
        }
    }

    #[test]
    fn modalidade_other_than_exactly_direto_or_indireto_is_rejected() {
        for raw in ["direto", "INDIRETO", " Direto", "Indireto ", "Misto", "0"] {
            let draft = ConsentRequestDraft {
                access_mode: Some(raw.into()),
                ..active_draft()
            };
            let message = only_error(draft, CreationVariant::Active, "modalidadeAcesso");
            assert_eq!(
                message,
                "a modalidade de acesso deve ser Direto ou Indireto"
            );
        }
    }

    // --- tipoTitular ---

    #[test]
    fn missing_tipo_titular_is_reported_on_tipo_titular_only() {
        for (variant, draft) in both_variants() {
            let draft = ConsentRequestDraft {
                subject_type: None,
                ..draft
            };
            let message = only_error(draft, variant, "tipoTitular");
            assert_eq!(message, "o campo é obrigatório");
        }
    }

    #[test]
    fn tipo_titular_other_than_pessoa_fisica_is_rejected() {
        for raw in [
            "PessoaJuridica",
            "pessoafisica",
            "PESSOAFISICA",
            "PessoaFisica ",
        ] {
            let draft = ConsentRequestDraft {
                subject_type: Some(raw.into()),
                ..pending_draft()
            };
            let message = only_error(draft, CreationVariant::Pending, "tipoTitular");
            assert_eq!(message, "o tipo de titular deve ser PessoaFisica");
        }
    }

    // --- dataExpiracaoConsentimento ---

    #[test]
    fn missing_expiry_is_reported_on_data_expiracao_consentimento_only() {
        for (variant, draft) in both_variants() {
            let draft = ConsentRequestDraft {
                consent_expires_at: None,
                ..draft
            };
            let message = only_error(draft, variant, "dataExpiracaoConsentimento");
            assert_eq!(message, "o campo é obrigatório");
        }
    }

    #[test]
    fn expiry_equal_to_now_is_rejected() {
        let draft = ConsentRequestDraft {
            consent_expires_at: Some(now()),
            ..pending_draft()
        };
        let message = only_error(
            draft,
            CreationVariant::Pending,
            "dataExpiracaoConsentimento",
        );
        assert_eq!(
            message,
            "a data de expiração deve ser posterior ao momento atual"
        );
    }

    #[test]
    fn expiry_in_the_past_is_rejected() {
        let draft = ConsentRequestDraft {
            consent_expires_at: Some(now() - Duration::days(1)),
            ..pending_draft()
        };
        only_error(
            draft,
            CreationVariant::Pending,
            "dataExpiracaoConsentimento",
        );
    }

    // --- dataTitularRespondeuConsentimento ---

    #[test]
    fn active_request_without_answer_date_is_rejected() {
        let draft = ConsentRequestDraft {
            subject_answered_at: None,
            ..active_draft()
        };
        let message = only_error(
            draft,
            CreationVariant::Active,
            "dataTitularRespondeuConsentimento",
        );
        assert_eq!(message, "o campo é obrigatório");
    }

    #[test]
    fn active_request_with_answer_date_in_the_future_is_rejected() {
        let draft = ConsentRequestDraft {
            subject_answered_at: Some(now() + Duration::seconds(1)),
            ..active_draft()
        };
        let message = only_error(
            draft,
            CreationVariant::Active,
            "dataTitularRespondeuConsentimento",
        );
        assert_eq!(
            message,
            "a data da resposta do titular não pode estar no futuro"
        );
    }

    #[test]
    fn answer_date_not_before_an_expired_expiry_is_reported_with_the_expiry() {
        // with a valid (future) expiry, "not after now" already implies "before the expiry", so
        // this rule can only break together with the expiry rule
        let expiry = now() - Duration::days(2);
        for answer in [expiry, now() - Duration::days(1)] {
            let draft = ConsentRequestDraft {
                consent_expires_at: Some(expiry),
                subject_answered_at: Some(answer),
                ..active_draft()
            };
            let errors = errors_of(draft, CreationVariant::Active);
            assert_eq!(
                fields(&errors),
                [
                    "dataExpiracaoConsentimento",
                    "dataTitularRespondeuConsentimento"
                ]
            );
            assert_eq!(
                errors.fields()[1].message,
                "a data da resposta do titular deve ser anterior à data de expiração"
            );
        }
    }

    #[test]
    fn answer_date_before_an_expired_expiry_is_only_an_expiry_error() {
        let draft = ConsentRequestDraft {
            consent_expires_at: Some(now() - Duration::days(1)),
            subject_answered_at: Some(now() - Duration::days(2)),
            ..active_draft()
        };
        only_error(draft, CreationVariant::Active, "dataExpiracaoConsentimento");
    }

    #[test]
    fn pending_request_with_answer_date_is_rejected() {
        let draft = ConsentRequestDraft {
            subject_answered_at: Some(now() - Duration::hours(1)),
            ..pending_draft()
        };
        let message = only_error(
            draft,
            CreationVariant::Pending,
            "dataTitularRespondeuConsentimento",
        );
        assert_eq!(message, "não é aceito em solicitação pendente");
    }

    // --- provaColeta ---

    #[test]
    fn active_request_without_prova_coleta_is_rejected() {
        for proof in [None, Some(String::new()), Some(" \n ".to_string())] {
            let draft = ConsentRequestDraft {
                proof_of_collection: proof,
                ..active_draft()
            };
            let message = only_error(draft, CreationVariant::Active, "provaColeta");
            assert_eq!(message, "o campo é obrigatório");
        }
    }

    #[test]
    fn prova_coleta_longer_than_100000_characters_is_rejected() {
        let draft = ConsentRequestDraft {
            proof_of_collection: Some("x".repeat(MAX_PROOF_OF_COLLECTION + 1)),
            ..active_draft()
        };
        let message = only_error(draft, CreationVariant::Active, "provaColeta");
        assert!(message.contains("100000"), "{message}");
    }

    #[test]
    fn a_nul_character_in_the_template_or_the_proof_is_refused_by_name() {
        // PostgreSQL text cannot hold U+0000: a 422 naming the field, not a database error
        let draft = ConsentRequestDraft {
            template_id: Some("tpl\0".into()),
            ..active_draft()
        };
        let message = only_error(draft, CreationVariant::Active, "casoDeUsoIdTemplate");
        assert_eq!(message, NUL_CHARACTER_MESSAGE);
        let draft = ConsentRequestDraft {
            proof_of_collection: Some("assinatura\0".into()),
            ..active_draft()
        };
        let message = only_error(draft, CreationVariant::Active, "provaColeta");
        assert_eq!(message, NUL_CHARACTER_MESSAGE);
    }

    #[test]
    fn pending_request_with_prova_coleta_is_rejected_even_when_blank() {
        for proof in [PROOF, ""] {
            let draft = ConsentRequestDraft {
                proof_of_collection: Some(proof.into()),
                ..pending_draft()
            };
            let message = only_error(draft, CreationVariant::Pending, "provaColeta");
            assert_eq!(message, "não é aceito em solicitação pendente");
        }
    }

    // --- cnpjAnuente ---

    #[test]
    fn indireto_without_cnpj_anuente_is_rejected() {
        for (variant, draft) in both_variants() {
            for cnpj in [None, Some(String::new()), Some("  ".to_string())] {
                let draft = ConsentRequestDraft {
                    access_mode: Some("Indireto".into()),
                    consenting_cnpj: cnpj,
                    ..draft.clone()
                };
                let message = only_error(draft, variant, "cnpjAnuente");
                assert_eq!(
                    message,
                    "o CNPJ anuente é obrigatório quando a modalidade de acesso é Indireto"
                );
            }
        }
    }

    #[test]
    fn indireto_with_an_invalid_cnpj_anuente_uses_the_cnpj_error_message() {
        let draft = ConsentRequestDraft {
            access_mode: Some("Indireto".into()),
            consenting_cnpj: Some("11.222.333/0001-82".into()),
            ..active_draft()
        };
        let message = only_error(draft, CreationVariant::Active, "cnpjAnuente");
        assert_eq!(message, CnpjError::CheckDigits.to_string());
    }

    #[test]
    fn direto_with_an_invalid_cnpj_anuente_is_rejected() {
        for (raw, expected) in [
            ("1122233300018", CnpjError::Length),
            ("11.222.333/0001-8A", CnpjError::Characters),
            ("00000000000000", CnpjError::RepeatedDigits),
            ("12.ABC.345/01DE-36", CnpjError::CheckDigits),
        ] {
            let draft = ConsentRequestDraft {
                consenting_cnpj: Some(raw.into()),
                ..pending_draft()
            };
            let message = only_error(draft, CreationVariant::Pending, "cnpjAnuente");
            assert_eq!(message, expected.to_string(), "{raw}");
        }
    }

    #[test]
    fn invalid_modalidade_does_not_also_require_cnpj_anuente() {
        let draft = ConsentRequestDraft {
            access_mode: Some("indireto".into()),
            consenting_cnpj: None,
            ..active_draft()
        };
        only_error(draft, CreationVariant::Active, "modalidadeAcesso");
    }

    // --- several errors together ---

    #[test]
    fn empty_active_draft_reports_every_required_field_in_order() {
        let errors = errors_of(ConsentRequestDraft::default(), CreationVariant::Active);
        assert_eq!(
            fields(&errors),
            [
                "casoDeUsoIdTemplate",
                "cpfTitular",
                "modalidadeAcesso",
                "tipoTitular",
                "dataExpiracaoConsentimento",
                "dataTitularRespondeuConsentimento",
                "provaColeta",
            ]
        );
    }

    #[test]
    fn empty_pending_draft_reports_the_five_common_required_fields() {
        let errors = errors_of(ConsentRequestDraft::default(), CreationVariant::Pending);
        assert_eq!(
            fields(&errors),
            [
                "casoDeUsoIdTemplate",
                "cpfTitular",
                "modalidadeAcesso",
                "tipoTitular",
                "dataExpiracaoConsentimento",
            ]
        );
    }

    #[test]
    fn several_broken_rules_are_reported_together() {
        let draft = ConsentRequestDraft {
            subject_cpf: Some("111.111.111-11".into()),
            access_mode: Some("Indireto".into()),
            consent_expires_at: Some(now() - Duration::days(1)),
            subject_answered_at: Some(now() - Duration::hours(1)),
            proof_of_collection: Some(PROOF.into()),
            consenting_cnpj: None,
            ..pending_draft()
        };
        let errors = errors_of(draft, CreationVariant::Pending);
        assert_eq!(
            fields(&errors),
            [
                "cpfTitular",
                "dataExpiracaoConsentimento",
                "dataTitularRespondeuConsentimento",
                "provaColeta",
                "cnpjAnuente",
            ]
        );
        assert_eq!(errors.to_string(), "5 campos inválidos");
    }

    #[test]
    fn each_field_is_reported_at_most_once() {
        let draft = ConsentRequestDraft {
            consent_expires_at: Some(now() - Duration::days(1)),
            subject_answered_at: Some(now() + Duration::days(1)),
            ..active_draft()
        };
        let errors = errors_of(draft, CreationVariant::Active);
        assert_eq!(
            fields(&errors),
            [
                "dataExpiracaoConsentimento",
                "dataTitularRespondeuConsentimento"
            ]
        );
    }

    // --- personal data ---

    #[test]
    fn error_messages_never_contain_the_submitted_personal_data() {
        let cpf = "529.982.247-26";
        let cnpj = "11.222.333/0001-82";
        let proof = format!("prova-secreta-{}", "y".repeat(MAX_PROOF_OF_COLLECTION));
        let draft = ConsentRequestDraft {
            subject_cpf: Some(cpf.into()),
            consenting_cnpj: Some(cnpj.into()),
            proof_of_collection: Some(proof),
            ..active_draft()
        };
        let errors = errors_of(draft, CreationVariant::Active);
        assert_eq!(
            fields(&errors),
            ["cpfTitular", "provaColeta", "cnpjAnuente"]
        );
        let rendered = format!("{errors:?} {errors}");
        for secret in [cpf, "52998224726", cnpj, "11222333000182", "prova-secreta"] {
            assert!(!rendered.contains(secret), "{secret} leaked");
        }
    }

    #[test]
    fn debug_of_a_valid_request_hides_the_cpf_and_the_proof() {
        let valid = active_draft()
            .validate(CreationVariant::Active, now())
            .unwrap();
        let debug = format!("{valid:?}");
        assert!(!debug.contains("12345678909"), "{debug}");
        assert!(!debug.contains(PROOF), "{debug}");
        assert!(debug.contains("***.456.789-**"), "{debug}");
    }

    // --- enumerations ---

    #[test]
    fn modalidade_parse_round_trips_with_as_str() {
        for m in [AccessMode::Direct, AccessMode::Indirect] {
            assert_eq!(AccessMode::parse(m.as_str()), Some(m));
        }
        assert_eq!(AccessMode::parse("direto"), None);
    }

    #[test]
    fn tipo_titular_parse_round_trips_with_as_str() {
        let t = SubjectType::NaturalPerson;
        assert_eq!(SubjectType::parse(t.as_str()), Some(t));
        assert_eq!(SubjectType::parse("PessoaJuridica"), None);
    }

    // --- effective status ---

    fn stored(status: ConsentStatus) -> ConsentRequest {
        ConsentRequest {
            id: Uuid::from_u128(1),
            company_id: CompanyId(Uuid::from_u128(2)),
            content: active_draft()
                .validate(CreationVariant::Active, now())
                .unwrap(),
            status,
            pgcc_id: "pgcc-1".into(),
            hash: "0".repeat(64),
            hash_salt: "00112233445566778899aabbccddeeff".into(),
            created_at: now(),
            updated_at: now(),
            use_case_version: Some(1),
        }
    }

    fn expiry_of(request: &ConsentRequest) -> DateTime<Utc> {
        request.content.consent_expires_at
    }

    #[test]
    fn before_its_expiry_a_request_reports_its_stored_status() {
        for status in ConsentStatus::ALL {
            let request = stored(status);
            let just_before = expiry_of(&request) - Duration::microseconds(1);
            assert_eq!(request.effective_status(now()), status, "{status:?}");
            assert_eq!(request.effective_status(just_before), status, "{status:?}");
        }
    }

    #[test]
    fn a_pending_or_active_request_is_expired_at_the_very_instant_of_its_expiry() {
        for status in [ConsentStatus::Pending, ConsentStatus::Active] {
            let request = stored(status);
            assert_eq!(
                request.effective_status(expiry_of(&request)),
                ConsentStatus::Expired,
                "{status:?}"
            );
        }
    }

    #[test]
    fn a_pending_or_active_request_is_expired_after_its_expiry() {
        for status in [ConsentStatus::Pending, ConsentStatus::Active] {
            let request = stored(status);
            let later = expiry_of(&request) + Duration::days(30);
            assert_eq!(
                request.effective_status(later),
                ConsentStatus::Expired,
                "{status:?}"
            );
        }
    }

    #[test]
    fn a_terminal_request_keeps_its_stored_status_after_its_expiry() {
        for status in [
            ConsentStatus::Refused,
            ConsentStatus::Expired,
            ConsentStatus::Revoked,
        ] {
            let request = stored(status);
            let later = expiry_of(&request) + Duration::days(30);
            assert_eq!(request.effective_status(later), status, "{status:?}");
        }
    }

    #[test]
    fn an_active_request_is_valid_until_just_before_its_expiry() {
        let request = stored(ConsentStatus::Active);
        assert!(request.is_valid_at(now()));
        assert!(request.is_valid_at(expiry_of(&request) - Duration::microseconds(1)));
    }

    #[test]
    fn an_active_request_is_not_valid_from_the_instant_of_its_expiry() {
        let request = stored(ConsentStatus::Active);
        assert!(!request.is_valid_at(expiry_of(&request)));
        assert!(!request.is_valid_at(expiry_of(&request) + Duration::seconds(1)));
    }

    #[test]
    fn a_request_that_is_not_active_is_never_valid() {
        for status in [
            ConsentStatus::Pending,
            ConsentStatus::Refused,
            ConsentStatus::Expired,
            ConsentStatus::Revoked,
        ] {
            assert!(!stored(status).is_valid_at(now()), "{status:?}");
        }
    }
}
