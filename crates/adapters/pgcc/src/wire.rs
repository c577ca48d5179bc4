//! The JSON bodies of the PGCC contract (`docs/pgcc.md`), in its wire names.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use uuid::Uuid;

/// `raw` without U+0000 and the other C0 control characters (U+0001 to U+001F).
///
/// Every string the PGCC sends us is free text as far as we know, and PostgreSQL refuses a NUL
/// in `text`: one such character in a reason made the whole status round fail, every round, for
/// every company in the batch. The other C0 controls are dropped too: nothing the PGCC names (an
/// id, a title, a template, a reason) needs them, and a log or a webhook payload is safer without.
pub fn without_controls(raw: String) -> String {
    if raw.chars().any(is_c0_control) {
        raw.chars().filter(|c| !is_c0_control(*c)).collect()
    } else {
        raw
    }
}

fn is_c0_control(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{1f}')
}

/// A string of the PGCC's answer, read through [`without_controls`].
fn clean_string<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    String::deserialize(deserializer).map(without_controls)
}

/// `GET /pgcc/v1/empresas/{cnpj}/casos-de-uso`
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CasosDeUsoResponse {
    pub vinculos: Vec<Vinculo>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Vinculo {
    pub id: Uuid,
    #[serde(default)]
    pub casos_de_uso: Vec<CasoDeUso>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CasoDeUso {
    #[serde(deserialize_with = "clean_string")]
    pub template_id: String,
    #[serde(deserialize_with = "clean_string")]
    pub titulo: String,
    /// Every other field of the object: the purpose fields the PGCC may add later count in the
    /// use case's version fingerprint ([`other_purpose_fields`]).
    #[serde(flatten)]
    pub outros: BTreeMap<String, serde_json::Value>,
}

/// Fields of a use-case object that identify it or change without its purpose changing: left
/// out of the version fingerprint (docs/decisions.md, "Use-case versions"). `templateId` and the
/// link's id are read on their own; the link counts in the fingerprint as `vinculoId`.
pub const NOT_PURPOSE_FIELDS: [&str; 9] = [
    "id",
    "templateId",
    "vinculoId",
    "dataInclusao",
    "dataAtualizacao",
    "dataUltimaAtualizacao",
    "dataUltimaSincronizacao",
    "criadoEm",
    "atualizadoEm",
];

/// The other purpose fields of `caso` as a canonical JSON object: keys sorted (a `BTreeMap`),
/// no spaces, nested objects sorted alike; `{}` when there are none.
pub fn other_purpose_fields(caso: &CasoDeUso) -> String {
    let kept: BTreeMap<&str, Canonical<'_>> = caso
        .outros
        .iter()
        .filter(|(name, _)| !NOT_PURPOSE_FIELDS.contains(&name.as_str()))
        .map(|(name, value)| (name.as_str(), Canonical(value)))
        .collect();
    serde_json::to_string(&kept).unwrap_or_else(|_| "{}".to_owned())
}

/// A JSON value serialized with its objects' keys in sorted order whatever map type holds them.
struct Canonical<'a>(&'a serde_json::Value);

impl Serialize for Canonical<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            serde_json::Value::Object(map) => {
                let sorted: BTreeMap<&str, Canonical<'_>> = map
                    .iter()
                    .map(|(k, v)| (k.as_str(), Canonical(v)))
                    .collect();
                sorted.serialize(serializer)
            }
            serde_json::Value::Array(items) => {
                let items: Vec<Canonical<'_>> = items.iter().map(Canonical).collect();
                items.serialize(serializer)
            }
            other => other.serialize(serializer),
        }
    }
}

/// `POST /pgcc/v1/solicitacoes`. Holds the CPF and the proof of consent: no `Debug`, never
/// logged.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NovaSolicitacao<'a> {
    pub referencia_externa: Uuid,
    pub cnpj_empresa: &'a str,
    pub vinculo_id: Option<Uuid>,
    pub template_id: &'a str,
    pub cpf_titular: &'a str,
    pub tipo_titular: &'static str,
    pub modalidade_acesso: &'static str,
    pub cnpj_anuente: Option<&'a str>,
    pub data_expiracao_consentimento: String,
    pub status: &'static str,
    pub data_titular_respondeu_consentimento: Option<String>,
    pub prova_coleta: Option<&'a str>,
}

