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
