use domain::SyncCounts;
use serde::Serialize;
use utoipa::ToSchema;

/// What a synchronization with the PGCC changed in the stored copy.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Sincronizacao {
    /// Use cases new on the PGCC, now stored.
    #[serde(rename = "inseridos")]
    #[schema(format = Int64, maximum = 4294967295_u64)]
    pub inserted: u32,
    /// Use cases already stored, refreshed.
    #[serde(rename = "atualizados")]
    #[schema(format = Int64, maximum = 4294967295_u64)]
    pub updated: u32,
    /// Use cases gone from the PGCC, no longer listed.
    #[serde(rename = "removidos")]
    #[schema(format = Int64, maximum = 4294967295_u64)]
    pub removed: u32,
    /// Use cases listed after the synchronization.
    #[schema(format = Int64, maximum = 4294967295_u64)]
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
