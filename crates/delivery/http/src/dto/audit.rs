//! Wire shapes of the audit routes (docs/auditoria.md): proofs, receipts, consistency, JWKS.

use application::{ProvenEntry, RequestProofs};
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use ports::PublishedKey;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// The proofs of a request's log entries against the company's latest checkpoint.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProvasSolicitacao {
    /// The latest checkpoint (a C2SP signed note), `null` before the first is signed.
    #[schema(
        example = "consent-api/empresas/11222333000181\n3\nq2E...=\n\n— consent-api Ab3x...\n"
    )]
    pub checkpoint: Option<String>,
    /// The request's entries that checkpoint covers, in log order (entries appended since are
    /// not yet there).
    #[serde(rename = "entradas")]
    pub entries: Vec<EntradaProvada>,
}

/// One log entry with its RFC 9162 inclusion proof.
#[derive(Debug, Serialize, ToSchema)]
pub struct EntradaProvada {
    /// The leaf index of the entry in the company's log.
    #[schema(minimum = 0, maximum = 9007199254740991_i64)]
    #[serde(rename = "indice")]
    pub index: u64,
    /// Base64 of the entry's bytes (canonical JSON).
    #[serde(rename = "entrada")]
    pub entry: String,
    /// Base64 of each hash of the inclusion proof, leaf to root.
    #[serde(rename = "provaInclusao")]
    pub inclusion_proof: Vec<String>,
}

impl From<RequestProofs> for ProvasSolicitacao {
    fn from(proofs: RequestProofs) -> Self {
        ProvasSolicitacao {
            checkpoint: proofs.checkpoint,
            entries: proofs
                .entries
                .into_iter()
                .map(EntradaProvada::from)
                .collect(),
        }
    }
}

impl From<ProvenEntry> for EntradaProvada {
    fn from(entry: ProvenEntry) -> Self {
        EntradaProvada {
            index: entry.index,
            entry: STANDARD.encode(&entry.bytes),
            inclusion_proof: hashes(&entry.proof),
        }
    }
}

pub fn hashes(proof: &[[u8; 32]]) -> Vec<String> {
    proof.iter().map(|h| STANDARD.encode(h)).collect()
}

/// A request's signed receipt.
#[derive(Debug, Serialize, ToSchema)]
pub struct Recibo {
    /// Compact JWS (`alg` EdDSA, `kid` of a key of `/.well-known/jwks.json`).
    #[serde(rename = "recibo")]
    pub receipt: String,
}

/// The two checkpoint sizes of `GET /api/auditoria/consistencia`, as given (checked by the
/// handler, so a bad one is named). Both are required in the contract: a call without one is
/// answered 400, so the document must not call it optional.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct IntervaloConsistencia {
    /// The size of the older checkpoint (a checkpoint of the company's log).
    #[param(required = true, value_type = u64, minimum = 1, maximum = 9007199254740991_i64)]
    #[serde(rename = "de")]
    pub from: Option<String>,
    /// The size of the newer checkpoint (at least `de`).
    #[param(required = true, value_type = u64, minimum = 1, maximum = 9007199254740991_i64)]
    #[serde(rename = "para")]
    pub to: Option<String>,
}

/// The RFC 9162 consistency proof between two checkpoints of the company's log.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProvaConsistencia {
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    #[serde(rename = "de")]
    pub from: u64,
    #[schema(minimum = 1, maximum = 9007199254740991_i64)]
    #[serde(rename = "para")]
    pub to: u64,
    /// Base64 of each hash of the proof (empty when the sizes are equal).
    #[serde(rename = "prova")]
    pub proof: Vec<String>,
}

/// The public keys of `GET /.well-known/jwks.json` (RFC 7517, RFC 8037).
#[derive(Debug, Serialize, ToSchema)]
pub struct Jwks {
    pub keys: Vec<Jwk>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Jwk {
    #[schema(example = "OKP")]
    pub kty: &'static str,
    #[schema(example = "Ed25519")]
    pub crv: &'static str,
    /// Base64url (no padding) of the 32-byte public key.
    pub x: String,
    /// Lower-case hex of the C2SP key hash (4 bytes).
    pub kid: String,
    #[schema(example = "EdDSA")]
    pub alg: &'static str,
    #[serde(rename = "use")]
    #[schema(example = "sig")]
    pub usage: &'static str,
    /// Which companies the key signs for: `producao` (the real companies) or `sandbox` (the
    /// sandbox companies only; never trust it for a real company's receipt or checkpoint). An
    /// extra member (RFC 7517 §4: members not understood are ignored), docs/auditoria.md.
    #[schema(example = "producao")]
    pub ambiente: &'static str,
}

impl From<PublishedKey> for Jwk {
    fn from(key: PublishedKey) -> Self {
        Jwk {
            kty: "OKP",
            crv: "Ed25519",
            x: URL_SAFE_NO_PAD.encode(key.public_key),
            kid: key.kid,
            alg: "EdDSA",
            usage: "sig",
            ambiente: if key.sandbox { "sandbox" } else { "producao" },
        }
    }
}
