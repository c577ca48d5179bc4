//! Use cases (casos de uso): copied from the PGCC by a synchronization, listed from our copy.

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::CompanyId;

/// A stored use case of one company. Wire names are those of spec 2.1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UseCase {
    /// Our id of the use case.
    pub id: Uuid,
    /// The company it belongs to.
    pub company_id: CompanyId,
    /// The PGCC's id of the link between the company and the template (`vinculoId`), when
    /// known.
    pub link_id: Option<Uuid>,
    /// Its title (`titulo`), as the PGCC names it.
    pub title: String,
    /// The PGCC's template id (`pgccProviderTemplateId`): what a consent request names in
    /// `casoDeUsoIdTemplate`.
    pub pgcc_provider_template_id: Option<String>,
    /// When we first stored it (`dataInclusao`).
    pub added_at: DateTime<Utc>,
    /// When a synchronization last saw it on the PGCC (`dataUltimaSincronizacaoPgcc`).
    pub last_synced_at: Option<DateTime<Utc>>,
}

/// A use case as the PGCC reports it during a synchronization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgccUseCase {
    /// The PGCC's id of the link between the company and the template.
    pub link_id: Uuid,
    /// The PGCC's template id; the key matched against our copy.
    pub template_id: String,
    /// The title of the use case.
    pub title: String,
    /// The other fields of the PGCC's use-case object that state its purpose (every field but
    /// the identifiers and the volatile ones: docs/decisions.md, "Use-case versions"), as a
    /// canonical JSON object (keys sorted, no spaces) made by the gateway; `{}` when it sends none,
    /// as today.
    pub other_fields: String,
}

impl PgccUseCase {
    /// The canonical form of the fields that state the use case's purpose: each field as
    /// `name:length:value` on its own line, in a fixed order (title, link, the other fields), so
    /// no two different sets of fields read alike. Its SHA-256 is the version's fingerprint.
    pub fn purpose_text(&self) -> String {
        let link = self.link_id.to_string();
        let mut text = String::with_capacity(self.title.len() + self.other_fields.len() + 80);
        for (name, value) in [
            ("titulo", self.title.as_str()),
            ("vinculoId", link.as_str()),
            ("outros", self.other_fields.as_str()),
        ] {
            text.push_str(&format!("{name}:{}:{value}\n", value.len()));
        }
        text
    }
}

/// One version of a use case: what its purpose-stating fields were from `started_at` until the
/// next version began.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UseCaseVersion {
    /// 1, 2, ...: a new one each time a synchronization finds another fingerprint.
    pub version: i64,
    /// The title (`titulo`) in this version.
    pub title: String,
    /// The PGCC link (`vinculoId`) in this version.
    pub link_id: Option<Uuid>,
    /// The other purpose fields, a canonical JSON object (`{}` when none).
    pub other_fields: String,
    /// Lower-case hex SHA-256 of [`PgccUseCase::purpose_text`]; `None` for a version 1 stored
    /// before versions were recorded and not synchronized since.
    pub fingerprint: Option<String>,
    /// When this version began.
    pub started_at: DateTime<Utc>,
    /// When the next one began; `None` for the current version.
    pub ended_at: Option<DateTime<Utc>>,
}

/// The `data` of `casos-de-uso.alterado`: a synchronization made a new version of a use case
/// (its title, link or another purpose field changed on the PGCC).
// With how many of the company's requests still stand under older versions. The doc comments are
// the OpenAPI document's descriptions (see `webhook_event.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = CasoDeUsoAlterado))]
#[serde(rename_all = "camelCase")]
pub struct UseCaseChange {
    /// Our id of the use case (as in `GET /api/casos-de-uso`; its versions at
    /// `GET /api/casos-de-uso/{id}/versoes`).
    pub caso_de_uso_id: Uuid,
    /// The template, as consent requests name it.
    pub caso_de_uso_id_template: String,
    /// The version before the change.
    #[cfg_attr(
        feature = "openapi",
        schema(format = Int64, minimum = 1, maximum = 9223372036854775807_i64)
    )]
    pub versao_anterior: i64,
    /// The new version.
    #[cfg_attr(
        feature = "openapi",
        schema(format = Int64, minimum = 2, maximum = 9223372036854775807_i64)
    )]
    pub versao_nova: i64,
    /// The company's requests of this use case stored `ativo` under an older version.
    #[cfg_attr(
        feature = "openapi",
        schema(format = Int64, minimum = 0, maximum = 9223372036854775807_i64)
    )]
    pub solicitacoes_ativas: u64,
    /// The company's requests of this use case stored `pendente` under an older version.
    #[cfg_attr(
        feature = "openapi",
        schema(format = Int64, minimum = 0, maximum = 9223372036854775807_i64)
    )]
    pub solicitacoes_pendentes: u64,
}

/// What one synchronization changed in our copy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncCounts {
    /// New use cases stored.
    #[serde(rename = "inseridos")]
    pub inserted: u32,
    /// Existing use cases refreshed (title, link, sync time).
    #[serde(rename = "atualizados")]
    pub updated: u32,
    /// Use cases gone from the PGCC, now marked removed.
    #[serde(rename = "removidos")]
    pub removed: u32,
    /// Use cases listed after the sync.
    pub total: u32,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn item(title: &str, other_fields: &str) -> PgccUseCase {
        PgccUseCase {
            link_id: Uuid::from_u128(7),
            template_id: "tpl".to_owned(),
            title: title.to_owned(),
            other_fields: other_fields.to_owned(),
        }
    }

    #[test]
    fn the_purpose_text_changes_with_the_title_the_link_or_another_field_and_not_the_template() {
        let base = item("Crédito", "{}");
        let mut other_template = base.clone();
        other_template.template_id = "tpl-2".to_owned();
        let mut other_link = base.clone();
        other_link.link_id = Uuid::from_u128(8);
        assert_eq!(base.purpose_text(), other_template.purpose_text());
        assert_ne!(
            base.purpose_text(),
            item("Crédito consignado", "{}").purpose_text()
        );
        assert_ne!(base.purpose_text(), other_link.purpose_text());
        assert_ne!(
            base.purpose_text(),
            item("Crédito", r#"{"finalidade":"x"}"#).purpose_text()
        );
        // lengths keep a title that ends like a field apart from the field
        assert_ne!(
            item("a\nvinculoId:1:b", "{}").purpose_text(),
            item("a", "{}").purpose_text()
        );
    }

    #[test]
    fn sync_counts_serialize_with_their_portuguese_camel_case_names() {
        let counts = SyncCounts {
            inserted: 1,
            updated: 2,
            removed: 3,
            total: 4,
        };
        assert_eq!(
            serde_json::to_value(counts).unwrap(),
            json!({"inseridos": 1, "atualizados": 2, "removidos": 3, "total": 4})
        );
    }

    #[test]
    fn default_sync_counts_are_all_zero() {
        let counts = SyncCounts::default();
        assert_eq!(
            (
                counts.inserted,
                counts.updated,
                counts.removed,
                counts.total
            ),
            (0, 0, 0, 0)
        );
    }
}