/// The answer to a creation (201, or 200 for a repeated `referenciaExterna`); other fields are
/// ignored.
#[derive(Debug, Deserialize)]
pub struct SolicitacaoCriada {
    #[serde(deserialize_with = "clean_string")]
    pub id: String,
}

/// The answer to `GET /pgcc/v1/solicitacoes?cnpjEmpresa=...&referenciaExterna=...`: at most one
/// request; other fields of each are ignored.
#[derive(Debug, Deserialize)]
pub struct BuscaPorReferenciaResponse {
    pub solicitacoes: Vec<SolicitacaoEncontrada>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SolicitacaoEncontrada {
    #[serde(deserialize_with = "clean_string")]
    pub id: String,
    pub referencia_externa: Uuid,
}

/// `POST /pgcc/v1/solicitacoes/status`
#[derive(Serialize)]
pub struct ConsultaStatus<'a> {
    pub ids: &'a [String],
}

/// The answer to a batch status call: the known ids only.
#[derive(Debug, Deserialize)]
pub struct ConsultaStatusResponse {
    pub solicitacoes: Vec<StatusSolicitacao>,
}

/// One request of a batch status answer; `atualizadoEm` is ignored. The status is kept as text
/// so that an unknown one is reported as such, not as an unreadable body.
#[derive(Debug, Deserialize)]
pub struct StatusSolicitacao {
    #[serde(deserialize_with = "clean_string")]
    pub id: String,
    pub status: String,
    /// The reason of the last change, when the PGCC reports one. Read as any JSON value and
    /// kept only when it is a string: an odd reason must not make the whole batch unreadable
    /// (the status is what matters).
    #[serde(default)]
    pub motivo: Option<serde_json::Value>,
    /// The company the request belongs to (its CNPJ), when the PGCC says: read like `motivo`
    /// (a non-string is no answer), checked only by an import confirming a consent by its
    /// PGCC id (docs/imports.md).
    #[serde(default, rename = "cnpjEmpresa")]
    pub cnpj_empresa: Option<serde_json::Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caso(json: &str) -> CasoDeUso {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_use_case_of_title_and_template_only_has_no_other_purpose_fields() {
        let caso = caso(r#"{"templateId":"tpl","titulo":"Crédito"}"#);
        assert_eq!(other_purpose_fields(&caso), "{}");
    }

    #[test]
    fn fields_the_pgcc_adds_count_sorted_and_identifiers_and_dates_do_not() {
        let caso = caso(
            r#"{"templateId":"tpl","titulo":"t","id":"x","dataAtualizacao":"2026-01-01",
                "finalidade":{"z":1,"a":[{"d":2,"b":3}]},"base":"lei"}"#,
        );
        assert_eq!(
            other_purpose_fields(&caso),
            r#"{"base":"lei","finalidade":{"a":[{"b":3,"d":2}],"z":1}}"#
        );
    }

    #[test]
    fn nul_and_the_other_c0_controls_are_dropped_and_the_rest_kept() {
        assert_eq!(without_controls("x\u{0}y".to_owned()), "xy");
        assert_eq!(
            without_controls("a\tb\nc\u{1f}d\u{7f}ção".to_owned()),
            "abcd\u{7f}ção"
        );
        assert_eq!(
            without_controls("mudei de ideia".to_owned()),
            "mudei de ideia"
        );
    }

    #[test]
    fn every_string_of_an_answer_is_read_without_controls() {
        let status: ConsultaStatusResponse = serde_json::from_str(
            r#"{"solicitacoes":[{"id":"pg\u0000c-1","status":"revogado","motivo":"x\u0000y"}]}"#,
        )
        .unwrap();
        assert_eq!(status.solicitacoes[0].id, "pgc-1");
        let casos: CasosDeUsoResponse = serde_json::from_str(
            r#"{"vinculos":[{"id":"6f1c2a4e-8b3d-4c5a-9e7f-1a2b3c4d5e02","casosDeUso":[{"templateId":"t\u0001pl","titulo":"Aber\u0000tura"}]}]}"#,
        )
        .unwrap();
        let caso = &casos.vinculos[0].casos_de_uso[0];
        assert_eq!(
            (caso.template_id.as_str(), caso.titulo.as_str()),
            ("tpl", "Abertura")
        );
        let criada: SolicitacaoCriada = serde_json::from_str(r#"{"id":"a\u0000b"}"#).unwrap();
        assert_eq!(criada.id, "ab");
    }
}
