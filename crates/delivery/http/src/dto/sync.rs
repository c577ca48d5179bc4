use domain::SyncCounts;
use serde::Serialize;
use utoipa::ToSchema;

/// What a synchronization with the PGCC changed in the stored copy.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Sincronizacao {
    /// Use cases new on the PGCC, now stored.
    #[serde(rename = "inseridos")]
    pub inserted: u32,
    /// Use cases already stored, refreshed.
    #[serde(rename = "atualizados")]
    pub updated: u32,
    /// Use cases gone from the PGCC, no longer listed.
    #[serde(rename = "removidos")]
    pub removed: u32,
    /// Use cases listed after the synchronization.
    pub total: u32,
}

impl From<SyncCounts> for Sincronizacao {
    fn from(c: SyncCounts) -> Self {
        Sincronizacao {
            inserted: c.inserted,
            updated: c.updated,
            removed: c.removed,
            total: c.total,
        }
    }
}
