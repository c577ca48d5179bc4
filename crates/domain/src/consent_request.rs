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
pub enum ModalidadeAcesso {
    /// `Direto`: no consenting company; `cnpjAnuente` is optional.
    Direto,
    /// `Indireto`: access through a consenting company, whose CNPJ (`cnpjAnuente`) is required.
    Indireto,
}

impl ModalidadeAcesso {
    /// The wire name: `"Direto"` or `"Indireto"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ModalidadeAcesso::Direto => "Direto",
            ModalidadeAcesso::Indireto => "Indireto",
        }
    }

    /// The wire name, exact spelling only (`"Direto"`, `"Indireto"`).
    pub fn parse(raw: &str) -> Option<ModalidadeAcesso> {
        match raw {
            "Direto" => Some(ModalidadeAcesso::Direto),
            "Indireto" => Some(ModalidadeAcesso::Indireto),
            _ => None,
        }
    }
}

/// The kind of data subject (`tipoTitular`): only natural persons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TipoTitular {
    /// `PessoaFisica`: a natural person, identified by a CPF.
    PessoaFisica,
}

impl TipoTitular {
    /// The wire name: `"PessoaFisica"`.
    pub fn as_str(self) -> &'static str {
        "PessoaFisica"
    }

    /// The wire name, exact spelling only (`"PessoaFisica"`).
    pub fn parse(raw: &str) -> Option<TipoTitular> {
        (raw == "PessoaFisica").then_some(TipoTitular::PessoaFisica)
    }
}

/// The body of a creation request as received: every field optional and the enumerations as
/// text, so that each broken rule is reported by field (422) instead of failing decoding (400).
///
/// Unlike the validated types, its `Debug` shows the raw CPF and proof of consent: do not log a
/// draft.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsentRequestDraft {
    /// `casoDeUsoIdTemplate`: the PGCC template id of one of the company's use cases.
    pub caso_de_uso_id_template: Option<String>,
    /// `cpfTitular`: the data subject's CPF, formatted or digits only.
    pub cpf_titular: Option<String>,
    /// `modalidadeAcesso`: `Direto` or `Indireto`, as text.
    pub modalidade_acesso: Option<String>,
    /// `tipoTitular`: `PessoaFisica`, as text.
    pub tipo_titular: Option<String>,
    /// `dataExpiracaoConsentimento`: when the consent stops holding.
    pub data_expiracao_consentimento: Option<DateTime<Utc>>,
    /// `dataTitularRespondeuConsentimento`: when the subject answered (active requests only).
    pub data_titular_respondeu_consentimento: Option<DateTime<Utc>>,
    /// `provaColeta`: the proof that the subject consented (active requests only).
    pub prova_coleta: Option<String>,
    /// `cnpjAnuente`: the consenting company's CNPJ (required for `Indireto`).
    pub cnpj_anuente: Option<String>,
}

/// The subject's answer, present only on requests created active.
#[derive(Clone, PartialEq, Eq)]
pub struct ActiveAnswer {
    /// When the subject answered; before the request's expiry and not in the future.
    pub data_titular_respondeu_consentimento: DateTime<Utc>,
    /// Proof of consent: personal data, never logged.
    pub prova_coleta: String,
}

impl std::fmt::Debug for ActiveAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActiveAnswer")
            .field(
                "data_titular_respondeu_consentimento",
                &self.data_titular_respondeu_consentimento,
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
    pub caso_de_uso_id_template: String,
    /// `cpfTitular`, checked and normalized.
    pub cpf_titular: Cpf,
    /// `modalidadeAcesso`.
    pub modalidade_acesso: ModalidadeAcesso,
    /// `tipoTitular`.
    pub tipo_titular: TipoTitular,
    /// `dataExpiracaoConsentimento`; after the instant of validation.
    pub data_expiracao_consentimento: DateTime<Utc>,
    /// `Some` exactly when `variant` is `Active`.
    pub resposta: Option<ActiveAnswer>,
    /// `cnpjAnuente`, checked and normalized; always `Some` for `Indireto`.
    pub cnpj_anuente: Option<Cnpj>,
}

