//! [`ConsoleOidcStore`] on `empresas_oidc` (each company's identity provider, written by the
//! owner's CLI) and `console_oidc_pendentes` (the sign-ins under way, shared by every replica).
//! Statements on the primary: the browser comes back from the provider to any replica.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Bytea, Text, Timestamptz, Uuid as SqlUuid};
use domain::CompanyId;
use ports::{ConsoleOidcStore, EncryptedSecret, OidcProvider, PendingSignIn, RepoError};
use uuid::Uuid;

use crate::conn::with_conn;
use crate::fixed_sql::statement;
use crate::PgPool;

statement! {
    struct ReadProvider {
        empresa_id: Uuid as SqlUuid,
    }
    "SELECT emissor, client_id, client_secret_cifrado, claim_papeis FROM empresas_oidc
WHERE empresa_id = $empresa_id"
}

statement! {
    struct CompanyByCnpj<'a> {
        cnpj: &'a str as Text,
    }
    "SELECT e.id FROM empresas e JOIN empresas_oidc o ON o.empresa_id = e.id WHERE e.cnpj = $cnpj"
}

statement! {
    /// Sets the company's provider, when the company exists.
    struct SetProvider {
        empresa_id: Uuid as SqlUuid,
        emissor: String as Text,
        client_id: String as Text,
        segredo: String as Text,
        claim: String as Text,
        now: DateTime<Utc> as Timestamptz,
    }
    "INSERT INTO empresas_oidc (empresa_id, emissor, client_id, client_secret_cifrado, claim_papeis,
    atualizado_em)
SELECT id, $emissor, $client_id, $segredo, $claim, $now FROM empresas WHERE id = $empresa_id
ON CONFLICT (empresa_id) DO UPDATE SET emissor = excluded.emissor,
    client_id = excluded.client_id, client_secret_cifrado = excluded.client_secret_cifrado,
    claim_papeis = excluded.claim_papeis, atualizado_em = excluded.atualizado_em"
}

statement! {
    /// Forgets up to 100 of the company's stale sign-ins (oldest first), then keeps the new one.
    struct BeginSignIn {
        empresa_id: Uuid as SqlUuid,
        stale_before: DateTime<Utc> as Timestamptz,
        estado_hash: Vec<u8> as Bytea,
        nonce: String as Text,
        verificador: String as Text,
        now: DateTime<Utc> as Timestamptz,
    }
    "WITH velhas AS (
    DELETE FROM console_oidc_pendentes WHERE empresa_id = $empresa_id AND estado_hash IN (
        SELECT estado_hash FROM console_oidc_pendentes
        WHERE empresa_id = $empresa_id AND criado_em <= $stale_before
        ORDER BY criado_em LIMIT 100)
)
INSERT INTO console_oidc_pendentes (empresa_id, estado_hash, nonce, verificador, criado_em)
VALUES ($empresa_id, $estado_hash, $nonce, $verificador, $now)"
}

statement! {
    /// Takes the sign-in: deleted whatever its age, answered only when fresh.
    struct TakeSignIn {
        empresa_id: Uuid as SqlUuid,
        estado_hash: Vec<u8> as Bytea,
    }
    "DELETE FROM console_oidc_pendentes WHERE empresa_id = $empresa_id AND estado_hash = $estado_hash
RETURNING nonce, verificador, criado_em"
}

#[derive(QueryableByName)]
struct ProviderRow {
    #[diesel(sql_type = Text)]
    emissor: String,
    #[diesel(sql_type = Text)]
    client_id: String,
    #[diesel(sql_type = Text)]
    client_secret_cifrado: String,
    #[diesel(sql_type = Text)]
    claim_papeis: String,
}

#[derive(QueryableByName)]
struct CompanyRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
}

#[derive(QueryableByName)]
struct PendingRow {
    #[diesel(sql_type = Text)]
    nonce: String,
    #[diesel(sql_type = Text)]
    verificador: String,
    #[diesel(sql_type = Timestamptz)]
    criado_em: DateTime<Utc>,
}

#[derive(Clone)]
pub struct PgConsoleOidcStore {
    pool: PgPool,
}

impl PgConsoleOidcStore {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

impl ConsoleOidcStore for PgConsoleOidcStore {
    fn provider(&self, company: CompanyId) -> Result<Option<OidcProvider>, RepoError> {
        let rows = with_conn(
            &self.pool,
            "reading a company's identity provider",
            |conn| {
                ReadProvider {
                    empresa_id: company.0,
                }
                .load::<ProviderRow>(conn)
            },
        )?;
        Ok(rows.into_iter().next().map(|r| OidcProvider {
            issuer: r.emissor,
            client_id: r.client_id,
            client_secret: EncryptedSecret(r.client_secret_cifrado),
            roles_claim: r.claim_papeis,
        }))
    }

    fn company_with_provider_by_cnpj(&self, cnpj: &str) -> Result<Option<CompanyId>, RepoError> {
        let rows = with_conn(&self.pool, "finding a company by its CNPJ", |conn| {
            CompanyByCnpj { cnpj }.load::<CompanyRow>(conn)
        })?;
        Ok(rows.into_iter().next().map(|r| CompanyId(r.id)))
    }

    fn set_provider(
        &self,
        company: CompanyId,
        provider: &OidcProvider,
        now: DateTime<Utc>,
    ) -> Result<bool, RepoError> {
        let written = with_conn(
            &self.pool,
            "setting a company's identity provider",
            |conn| {
                SetProvider {
                    empresa_id: company.0,
                    emissor: provider.issuer.clone(),
                    client_id: provider.client_id.clone(),
                    segredo: provider.client_secret.0.clone(),
                    claim: provider.roles_claim.clone(),
                    now,
                }
                .execute(conn)
            },
        )?;
        Ok(written > 0)
    }

    fn begin(
        &self,
        company: CompanyId,
        state_hash: [u8; 32],
        pending: &PendingSignIn,
        now: DateTime<Utc>,
        stale_before: DateTime<Utc>,
    ) -> Result<(), RepoError> {
        with_conn(&self.pool, "beginning a console sign-in", |conn| {
            BeginSignIn {
                empresa_id: company.0,
                stale_before,
                estado_hash: state_hash.to_vec(),
                nonce: pending.nonce.clone(),
                verificador: pending.verifier.clone(),
                now,
            }
            .execute(conn)
        })?;
        Ok(())
    }

    fn take(
        &self,
        company: CompanyId,
        state_hash: [u8; 32],
        stale_before: DateTime<Utc>,
    ) -> Result<Option<PendingSignIn>, RepoError> {
        let rows = with_conn(&self.pool, "taking a console sign-in", |conn| {
            TakeSignIn {
                empresa_id: company.0,
                estado_hash: state_hash.to_vec(),
            }
            .load::<PendingRow>(conn)
        })?;
        Ok(rows
            .into_iter()
            .find(|r| r.criado_em > stale_before)
            .map(|r| PendingSignIn {
                nonce: r.nonce,
                verifier: r.verificador,
            }))
    }
}
