//! The schema's rules for a database distributed by company (issue 23, part 3; docs/scaling.md,
//! "Citus"), read from the catalog of a migrated database:
//!
//! - every table carries `empresa_id`, but `empresas` itself and the service's own tables (no
//!   company's data: the PGCC budget and health, the signing keys, the backfills' state, the
//!   replicas' heartbeats);
//! - in a tenant table (every table with `empresa_id` but `empresas` and `api_keys`, the two read
//!   across companies), `empresa_id` is NOT NULL and part of the primary key and of every unique
//!   index, and every foreign key to another tenant table carries it on both sides;
//! - no trigger on a tenant table, `empresas` or `api_keys` sends NOTIFY or writes a table.
//!
//! What the schema does not meet yet is listed in [`KNOWN`], each with its reason: the test fails
//! on a violation not listed there (a new table or key that forgot its company) and on a listed
//! one that is gone (remove it from the list: the rule is met).

use diesel::prelude::*;
use diesel::sql_types::Text;
use testkit::TestDb;

/// The service's own tables: no company's data in them.
const SERVICE_TABLES: &str = "auditoria_chaves,auditoria_inicio,orcamento_pgcc,pgcc_chamadas,\
                              pgcc_saude,pgcc_transicoes,preenchimentos_retroativos,replicas_ativas";

/// What the schema still breaks, and why: nothing since 2026-12-03-003104, which gave the
/// history and the delivery attempts their NOT NULL company and company-first keys. A line here
/// names an exception the team accepted; the test fails when one is fixed but still listed.
const KNOWN: &[&str] = &[];

/// Every violation of the rules, one line each, sorted.
const VIOLATIONS: &str = r"
WITH tabelas AS (
    SELECT c.oid, c.relname,
           a.attnum IS NOT NULL AS tem_empresa, a.attnum AS coluna, a.attnotnull AS obrigatoria
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attribute a
      ON a.attrelid = c.oid AND a.attname = 'empresa_id' AND NOT a.attisdropped
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
      AND c.relname <> '__diesel_schema_migrations'
), inquilinas AS (
    SELECT * FROM tabelas WHERE tem_empresa AND relname NOT IN ('empresas', 'api_keys')
), violacoes AS (
    SELECT relname || ': no empresa_id' AS v FROM tabelas
    WHERE NOT tem_empresa AND relname <> 'empresas'
      AND relname <> ALL (string_to_array($1, ','))
    UNION ALL
    SELECT relname || ': empresa_id may be NULL' FROM inquilinas WHERE NOT obrigatoria
    UNION ALL
    SELECT t.relname || ': '
           || CASE WHEN x.indisprimary THEN 'primary key' ELSE 'unique index ' || i.relname END
           || ' without empresa_id'
    FROM inquilinas t
    JOIN pg_index x ON x.indrelid = t.oid
    JOIN pg_class i ON i.oid = x.indexrelid
    WHERE x.indisunique AND NOT (t.coluna = ANY (x.indkey::int2[]))
    UNION ALL
    SELECT t.relname || ': foreign key ' || f.conname || ' without empresa_id on both sides'
    FROM inquilinas t
    JOIN pg_constraint f ON f.conrelid = t.oid AND f.contype = 'f'
    JOIN inquilinas r ON r.oid = f.confrelid
    WHERE NOT EXISTS (SELECT 1 FROM unnest(f.conkey, f.confkey) k(de, para)
                      WHERE k.de = t.coluna AND k.para = r.coluna)
    UNION ALL
    SELECT t.relname || ': trigger ' || g.tgname || ' notifies or writes'
    FROM tabelas t
    JOIN pg_trigger g ON g.tgrelid = t.oid AND NOT g.tgisinternal
    JOIN pg_proc p ON p.oid = g.tgfoid
    WHERE (t.tem_empresa OR t.relname = 'empresas')
      AND p.prosrc ~* '(pg_notify\s*\(|\mnotify\s+\w|\minsert\s+into\M|\mupdate\s+\w+\s+set\M|\mdelete\s+from\M)'
)
SELECT v FROM violacoes ORDER BY v";

#[derive(QueryableByName)]
struct Violation {
    #[diesel(sql_type = Text)]
    v: String,
}

fn violations(conn: &mut PgConnection) -> Vec<String> {
    diesel::sql_query(VIOLATIONS)
        .bind::<Text, _>(SERVICE_TABLES)
        .load::<Violation>(conn)
        .unwrap()
        .into_iter()
        .map(|row| row.v)
        .collect()
}

fn sorted(lines: &[&str]) -> Vec<String> {
    let mut lines: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    lines.sort();
    lines
}

#[test]
fn every_tenant_table_is_keyed_by_its_company_but_the_listed_exceptions() {
    let db = TestDb::new();
    assert_eq!(violations(&mut db.conn()), sorted(KNOWN));
}

#[test]
fn the_rules_catch_a_table_that_forgets_its_company() {
    let db = TestDb::new();
    let mut conn = db.conn();
    diesel::connection::SimpleConnection::batch_execute(
        &mut conn,
        "CREATE TABLE regra_sem_empresa (id uuid PRIMARY KEY);
         CREATE TABLE regra_filha (
             empresa_id uuid REFERENCES empresas (id), id uuid PRIMARY KEY,
             codigo text UNIQUE, pai_empresa uuid, pai uuid,
             CONSTRAINT regra_filha_pai_fkey FOREIGN KEY (pai_empresa, pai)
                 REFERENCES solicitacoes_consentimento (empresa_id, id));
         CREATE FUNCTION regra_escreve() RETURNS trigger LANGUAGE plpgsql AS
             $$ BEGIN INSERT INTO regra_sem_empresa VALUES (gen_random_uuid()); RETURN NULL; END $$;
         CREATE TRIGGER regra_escreve AFTER INSERT ON regra_filha
             FOR EACH ROW EXECUTE FUNCTION regra_escreve();",
    )
    .unwrap();
    let found = violations(&mut conn);
    for expected in [
        "regra_sem_empresa: no empresa_id",
        "regra_filha: empresa_id may be NULL",
        "regra_filha: primary key without empresa_id",
        "regra_filha: unique index regra_filha_codigo_key without empresa_id",
        "regra_filha: foreign key regra_filha_pai_fkey without empresa_id on both sides",
        "regra_filha: trigger regra_escreve notifies or writes",
    ] {
        assert!(
            found.iter().any(|v| v == expected),
            "{expected} in {found:?}"
        );
    }
}