impl ConsentRequestDraft {
    /// Checks every rule of `variant` at instant `now` and reports all broken ones, each under
    /// the JSON name of its field:
    /// - required (both variants): casoDeUsoIdTemplate (non-blank, at most
    ///   [`MAX_CASO_DE_USO_ID_TEMPLATE`] characters once trimmed, no U+0000), cpfTitular (valid CPF),
    ///   modalidadeAcesso (`Direto` | `Indireto`, exact spelling), tipoTitular (`PessoaFisica`
    ///   only), dataExpiracaoConsentimento (strictly after `now`);
    /// - cnpjAnuente: required and valid for `Indireto`; when given for `Direto`, must be valid
    ///   (a blank string counts as absent);
    /// - active: dataTitularRespondeuConsentimento required, not after `now`, strictly before the
    ///   expiry; provaColeta required and non-blank (at most [`MAX_PROVA_COLETA`] characters, no
    ///   U+0000);
    /// - pending: dataTitularRespondeuConsentimento and provaColeta must be absent (`None`; an
    ///   empty string is still present).
    ///
    /// Each field is reported at most once (its first broken rule), in the order above; no
    /// message quotes the submitted value. On success the template is trimmed, the CPF and CNPJ
    /// are normalized, and `resposta` is `Some` exactly for [`CreationVariant::Active`].
    pub fn validate(
        self,
        variant: CreationVariant,
        now: DateTime<Utc>,
    ) -> Result<ValidConsentRequest, ValidationErrors> {
        let mut errors = ValidationErrors::default();

        let template = match non_blank(self.caso_de_uso_id_template.as_deref()).map(str::trim) {
            None => reject(
                &mut errors,
                campo::CASO_DE_USO_ID_TEMPLATE,
                msg::OBRIGATORIO,
            ),
            Some(t) if t.chars().count() > MAX_CASO_DE_USO_ID_TEMPLATE => reject(
                &mut errors,
                campo::CASO_DE_USO_ID_TEMPLATE,
                msg::TEMPLATE_LONGO,
            ),
            Some(t) if t.contains('\0') => reject(
                &mut errors,
                campo::CASO_DE_USO_ID_TEMPLATE,
                NUL_CHARACTER_MESSAGE,
            ),
            Some(t) => Some(t.to_owned()),
        };

        let cpf = match non_blank(self.cpf_titular.as_deref()) {
            None => reject(&mut errors, campo::CPF_TITULAR, msg::OBRIGATORIO),
            Some(raw) => Cpf::parse(raw)
                .map_err(|e| errors.push(campo::CPF_TITULAR, e.to_string()))
                .ok(),
        };

        let modalidade = match non_blank(self.modalidade_acesso.as_deref()) {
            None => reject(&mut errors, campo::MODALIDADE_ACESSO, msg::OBRIGATORIO),
            Some(raw) => ModalidadeAcesso::parse(raw).or_else(|| {
                reject(
                    &mut errors,
                    campo::MODALIDADE_ACESSO,
                    msg::MODALIDADE_INVALIDA,
                )
            }),
        };

        let tipo = match non_blank(self.tipo_titular.as_deref()) {
            None => reject(&mut errors, campo::TIPO_TITULAR, msg::OBRIGATORIO),
            Some(raw) => TipoTitular::parse(raw)
                .or_else(|| reject(&mut errors, campo::TIPO_TITULAR, msg::TIPO_TITULAR_INVALIDO)),
        };

        let expiracao = match self.data_expiracao_consentimento {
            None => reject(&mut errors, campo::DATA_EXPIRACAO, msg::OBRIGATORIO),
            Some(exp) if exp <= now => {
                reject(&mut errors, campo::DATA_EXPIRACAO, msg::EXPIRACAO_PASSADA)
            }
            Some(exp) => Some(exp),
        };

        // `Some(answer)` when the answer rules of the variant hold: `Some(Some(_))` for active,
        // `Some(None)` for pending.
        let resposta = match variant {
            CreationVariant::Active => {
                let respondeu = match self.data_titular_respondeu_consentimento {
                    None => reject(&mut errors, campo::DATA_RESPOSTA, msg::OBRIGATORIO),
                    Some(r) if r > now => {
                        reject(&mut errors, campo::DATA_RESPOSTA, msg::RESPOSTA_FUTURA)
                    }
                    Some(r)
                        if self
                            .data_expiracao_consentimento
                            .is_some_and(|exp| r >= exp) =>
                    {
                        reject(
                            &mut errors,
                            campo::DATA_RESPOSTA,
                            msg::RESPOSTA_APOS_EXPIRACAO,
                        )
                    }
                    Some(r) => Some(r),
                };
                let prova = match self.prova_coleta {
                    None => reject(&mut errors, campo::PROVA_COLETA, msg::OBRIGATORIO),
                    Some(p) if p.trim().is_empty() => {
                        reject(&mut errors, campo::PROVA_COLETA, msg::OBRIGATORIO)
                    }
                    Some(p) if p.chars().count() > MAX_PROVA_COLETA => {
                        reject(&mut errors, campo::PROVA_COLETA, msg::PROVA_LONGA)
                    }
                    Some(p) if p.contains('\0') => {
                        reject(&mut errors, campo::PROVA_COLETA, NUL_CHARACTER_MESSAGE)
                    }
                    Some(p) => Some(p),
                };
                respondeu.zip(prova).map(|(data, prova_coleta)| {
                    Some(ActiveAnswer {
                        data_titular_respondeu_consentimento: data,
                        prova_coleta,
                    })
                })
            }
            CreationVariant::Pending => {
                if self.data_titular_respondeu_consentimento.is_some() {
                    errors.push(campo::DATA_RESPOSTA, msg::NAO_ACEITO_EM_PENDENTE);
                }
                if self.prova_coleta.is_some() {
                    errors.push(campo::PROVA_COLETA, msg::NAO_ACEITO_EM_PENDENTE);
                }
                Some(None)
            }
        };

        let cnpj = match non_blank(self.cnpj_anuente.as_deref()) {
            None if modalidade == Some(ModalidadeAcesso::Indireto) => reject(
                &mut errors,
                campo::CNPJ_ANUENTE,
                msg::CNPJ_OBRIGATORIO_INDIRETO,
            ),
            None => None,
            Some(raw) => Cnpj::parse(raw)
                .map_err(|e| errors.push(campo::CNPJ_ANUENTE, e.to_string()))
                .ok(),
        };

        match (template, cpf, modalidade, tipo, expiracao, resposta) {
            (
                Some(template),
                Some(cpf),
                Some(modalidade),
                Some(tipo),
                Some(expiracao),
                Some(resposta),
            ) if errors.is_empty() => Ok(ValidConsentRequest {
                variant,
                caso_de_uso_id_template: template,
                cpf_titular: cpf,
                modalidade_acesso: modalidade,
                tipo_titular: tipo,
                data_expiracao_consentimento: expiracao,
                resposta,
                cnpj_anuente: cnpj,
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
pub const MAX_CASO_DE_USO_ID_TEMPLATE: usize = 200;
/// Longest accepted `provaColeta`, in characters.
pub const MAX_PROVA_COLETA: usize = 100_000;

/// The JSON names of the fields of a consent request, as reported in [`ValidationErrors`].
pub mod campo {
    /// The use case template id.
    pub const CASO_DE_USO_ID_TEMPLATE: &str = "casoDeUsoIdTemplate";
    /// The data subject's CPF.
    pub const CPF_TITULAR: &str = "cpfTitular";
    /// The access modality.
    pub const MODALIDADE_ACESSO: &str = "modalidadeAcesso";
    /// The kind of data subject.
    pub const TIPO_TITULAR: &str = "tipoTitular";
    /// The expiry of the consent.
    pub const DATA_EXPIRACAO: &str = "dataExpiracaoConsentimento";
    /// When the subject answered.
    pub const DATA_RESPOSTA: &str = "dataTitularRespondeuConsentimento";
    /// The proof of consent.
    pub const PROVA_COLETA: &str = "provaColeta";
    /// The consenting company's CNPJ.
    pub const CNPJ_ANUENTE: &str = "cnpjAnuente";
}

/// Messages of the broken rules. None of them quotes the submitted value: a CPF, a CNPJ or a
/// proof of consent is personal data and must never appear in an error.
mod msg {
    pub const OBRIGATORIO: &str = "o campo é obrigatório";
    pub const TEMPLATE_LONGO: &str =
        "o identificador do template deve ter no máximo 200 caracteres";
    pub const MODALIDADE_INVALIDA: &str = "a modalidade de acesso deve ser Direto ou Indireto";
    pub const TIPO_TITULAR_INVALIDO: &str = "o tipo de titular deve ser PessoaFisica";
    pub const EXPIRACAO_PASSADA: &str = "a data de expiração deve ser posterior ao momento atual";
    pub const RESPOSTA_FUTURA: &str = "a data da resposta do titular não pode estar no futuro";
    pub const RESPOSTA_APOS_EXPIRACAO: &str =
        "a data da resposta do titular deve ser anterior à data de expiração";
    pub const PROVA_LONGA: &str = "a prova de coleta deve ter no máximo 100000 caracteres";
    pub const NAO_ACEITO_EM_PENDENTE: &str = "não é aceito em solicitação pendente";
    pub const CNPJ_OBRIGATORIO_INDIRETO: &str =
        "o CNPJ anuente é obrigatório quando a modalidade de acesso é Indireto";
}

/// Records a broken rule of `campo` and yields no value for it.
fn reject<T>(errors: &mut ValidationErrors, campo: &str, mensagem: &str) -> Option<T> {
    errors.push(campo, mensagem);
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
    pub empresa_id: CompanyId,
    /// What the company submitted, validated.
    pub dados: ValidConsentRequest,
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
    pub criado_em: DateTime<Utc>,
    /// When it last changed (`atualizadoEm`).
    pub atualizado_em: DateTime<Utc>,
}

impl ConsentRequest {
    /// The status to report at `now`: a `pendente` or `ativo` request whose expiry is not after
    /// `now` is `expirado`, even before the expiry worker has stored it.
    pub fn effective_status(&self, now: DateTime<Utc>) -> ConsentStatus {
        match self.status {
            ConsentStatus::Pendente | ConsentStatus::Ativo
                if self.dados.data_expiracao_consentimento <= now =>
            {
                ConsentStatus::Expirado
            }
            stored => stored,
        }
    }

    /// Whether the consent holds at `now`: effectively `ativo`.
    pub fn is_valid_at(&self, now: DateTime<Utc>) -> bool {
        self.effective_status(now) == ConsentStatus::Ativo
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};

    use super::*;
    use crate::{CnpjError, CpfError};

    const CPF: &str = "123.456.789-09";
    const CNPJ: &str = "11.222.333/0001-81";
    const PROVA: &str = "assinatura-digital-do-titular";

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 6, 1, 12, 0, 0).unwrap()
    }

    fn active_draft() -> ConsentRequestDraft {
        ConsentRequestDraft {
            caso_de_uso_id_template: Some("tpl-marketing".into()),
            cpf_titular: Some(CPF.into()),
            modalidade_acesso: Some("Direto".into()),
            tipo_titular: Some("PessoaFisica".into()),
            data_expiracao_consentimento: Some(now() + Duration::days(365)),
            data_titular_respondeu_consentimento: Some(now() - Duration::hours(1)),
            prova_coleta: Some(PROVA.into()),
            cnpj_anuente: None,
        }
    }

    fn pending_draft() -> ConsentRequestDraft {
        ConsentRequestDraft {
            data_titular_respondeu_consentimento: None,
            prova_coleta: None,
            ..active_draft()
        }
    }

    fn errors_of(draft: ConsentRequestDraft, variant: CreationVariant) -> ValidationErrors {
        draft
            .validate(variant, now())
            .expect_err("the draft should be rejected")
    }

    fn campos(errors: &ValidationErrors) -> Vec<&str> {
        errors.fields().iter().map(|e| e.campo.as_str()).collect()
    }

    /// Exactly one error, on `campo`; returns its message.
    fn only_error(draft: ConsentRequestDraft, variant: CreationVariant, campo: &str) -> String {
        let errors = errors_of(draft, variant);
        assert_eq!(campos(&errors), [campo], "{errors:?}");
        errors.0.into_iter().next().unwrap().mensagem
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
        assert_eq!(valid.caso_de_uso_id_template, "tpl-marketing");
        assert_eq!(valid.cpf_titular.as_str(), "12345678909");
        assert_eq!(valid.modalidade_acesso, ModalidadeAcesso::Direto);
        assert_eq!(valid.tipo_titular, TipoTitular::PessoaFisica);
        assert_eq!(
            valid.data_expiracao_consentimento,
            now() + Duration::days(365)
        );
        assert_eq!(
            valid.resposta,
            Some(ActiveAnswer {
                data_titular_respondeu_consentimento: now() - Duration::hours(1),
                prova_coleta: PROVA.into(),
            })
        );
        assert_eq!(valid.cnpj_anuente, None);
    }

    #[test]
    fn fully_valid_pending_request_is_accepted_without_an_answer() {
        let valid = pending_draft()
            .validate(CreationVariant::Pending, now())
            .unwrap();
        assert_eq!(valid.variant, CreationVariant::Pending);
        assert_eq!(valid.cpf_titular.as_str(), "12345678909");
        assert_eq!(valid.resposta, None);
        assert_eq!(valid.cnpj_anuente, None);
    }

    #[test]
    fn template_is_trimmed() {
        let draft = ConsentRequestDraft {
            caso_de_uso_id_template: Some("  tpl-1 \t".into()),
            ..active_draft()
        };
        let valid = draft.validate(CreationVariant::Active, now()).unwrap();
        assert_eq!(valid.caso_de_uso_id_template, "tpl-1");
    }

    #[test]
    fn template_of_exactly_200_characters_after_trimming_is_accepted() {
        let draft = ConsentRequestDraft {
            caso_de_uso_id_template: Some(format!("  {}  ", "é".repeat(200))),
            ..active_draft()
        };
        let valid = draft.validate(CreationVariant::Active, now()).unwrap();
        assert_eq!(valid.caso_de_uso_id_template.chars().count(), 200);
    }

    #[test]
    fn indireto_with_a_valid_cnpj_anuente_is_accepted_and_normalized() {
        for (variant, draft) in both_variants() {
            let draft = ConsentRequestDraft {
                modalidade_acesso: Some("Indireto".into()),
                cnpj_anuente: Some("12.abc.345/01de-35".into()),
                ..draft
            };
            let valid = draft.validate(variant, now()).unwrap();
            assert_eq!(valid.modalidade_acesso, ModalidadeAcesso::Indireto);
            assert_eq!(
                valid.cnpj_anuente.as_ref().map(Cnpj::as_str),
                Some("12ABC34501DE35")
            );
        }
    }

    #[test]
    fn direto_with_a_valid_cnpj_anuente_keeps_it() {
        let draft = ConsentRequestDraft {
            cnpj_anuente: Some(CNPJ.into()),
            ..active_draft()
        };
        let valid = draft.validate(CreationVariant::Active, now()).unwrap();
        assert_eq!(
            valid.cnpj_anuente.as_ref().map(Cnpj::as_str),
            Some("11222333000181")
        );
    }

    #[test]
    fn direto_with_a_blank_cnpj_anuente_treats_it_as_absent() {
        for blank in ["", "   "] {
            let draft = ConsentRequestDraft {
                cnpj_anuente: Some(blank.into()),
                ..active_draft()
            };
            let valid = draft.validate(CreationVariant::Active, now()).unwrap();
            assert_eq!(valid.cnpj_anuente, None);
        }
    }

    #[test]
    fn answer_given_exactly_now_is_accepted() {
        let draft = ConsentRequestDraft {
            data_titular_respondeu_consentimento: Some(now()),
            ..active_draft()
        };
        assert!(draft.validate(CreationVariant::Active, now()).is_ok());
    }

    #[test]
    fn expiry_one_second_after_now_is_accepted() {
        let draft = ConsentRequestDraft {
            data_expiracao_consentimento: Some(now() + Duration::seconds(1)),
            ..pending_draft()
        };
        assert!(draft.validate(CreationVariant::Pending, now()).is_ok());
    }

    #[test]
    fn prova_coleta_of_exactly_100000_characters_is_accepted() {
        let draft = ConsentRequestDraft {
            prova_coleta: Some("x".repeat(MAX_PROVA_COLETA)),
            ..active_draft()
        };
        assert!(draft.validate(CreationVariant::Active, now()).is_ok());
    }

    // --- casoDeUsoIdTemplate ---

    #[test]
    fn missing_template_is_reported_on_caso_de_uso_id_template_only() {
        for (variant, draft) in both_variants() {
            let draft = ConsentRequestDraft {
                caso_de_uso_id_template: None,
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
                caso_de_uso_id_template: Some(" \t ".into()),
                ..draft
            };
            let message = only_error(draft, variant, "casoDeUsoIdTemplate");
            assert_eq!(message, "o campo é obrigatório");
        }
    }

    #[test]
    fn template_longer_than_200_characters_is_rejected() {
        let draft = ConsentRequestDraft {
            caso_de_uso_id_template: Some("a".repeat(201)),
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
                    cpf_titular: cpf,
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
                cpf_titular: Some("123.456.789-00".into()),
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
                cpf_titular: Some(raw.into()),
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
                modalidade_acesso: None,
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
                modalidade_acesso: Some(raw.into()),
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
                tipo_titular: None,
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
                tipo_titular: Some(raw.into()),
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
                data_expiracao_consentimento: None,
                ..draft
            };
            let message = only_error(draft, variant, "dataExpiracaoConsentimento");
            assert_eq!(message, "o campo é obrigatório");
        }
    }

    #[test]
    fn expiry_equal_to_now_is_rejected() {
        let draft = ConsentRequestDraft {
            data_expiracao_consentimento: Some(now()),
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
            data_expiracao_consentimento: Some(now() - Duration::days(1)),
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
            data_titular_respondeu_consentimento: None,
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
            data_titular_respondeu_consentimento: Some(now() + Duration::seconds(1)),
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
                data_expiracao_consentimento: Some(expiry),
                data_titular_respondeu_consentimento: Some(answer),
                ..active_draft()
            };
            let errors = errors_of(draft, CreationVariant::Active);
            assert_eq!(
                campos(&errors),
                [
                    "dataExpiracaoConsentimento",
                    "dataTitularRespondeuConsentimento"
                ]
            );
            assert_eq!(
                errors.fields()[1].mensagem,
                "a data da resposta do titular deve ser anterior à data de expiração"
            );
        }
    }

    #[test]
    fn answer_date_before_an_expired_expiry_is_only_an_expiry_error() {
        let draft = ConsentRequestDraft {
            data_expiracao_consentimento: Some(now() - Duration::days(1)),
            data_titular_respondeu_consentimento: Some(now() - Duration::days(2)),
            ..active_draft()
        };
        only_error(draft, CreationVariant::Active, "dataExpiracaoConsentimento");
    }

    #[test]
    fn pending_request_with_answer_date_is_rejected() {
        let draft = ConsentRequestDraft {
            data_titular_respondeu_consentimento: Some(now() - Duration::hours(1)),
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
        for prova in [None, Some(String::new()), Some(" \n ".to_string())] {
            let draft = ConsentRequestDraft {
                prova_coleta: prova,
                ..active_draft()
            };
            let message = only_error(draft, CreationVariant::Active, "provaColeta");
            assert_eq!(message, "o campo é obrigatório");
        }
    }

    #[test]
    fn prova_coleta_longer_than_100000_characters_is_rejected() {
        let draft = ConsentRequestDraft {
            prova_coleta: Some("x".repeat(MAX_PROVA_COLETA + 1)),
            ..active_draft()
        };
        let message = only_error(draft, CreationVariant::Active, "provaColeta");
        assert!(message.contains("100000"), "{message}");
    }

    #[test]
    fn a_nul_character_in_the_template_or_the_proof_is_refused_by_name() {
        // PostgreSQL text cannot hold U+0000: a 422 naming the field, not a database error
        let draft = ConsentRequestDraft {
            caso_de_uso_id_template: Some("tpl\0".into()),
            ..active_draft()
        };
        let message = only_error(draft, CreationVariant::Active, "casoDeUsoIdTemplate");
        assert_eq!(message, NUL_CHARACTER_MESSAGE);
        let draft = ConsentRequestDraft {
            prova_coleta: Some("assinatura\0".into()),
            ..active_draft()
        };
        let message = only_error(draft, CreationVariant::Active, "provaColeta");
        assert_eq!(message, NUL_CHARACTER_MESSAGE);
    }

    #[test]
    fn pending_request_with_prova_coleta_is_rejected_even_when_blank() {
        for prova in [PROVA, ""] {
            let draft = ConsentRequestDraft {
                prova_coleta: Some(prova.into()),
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
                    modalidade_acesso: Some("Indireto".into()),
                    cnpj_anuente: cnpj,
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
            modalidade_acesso: Some("Indireto".into()),
            cnpj_anuente: Some("11.222.333/0001-82".into()),
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
                cnpj_anuente: Some(raw.into()),
                ..pending_draft()
            };
            let message = only_error(draft, CreationVariant::Pending, "cnpjAnuente");
            assert_eq!(message, expected.to_string(), "{raw}");
        }
    }

    #[test]
    fn invalid_modalidade_does_not_also_require_cnpj_anuente() {
        let draft = ConsentRequestDraft {
            modalidade_acesso: Some("indireto".into()),
            cnpj_anuente: None,
            ..active_draft()
        };
        only_error(draft, CreationVariant::Active, "modalidadeAcesso");
    }

    // --- several errors together ---

    #[test]
    fn empty_active_draft_reports_every_required_field_in_order() {
        let errors = errors_of(ConsentRequestDraft::default(), CreationVariant::Active);
        assert_eq!(
            campos(&errors),
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
            campos(&errors),
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
            cpf_titular: Some("111.111.111-11".into()),
            modalidade_acesso: Some("Indireto".into()),
            data_expiracao_consentimento: Some(now() - Duration::days(1)),
            data_titular_respondeu_consentimento: Some(now() - Duration::hours(1)),
            prova_coleta: Some(PROVA.into()),
            cnpj_anuente: None,
            ..pending_draft()
        };
        let errors = errors_of(draft, CreationVariant::Pending);
        assert_eq!(
            campos(&errors),
            [
                "cpfTitular",
                "dataExpiracaoConsentimento",
                "dataTitularRespondeuConsentimento",
                "provaColeta",
                "cnpjAnuente",
            ]
        );
        assert_eq!(errors.to_string(), "5 campo(s) inválido(s)");
    }

    #[test]
    fn each_field_is_reported_at_most_once() {
        let draft = ConsentRequestDraft {
            data_expiracao_consentimento: Some(now() - Duration::days(1)),
            data_titular_respondeu_consentimento: Some(now() + Duration::days(1)),
            ..active_draft()
        };
        let errors = errors_of(draft, CreationVariant::Active);
        assert_eq!(
            campos(&errors),
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
        let prova = format!("prova-secreta-{}", "y".repeat(MAX_PROVA_COLETA));
        let draft = ConsentRequestDraft {
            cpf_titular: Some(cpf.into()),
            cnpj_anuente: Some(cnpj.into()),
            prova_coleta: Some(prova),
            ..active_draft()
        };
        let errors = errors_of(draft, CreationVariant::Active);
        assert_eq!(
            campos(&errors),
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
        assert!(!debug.contains(PROVA), "{debug}");
        assert!(debug.contains("***.456.789-**"), "{debug}");
    }

    // --- enumerations ---

    #[test]
    fn modalidade_parse_round_trips_with_as_str() {
        for m in [ModalidadeAcesso::Direto, ModalidadeAcesso::Indireto] {
            assert_eq!(ModalidadeAcesso::parse(m.as_str()), Some(m));
        }
        assert_eq!(ModalidadeAcesso::parse("direto"), None);
    }

    #[test]
    fn tipo_titular_parse_round_trips_with_as_str() {
        let t = TipoTitular::PessoaFisica;
        assert_eq!(TipoTitular::parse(t.as_str()), Some(t));
        assert_eq!(TipoTitular::parse("PessoaJuridica"), None);
    }

    // --- effective status ---

    fn stored(status: ConsentStatus) -> ConsentRequest {
        ConsentRequest {
            id: Uuid::from_u128(1),
            empresa_id: CompanyId(Uuid::from_u128(2)),
            dados: active_draft()
                .validate(CreationVariant::Active, now())
                .unwrap(),
            status,
            pgcc_id: "pgcc-1".into(),
            hash: "0".repeat(64),
            hash_salt: "00112233445566778899aabbccddeeff".into(),
            criado_em: now(),
            atualizado_em: now(),
        }
    }

    fn expiry_of(request: &ConsentRequest) -> DateTime<Utc> {
        request.dados.data_expiracao_consentimento
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
        for status in [ConsentStatus::Pendente, ConsentStatus::Ativo] {
            let request = stored(status);
            assert_eq!(
                request.effective_status(expiry_of(&request)),
                ConsentStatus::Expirado,
                "{status:?}"
            );
        }
    }

    #[test]
    fn a_pending_or_active_request_is_expired_after_its_expiry() {
        for status in [ConsentStatus::Pendente, ConsentStatus::Ativo] {
            let request = stored(status);
            let later = expiry_of(&request) + Duration::days(30);
            assert_eq!(
                request.effective_status(later),
                ConsentStatus::Expirado,
                "{status:?}"
            );
        }
    }

    #[test]
    fn a_terminal_request_keeps_its_stored_status_after_its_expiry() {
        for status in [
            ConsentStatus::Recusado,
            ConsentStatus::Expirado,
            ConsentStatus::Revogado,
        ] {
            let request = stored(status);
            let later = expiry_of(&request) + Duration::days(30);
            assert_eq!(request.effective_status(later), status, "{status:?}");
        }
    }

    #[test]
    fn an_active_request_is_valid_until_just_before_its_expiry() {
        let request = stored(ConsentStatus::Ativo);
        assert!(request.is_valid_at(now()));
        assert!(request.is_valid_at(expiry_of(&request) - Duration::microseconds(1)));
    }

    #[test]
    fn an_active_request_is_not_valid_from_the_instant_of_its_expiry() {
        let request = stored(ConsentStatus::Ativo);
        assert!(!request.is_valid_at(expiry_of(&request)));
        assert!(!request.is_valid_at(expiry_of(&request) + Duration::seconds(1)));
    }

    #[test]
    fn a_request_that_is_not_active_is_never_valid() {
        for status in [
            ConsentStatus::Pendente,
            ConsentStatus::Recusado,
            ConsentStatus::Expirado,
            ConsentStatus::Revogado,
        ] {
            assert!(!stored(status).is_valid_at(now()), "{status:?}");
        }
    }
}
