//! Least privilege (issue 36; docs/security.md, "Least privilege"): the owner grants the
//! service's runtime role what it needs, and what the runtime role can do is checked at start.
//!
//! The owner (the role of `database.migration_url`) owns the tables and the `SECURITY DEFINER`
//! functions that write the evidence; the runtime role (the role of `database.url`) owns nothing
//! and writes the consent requests, their history, the audit entries, the companies and the
//! signing keys only through those functions (migration `write_evidence_through_functions`).

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Text};

use crate::migrations::MIGRATION_LOCK_KEY;
use crate::PgPool;

/// The tables whose rows are the evidence, or vouch for it: the runtime role must not be able
/// to insert, update, delete or truncate any of them directly.
pub const EVIDENCE_TABLES: [&str; 9] = [
    "solicitacoes_consentimento",
    "solicitacoes_historico",
    "auditoria_entradas",
    "auditoria_chaves",
    "auditoria_folhas",
    "auditoria_nos",
    "auditoria_checkpoints",
    "auditoria_inicio",
    "empresas",
];

/// The columns of `solicitacoes_consentimento` the runtime role may update: the creation
/// reconciler's and the status worker's bookkeeping (the PGCC's "not found" included) and the
/// integrity incident it records, which only ever makes a request less valid; never the evidence.
const BOOKKEEPING_COLUMNS: [&str; 6] = [
    "criacao_tentativa_em",
    "criacao_nao_encontrada_em",
    "proximo_status_em",
    "status_desconhecido_desde",
    "pgcc_nao_encontrada_em",
    "incidente_integridade_em",
];

#[derive(QueryableByName)]
struct Role {
    #[diesel(sql_type = Text)]
    papel: String,
}

/// The role a pool's connections run as.
pub fn role_of(pool: &PgPool) -> anyhow::Result<String> {
    let mut conn = pool.get()?;
    Ok(diesel::sql_query("SELECT current_user::text AS papel")
        .get_result::<Role>(&mut conn)?
        .papel)
}

/// As the owner (`owner`), grants `runtime`'s role exactly what the service needs
/// (`consent_api_conceder_acesso`), under the migrations' advisory lock so that processes
/// starting together do not update the same catalog rows at once. Nothing when both pools run as
/// the same role (development without a second role): the owner keeps its rights.
pub fn grant_runtime_role(owner: &PgPool, runtime: &PgPool) -> anyhow::Result<Option<String>> {
    let owner_role = role_of(owner)?;
    let runtime_role = role_of(runtime)?;
    if owner_role == runtime_role {
        return Ok(None);
    }
    let mut conn = owner.get()?;
    conn.transaction(|conn| {
        // as the migrations do (`migrations::locked`): on Citus the grants are carried to every
        // node and every shard, longer than a request's statement may take under load
        conn.batch_execute(
            "SET LOCAL statement_timeout = 0; SET LOCAL idle_in_transaction_session_timeout = 0",
        )?;
        diesel::sql_query("SELECT pg_advisory_xact_lock($1)")
            .bind::<diesel::sql_types::BigInt, _>(MIGRATION_LOCK_KEY)
            .execute(conn)?;
        diesel::sql_query("SELECT consent_api_conceder_acesso($1::name)")
            .bind::<Text, _>(&runtime_role)
            .execute(conn)
    })?;
    Ok(Some(runtime_role))
}

#[derive(QueryableByName)]
struct Finding {
    #[diesel(sql_type = Text)]
    achado: String,
}

#[derive(QueryableByName)]
struct Exists {
    #[diesel(sql_type = Bool)]
    existe: bool,
}

/// What the role of `pool` can do that the service's runtime role must not (empty: least
/// privilege holds): superuser, CREATEROLE, BYPASSRLS, membership in a table owner's role, or a
/// direct write on an evidence table (beyond the bookkeeping columns). Each finding names the privilege and the table; `config check` prints them
/// and staging and production refuse to start on any.
pub fn excess_privileges(pool: &PgPool) -> anyhow::Result<Vec<String>> {
    let mut conn = pool.get()?;
    let migrated = diesel::sql_query(
        "SELECT to_regclass('public.solicitacoes_consentimento') IS NOT NULL AS existe",
    )
    .get_result::<Exists>(&mut conn)?
    .existe;
    let mut findings: Vec<String> = diesel::sql_query(
        "SELECT 'is a superuser' AS achado FROM pg_roles WHERE rolname = current_user AND rolsuper
UNION ALL
SELECT 'has CREATEROLE' FROM pg_roles WHERE rolname = current_user AND rolcreaterole
UNION ALL
SELECT 'has BYPASSRLS' FROM pg_roles WHERE rolname = current_user AND rolbypassrls",
    )
    .load::<Finding>(&mut conn)?
    .into_iter()
    .map(|f| f.achado)
    .collect();
    if !migrated {
        return Ok(findings);
    }
    findings.extend(
        diesel::sql_query(
            "SELECT DISTINCT format('is a member of %s, owner of table %s', o.rolname, c.relname)
    AS achado
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_roles o ON o.oid = c.relowner
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname = ANY ($1)
  AND pg_has_role(current_user, c.relowner, 'MEMBER')",
        )
        .bind::<diesel::sql_types::Array<Text>, _>(EVIDENCE_TABLES.to_vec())
        .load::<Finding>(&mut conn)?
        .into_iter()
        .map(|f| f.achado),
    );
    findings.extend(
        diesel::sql_query(
            "SELECT format('can %s table %s directly', p.privilegio, t.nome) AS achado
FROM unnest($1::text[]) AS t(nome)
CROSS JOIN unnest(ARRAY['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) AS p(privilegio)
WHERE has_table_privilege(current_user, format('public.%I', t.nome), p.privilegio)
UNION ALL
SELECT format('can UPDATE column %s of solicitacoes_consentimento directly', a.attname)
FROM pg_attribute a
WHERE a.attrelid = 'public.solicitacoes_consentimento'::regclass AND a.attnum > 0
  AND NOT a.attisdropped AND a.attname <> ALL ($2)
  AND NOT has_table_privilege(current_user, 'public.solicitacoes_consentimento', 'UPDATE')
  AND has_column_privilege(current_user, a.attrelid, a.attnum, 'UPDATE')",
        )
        .bind::<diesel::sql_types::Array<Text>, _>(EVIDENCE_TABLES.to_vec())
        .bind::<diesel::sql_types::Array<Text>, _>(BOOKKEEPING_COLUMNS.to_vec())
        .load::<Finding>(&mut conn)?
        .into_iter()
        .map(|f| f.achado),
    );
    Ok(findings)
}
