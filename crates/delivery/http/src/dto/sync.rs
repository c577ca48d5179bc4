use domain::SyncCounts;
use serde::Serialize;
use utoipa::ToSchema;

/// What a synchronization with the PGCC changed in the stored copy.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Sincronizacao {
    /// Use cases new on the PGCC, now stored.
    pub inseridos: u32,
    /// Use cases already stored, refreshed.
    pub atualizados: u32,
    /// Use cases gone from the PGCC, no longer listed.
    pub removidos: u32,
    /// Use cases listed after the synchronization.
    pub total: u32,
}

impl From<SyncCounts> for Sincronizacao {
    fn from(c: SyncCounts) -> Self {
        Sincronizacao {
            inseridos: c.inserted,
            atualizados: c.updated,
            removidos: c.removed,
            total: c.total,
        }
    }
}
