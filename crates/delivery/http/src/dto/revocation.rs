//! Body of `POST /api/solicitacao-consentimento/{id}/revogar` (optional).

use domain::{Reason, ValidationErrors};
use serde::Deserialize;
use utoipa::ToSchema;

use super::text_rules::MotivoTexto;

/// Optional body of `revogar`: the reason for the revocation or withdrawal. No body, an empty
/// body, `null` and `{}` all mean "no reason".
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RevogarSolicitacao {
    /// Why the company revokes (or withdraws) the request: kept in the history entry
    /// (`historico[].motivo`) and sent in the `solicitacao.revogada` event. 1 to 500 characters,
    /// not only white space, no control characters other than line breaks and tabs.
    #[schema(value_type = Option<MotivoTexto>, inline, example = "Solicitação criada por engano.")]
    #[serde(rename = "motivo")]
    pub reason: Option<String>,
}

impl RevogarSolicitacao {
    /// The reason as the domain takes it; a broken rule is a field error on `motivo`.
    pub fn try_into_domain(self) -> Result<Option<Reason>, ValidationErrors> {
        self.reason
            .map(|raw| Reason::parse(&raw))
            .transpose()
            .map_err(|e| ValidationErrors::single("motivo", e.to_string()))
    }
}
