//! The company (empresa): the API caller, identified by its API keys.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::Cnpj;

/// The id of a [`Company`]. A type of its own so that a company id cannot be passed where
/// another id is expected; serialized as the bare UUID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CompanyId(pub Uuid);

impl std::fmt::Display for CompanyId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A company registered with the service: every consent request, use case and webhook belongs
/// to exactly one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Company {
    /// Its id, which scopes all of its data.
    pub id: CompanyId,
    /// Its name (`nome`), as registered by the operator.
    pub name: String,
    /// Its tax identifier.
    pub cnpj: Cnpj,
    /// When it was registered.
    pub created_at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn company_id_serializes_as_a_bare_uuid() {
        let uuid = Uuid::parse_str("67e55044-10b1-426f-9247-bb680e5fe0c8").unwrap();
        let id = CompanyId(uuid);
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, "\"67e55044-10b1-426f-9247-bb680e5fe0c8\"");
        assert_eq!(serde_json::from_str::<CompanyId>(&json).unwrap(), id);
    }

    #[test]
    fn company_id_displays_as_its_uuid() {
        let uuid = Uuid::parse_str("67e55044-10b1-426f-9247-bb680e5fe0c8").unwrap();
        assert_eq!(CompanyId(uuid).to_string(), uuid.to_string());
    }
}
