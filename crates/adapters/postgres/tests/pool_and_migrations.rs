mod common;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel_migrations::MigrationHarness;
use domain::CompanyId;
use ports::{CompanyRepository, RepoError, UseCaseRepository};
use postgres_adapter::{
    connect, run_migrations, PgCompanyRepository, PgUseCaseRepository, PoolSettings, MIGRATIONS,
};
use testkit::TestDb;
use uuid::Uuid;

const TABLES: &[&str] = &[
    "acessos_dados_pessoais",
    "agenda_sincronizacao",
    "api_keys",
    "auditoria_chaves",
    "auditoria_checkpoints",
    "auditoria_entradas",
    "auditoria_folhas",
    "auditoria_inicio",
    "auditoria_nos",
    "casos_de_uso",
    "casos_de_uso_anotacoes",
    "casos_de_uso_versoes",
    "chaves_idempotencia",
    "console_buscas",
    "console_oidc_pendentes",
    "console_sessoes",
    "empresas",
    "empresas_oidc",
    "evidencias_arquivos",
    "evidencias_partes",
    "importacao_erros",
    "importacao_linhas",
    "importacoes",
    "orcamento_pgcc",
    "pgcc_chamadas",
    "pgcc_saude",
    "pgcc_transicoes",
    "preenchimentos_retroativos",
    "replicas_ativas",
    "solicitacoes_arquivos",
    "solicitacoes_consentimento",
    "solicitacoes_historico",
    "varreduras_status",
    "verificacoes_status",
    "webhook_entregas",
    "webhook_eventos",
    "webhook_tentativas",
    "webhook_urls",
];

/// The migrations, oldest first.
const MIGRATION_NAMES: &[&str] = &[
    "2026-11-21-000001_create_empresas",
    "2026-11-21-000002_create_api_keys",
    "2026-11-21-000003_create_casos_de_uso",
    "2026-11-21-000004_create_solicitacoes_consentimento",
    "2026-11-21-000005_create_webhook_urls",
    "2026-11-21-000006_add_hash_and_status_check_to_solicitacoes",
    "2026-11-21-000007_create_solicitacoes_historico",
    "2026-11-21-000008_add_secret_and_disabling_to_webhook_urls",
    "2026-11-21-000009_create_webhook_eventos",
    "2026-11-21-000010_create_webhook_entregas",
    "2026-11-21-000011_create_webhook_tentativas",
    "2026-11-23-000101_check_api_key_hash_is_a_digest",
    "2026-11-23-000201_add_creation_state_to_solicitacoes",
    "2026-11-23-000202_create_chaves_idempotencia",
    "2026-11-24-000301_index_only_confirmed_solicitacoes",
    "2026-11-24-000401_notify_cache_changes",
    "2026-11-25-000501_notify_api_key_issued",
    "2026-11-25-000502_create_agenda_sincronizacao",
    "2026-11-26-000601_lease_webhook_entregas",
    "2026-11-26-001201_record_creation_not_found",
    "2026-11-26-001202_record_unknown_pgcc_status",
    "2026-11-26-001301_limit_and_reenable_webhook_urls",
    "2026-11-26-001302_add_retention_purge",
    "2026-11-27-001421_add_motivo_to_solicitacoes_historico",
    "2026-11-27-001422_index_webhook_eventos_by_company",
    "2026-11-27-001423_choose_events_per_webhook_url",
    "2026-11-27-001442_index_solicitacoes_by_titular",
    "2026-11-27-001470_create_preenchimentos_retroativos",
    "2026-11-27-001471_salt_consent_hashes",
    "2026-11-27-001472_index_solicitacoes_by_hash_anterior",
    "2026-11-27-001473_validate_sal_hash_check",
    "2026-11-27-001541_create_replicas_ativas",
    "2026-11-28-002151_order_webhook_eventos_by_commit",
    "2026-11-28-002152_index_webhook_eventos_by_transaction",
    "2026-11-28-002201_schedule_status_checks",
    "2026-11-28-002202_index_expiry_by_company",
    "2026-11-28-002203_drop_cross_company_expiry_index",
    "2026-11-28-002204_index_unfinished_creations_by_company",
    "2026-11-28-002205_drop_cross_company_creation_index",
    "2026-11-28-002206_drop_status_due_index",
    "2026-11-28-002301_park_and_cap_webhook_entregas",
    "2026-11-28-002302_index_due_webhook_entregas_by_company",
    "2026-11-28-002303_index_pending_webhook_entregas_by_url",
    "2026-11-28-002304_index_unsettled_webhook_urls",
    "2026-11-29-002401_mark_webhook_eventos_without_deliveries",
    "2026-11-29-002402_index_webhook_eventos_without_deliveries",
    "2026-11-29-002403_index_final_webhook_entregas_by_company",
    "2026-11-29-002404_index_cancelled_creations_by_company",
    "2026-11-29-002405_index_idempotency_keys_by_company",
    "2026-11-29-002406_drop_cross_company_event_purge_index",
    "2026-11-29-002407_drop_cross_company_delivery_purge_index",
    "2026-11-29-002408_drop_cross_company_cancelled_index",
    "2026-11-29-002409_drop_cross_company_idempotency_index",
    "2026-11-29-002410_replicas_that_served",
    "2026-11-30-002501_create_auditoria",
    "2026-11-30-002601_scope_api_keys",
    "2026-11-30-002602_validate_api_keys_escopos_check",
    "2026-11-30-002603_create_acessos_dados_pessoais",
    "2026-11-30-002701_version_use_cases",
    "2026-11-30-002702_record_use_case_version_of_solicitacoes",
    "2026-11-30-002703_index_solicitacoes_by_use_case_version",
    "2026-11-30-002704_allow_issue_25_event_types",
    "2026-11-30-002705_validate_event_type_checks",
    "2026-11-30-002706_create_pgcc_health",
    "2026-11-30-002741_add_traceparent_to_webhook_eventos",
    "2026-11-30-002801_sweep_status_checks",
    "2026-11-30-002802_index_status_sweep",
    "2026-11-30-002901_store_auditoria_tree",
    "2026-11-30-002951_add_sandbox_to_empresas",
    "2026-11-30-002952_validate_empresas_sandbox_de",
    "2026-11-30-002953_index_empresas_sandbox_de",
    "2026-12-01-002901_carry_pgcc_id_in_status_checks",
    "2026-12-01-002902_index_status_sweep_with_pgcc_id",
    "2026-12-01-002903_drop_status_sweep_index_without_pgcc_id",
    "2026-12-01-002904_create_console_sessoes",
    "2026-12-02-003001_add_empresa_id_to_history_and_attempts",
    "2026-12-02-003002_index_casos_de_uso_by_company",
    "2026-12-02-003003_index_solicitacoes_by_company",
    "2026-12-02-003004_index_webhook_urls_by_company",
    "2026-12-02-003005_index_webhook_eventos_by_company",
    "2026-12-02-003006_index_webhook_entregas_by_company",
    "2026-12-02-003007_index_webhook_entregas_event_url_by_company",
    "2026-12-02-003008_key_tenant_tables_by_company",
    "2026-12-02-003009_validate_tenant_foreign_keys",
    "2026-12-02-003010_schedule_first_sync_in_the_application",
    "2026-12-02-003011_notify_cache_changes_from_the_application",
    "2026-12-02-003012_console_sessoes_by_company",
    "2026-12-03-003101_history_and_attempts_empresa_id_not_null",
    "2026-12-03-003102_index_history_by_company",
    "2026-12-03-003103_index_attempts_by_company",
    "2026-12-03-003104_key_history_and_attempts_by_company",
    "2026-12-07-003601_record_auditoria_inicio",
    "2026-12-07-003602_add_integrity_incident_to_solicitacoes",
    "2026-12-07-003603_allow_auditoria_incidente_event_type",
    "2026-12-07-003604_validate_auditoria_incidente_event_type",
    "2026-12-07-003610_write_evidence_through_functions",
    "2026-12-07-003620_add_ambiente_to_auditoria_chaves",
    "2026-12-07-003621_validate_auditoria_chaves_ambiente",
    "2026-12-07-003622_allow_auditoria_checkpoint_event_type",
    "2026-12-07-003623_validate_auditoria_checkpoint_event_type",
    "2026-12-07-003760_annotate_use_cases_and_profile_companies",
    "2026-12-07-003770_create_importacoes",
    "2026-12-07-003771_validate_importacao_concluida_event_type",
    "2026-12-07-003870_sign_in_people_with_openid_connect",
    "2026-12-07-003890_index_requests_by_company_status_and_expiry",
    "2026-12-07-003891_index_revocations_by_company",
    "2026-12-07-003892_index_integrity_incidents_by_company",
    "2026-12-07-003893_index_deliveries_by_url_and_success",
    "2026-12-07-003894_index_failed_deliveries_by_url",
    "2026-12-07-003901_record_when_webhook_urls_started_failing",
    "2026-12-07-003902_index_webhook_urls_failing_since",
    "2026-12-07-004001_inline_the_state_machine_check",
    "2026-12-07-004101_clear_cancelled_import_lines_in_the_background",
    "2026-12-07-004102_index_imports_with_lines_to_clear",
    "2026-12-07-004110_cancel_creations_in_plpgsql",
    "2026-12-07-004120_index_import_lines_by_request",
    "2026-12-07-004121_record_import_provenance",
    "2026-12-07-004122_index_requests_by_origem",
    "2026-12-07-004140_create_evidence_files",
    "2026-12-07-004160_index_accesses_by_request",
    "2026-12-07-004201_keep_id_token_hints_in_console_sessions",
    "2026-12-07-004202_keep_console_searches_in_postgres",
    "2026-12-07-004220_keep_webhook_answers_and_delivery_event_types",
    "2026-12-07-004221_validate_webhook_answer_length",
    "2026-12-07-004222_index_deliveries_by_url_and_status",
    "2026-12-07-004223_index_deliveries_by_url_and_event_type",
    "2026-12-07-004260_index_import_lines_by_pgcc_id",
    "2026-12-07-004261_index_imports_by_creation",
    "2026-12-07-004280_start_creations_in_router_statements",
    "2026-12-07-004300_stage_import_lines_without_a_foreign_key",
    "2026-12-07-004400_confirm_creations_in_one_call",
];

/// How many migrations `name` and the ones after it are.
fn from(name: &str) -> usize {
    let position = MIGRATION_NAMES.iter().position(|n| *n == name).unwrap();
    MIGRATION_NAMES.len() - position
}

/// Reverts, newest first, every migration applied after `name`, then `name` itself.
fn revert_through(conn: &mut PgConnection, name: &str) {
    let version: String = name
        .split('_')
        .next()
        .unwrap()
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    loop {
        let reverted = conn.revert_last_migration(MIGRATIONS).unwrap();
        if reverted.to_string() == version {
            break;
        }
    }
}

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

fn tables(conn: &mut PgConnection) -> Vec<String> {
    diesel::sql_query(
        "SELECT table_name::text AS name FROM information_schema.tables \
         WHERE table_schema = 'public' AND table_name <> '__diesel_schema_migrations' \
         ORDER BY table_name",
    )
    .load::<Name>(conn)
    .unwrap()
    .into_iter()
    .map(|t| t.name)
    .collect()
}

/// A port where nothing listens: bound, then released.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn a_pool_pointed_at_a_closed_port_answers_unavailable_quickly() {
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", closed_port());
    let settings = PoolSettings {
        max_size: 2,
        checkout_timeout: Duration::from_millis(500),
        ..PoolSettings::default()
    };
    let pool = connect(&url, &settings).expect("building the pool does not connect");
    let started = Instant::now();

    let result = PgUseCaseRepository::new(pool.clone()).list(CompanyId(Uuid::new_v4()), None);

    let elapsed = started.elapsed();
    assert!(
        matches!(result, Err(RepoError::Unavailable(_))),
        "{result:?}"
    );
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
    let created = PgCompanyRepository::new(pool).create(&common::company("ACME", "112223330001"));
    assert!(
        matches!(
            created,
            Err(ports::CreateCompanyError::Repo(RepoError::Unavailable(_)))
        ),
        "{created:?}"
    );
}

#[test]
fn invalid_pool_settings_are_refused() {
    let zero_size = PoolSettings {
        max_size: 0,
        checkout_timeout: Duration::from_secs(1),
        ..PoolSettings::default()
    };
    let zero_timeout = PoolSettings {
        max_size: 1,
        checkout_timeout: Duration::ZERO,
        ..PoolSettings::default()
    };

    assert!(connect("postgres://localhost/x", &zero_size).is_err());
    assert!(connect("postgres://localhost/x", &zero_timeout).is_err());
}

#[test]
fn every_migration_reverts_and_applies_again() {
    let db = TestDb::new();
    let mut conn = db.conn();
    assert_eq!(tables(&mut conn), TABLES);

    let reverted = conn.revert_all_migrations(MIGRATIONS).unwrap();
    assert_eq!(reverted.len(), MIGRATION_NAMES.len());
    assert_eq!(tables(&mut conn), Vec::<String>::new());

    let applied = conn.run_pending_migrations(MIGRATIONS).unwrap();
    assert_eq!(applied.len(), MIGRATION_NAMES.len());
    assert_eq!(tables(&mut conn), TABLES);
}

#[test]
fn run_migrations_applies_the_pending_ones_by_name_and_then_nothing() {
    let db = TestDb::new();
    db.conn().revert_all_migrations(MIGRATIONS).unwrap();
    let pool = common::pool(&db);

    let applied = run_migrations(&pool).unwrap();
    let again = run_migrations(&pool).unwrap();

    assert_eq!(applied, MIGRATION_NAMES);
    assert_eq!(again, Vec::<String>::new());
    assert_eq!(tables(&mut db.conn()), TABLES);
    let locks = diesel::sql_query(
        "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' \
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    )
    .get_result::<Count>(&mut db.conn())
    .unwrap();
    assert_eq!(locks.n, 0, "the migration lock is released");
}

fn names(conn: &mut PgConnection, sql: &str) -> Vec<String> {
    diesel::sql_query(sql)
        .load::<Name>(conn)
        .unwrap()
        .into_iter()
        .map(|n| n.name)
        .collect()
}

fn request_columns(conn: &mut PgConnection) -> Vec<String> {
    names(
        conn,
        "SELECT column_name::text AS name FROM information_schema.columns \
         WHERE table_schema = 'public' AND table_name = 'solicitacoes_consentimento' \
         ORDER BY ordinal_position",
    )
}

fn request_indexes(conn: &mut PgConnection) -> Vec<String> {
    names(
        conn,
        "SELECT indexname::text AS name FROM pg_indexes \
         WHERE schemaname = 'public' AND tablename = 'solicitacoes_consentimento' \
         ORDER BY indexname",
    )
}

#[test]
fn the_hash_and_history_migrations_revert_exactly_and_backfill_older_requests() {
    let db = TestDb::new();
    let mut conn = db.conn();
    let columns = request_columns(&mut conn);
    // the creation state's two columns, then the reconciler's and the poller's (issue 12), then
    // the retention's, then the use-case version's (issue 25), then the integrity incident's two
    // (issue 36), then the import's provenance (issue 37), come after the hash migration's
    assert_eq!(
        &columns[columns.len() - 13..columns.len() - 4],
        [
            "hash",
            "proximo_status_em",
            "criacao",
            "criacao_tentativa_em",
            "criacao_nao_encontrada_em",
            "status_desconhecido_desde",
            "dados_apagados_em",
            "sal_hash",
            "hash_anterior"
        ]
    );

    revert_through(
        &mut conn,
        "2026-11-21-000006_add_hash_and_status_check_to_solicitacoes",
    );

    assert!(!tables(&mut conn).contains(&"solicitacoes_historico".to_owned()));
    assert_eq!(request_columns(&mut conn), columns[..columns.len() - 13]);
    assert_eq!(
        request_indexes(&mut conn),
        [
            "solicitacoes_consentimento_empresa_criado_em_idx",
            "solicitacoes_consentimento_empresa_pgcc_id_key",
            "solicitacoes_consentimento_pkey",
        ]
    );

    // Requests stored before the two migrations get a placeholder hash and their creation entry.
    conn.batch_execute(
        "INSERT INTO empresas (id, nome, cnpj) VALUES \
             ('00000000-0000-0000-0000-00000000000e', 'ACME', '11222333000181'); \
         INSERT INTO casos_de_uso (id, empresa_id, titulo) VALUES \
             ('00000000-0000-0000-0000-00000000000c', '00000000-0000-0000-0000-00000000000e', 't'); \
         INSERT INTO solicitacoes_consentimento (id, empresa_id, caso_de_uso_id, \
             caso_de_uso_id_template, cpf_titular, tipo_titular, modalidade_acesso, \
             data_expiracao_consentimento, status, pgcc_id, criado_em) \
         SELECT ('00000000-0000-0000-0000-00000000000' || g)::uuid, \
             '00000000-0000-0000-0000-00000000000e', '00000000-0000-0000-0000-00000000000c', \
             'tpl-1', '52998224725', 'PessoaFisica', 'Direto', '2027-01-01T00:00:00Z', \
             'ativo', 'pgcc-' || g, '2026-05-01T12:00:00Z' \
         FROM generate_series(1, 2) g",
    )
    .unwrap();
    let applied = conn.run_pending_migrations(MIGRATIONS).unwrap();

    assert_eq!(
        applied.len(),
        from("2026-11-21-000006_add_hash_and_status_check_to_solicitacoes")
    );
    assert_eq!(request_columns(&mut conn), columns);
    assert_eq!(
        names(
            &mut conn,
            "SELECT hash AS name FROM solicitacoes_consentimento ORDER BY id"
        ),
        [
            "legado:00000000-0000-0000-0000-000000000001",
            "legado:00000000-0000-0000-0000-000000000002",
        ]
    );
    assert_eq!(
        names(
            &mut conn,
            "SELECT concat_ws('|', solicitacao_id, coalesce(de, '-'), para, \
                 to_char(em AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), causa) AS name \
             FROM solicitacoes_historico ORDER BY id"
        ),
        [
            "00000000-0000-0000-0000-000000000001|-|ativo|2026-05-01 12:00:00|empresa",
            "00000000-0000-0000-0000-000000000002|-|ativo|2026-05-01 12:00:00|empresa",
        ]
    );
}

fn columns_of(conn: &mut PgConnection, table: &str) -> Vec<String> {
    names(
        conn,
        &format!(
            "SELECT column_name::text AS name FROM information_schema.columns \
             WHERE table_schema = 'public' AND table_name = '{table}' ORDER BY ordinal_position"
        ),
    )
}

#[test]
fn the_webhook_migrations_revert_exactly_and_give_older_urls_a_secret_that_cannot_decrypt() {
    let db = TestDb::new();
    let mut conn = db.conn();
    let url_columns = columns_of(&mut conn, "webhook_urls");
    assert_eq!(
        url_columns,
        [
            "id",
            "empresa_id",
            "url",
            "criado_em",
            "removido_em",
            "segredo_cifrado",
            "segredo_anterior_cifrado",
            "segredo_anterior_ate",
            "desativado_em",
            "url_normalizada",
            "reativado_em",
            "eventos",
            "entregas_por_acertar",
            "falhando_desde",
            "motivo_desativacao",
        ]
    );

    revert_through(
        &mut conn,
        "2026-11-21-000008_add_secret_and_disabling_to_webhook_urls",
    );

    assert_eq!(
        tables(&mut conn),
        [
            "api_keys",
            "casos_de_uso",
            "empresas",
            "solicitacoes_consentimento",
            "solicitacoes_historico",
            "webhook_urls"
        ]
    );
    assert_eq!(columns_of(&mut conn, "webhook_urls"), url_columns[..5]);
    assert_eq!(
        names(
            &mut conn,
            "SELECT conname::text AS name FROM pg_constraint \
             WHERE conrelid = 'webhook_urls'::regclass ORDER BY conname"
        ),
        ["webhook_urls_empresa_id_fkey", "webhook_urls_pkey"]
    );

    // A URL stored before the migrations gets the placeholder secret and is neither disabled
    // nor in a rotation.
    conn.batch_execute(
        "INSERT INTO empresas (id, nome, cnpj) VALUES \
             ('00000000-0000-0000-0000-00000000000e', 'ACME', '11222333000181'); \
         INSERT INTO webhook_urls (id, empresa_id, url) VALUES \
             ('00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-00000000000e', \
              'https://acme.example/hook')",
    )
    .unwrap();
    let applied = conn.run_pending_migrations(MIGRATIONS).unwrap();

    assert_eq!(
        applied.len(),
        from("2026-11-21-000008_add_secret_and_disabling_to_webhook_urls")
    );
    assert_eq!(tables(&mut conn), TABLES);
    assert_eq!(columns_of(&mut conn, "webhook_urls"), url_columns);
    assert_eq!(
        names(
            &mut conn,
            "SELECT concat_ws('|', segredo_cifrado, coalesce(segredo_anterior_cifrado, '-'), \
                 coalesce(segredo_anterior_ate::text, '-'), coalesce(desativado_em::text, '-')) \
                 AS name FROM webhook_urls"
        ),
        ["legado:sem-segredo|-|-|-"]
    );
}

fn constraints_of(conn: &mut PgConnection, table: &str) -> Vec<String> {
    names(
        conn,
        &format!(
            "SELECT conname::text AS name FROM pg_constraint \
             WHERE conrelid = '{table}'::regclass ORDER BY conname"
        ),
    )
}

#[test]
fn the_creation_migrations_revert_exactly_confirm_older_requests_and_drop_unfinished_ones() {
    let db = TestDb::new();
    let mut conn = db.conn();
    let columns = request_columns(&mut conn);
    let indexes = request_indexes(&mut conn);
    let constraints = constraints_of(&mut conn, "solicitacoes_consentimento");
    assert!(indexes.contains(&"solicitacoes_consentimento_empresa_criacao_pendente_idx".to_owned()));

    revert_through(
        &mut conn,
        "2026-11-23-000201_add_creation_state_to_solicitacoes",
    );

    assert!(!tables(&mut conn).contains(&"chaves_idempotencia".to_owned()));
    // its two columns, and the nine added after it (criacao_nao_encontrada_em,
    // status_desconhecido_desde, dados_apagados_em, sal_hash, hash_anterior,
    // versao_caso_de_uso, pgcc_nao_encontrada_em, incidente_integridade_em, origem), are gone
    assert_eq!(request_columns(&mut conn), columns[..columns.len() - 11]);
    assert!(!request_indexes(&mut conn)
        .contains(&"solicitacoes_consentimento_criacao_pendente_idx".to_owned()));
    // A request stored before the migrations (created on the PGCC first) is confirmed.
    conn.batch_execute(
        "INSERT INTO empresas (id, nome, cnpj) VALUES \
             ('00000000-0000-0000-0000-00000000000e', 'ACME', '11222333000181'); \
         INSERT INTO casos_de_uso (id, empresa_id, titulo) VALUES \
             ('00000000-0000-0000-0000-00000000000c', '00000000-0000-0000-0000-00000000000e', 't'); \
         INSERT INTO solicitacoes_consentimento (id, empresa_id, caso_de_uso_id, \
             caso_de_uso_id_template, cpf_titular, tipo_titular, modalidade_acesso, \
             data_expiracao_consentimento, status, pgcc_id, hash) \
         VALUES ('00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-00000000000e', \
             '00000000-0000-0000-0000-00000000000c', 'tpl-1', '52998224725', 'PessoaFisica', \
             'Direto', '2027-01-01T00:00:00Z', 'ativo', 'pgcc-1', 'h1')",
    )
    .unwrap();

    let applied = conn.run_pending_migrations(MIGRATIONS).unwrap();

    assert_eq!(
        applied.len(),
        from("2026-11-23-000201_add_creation_state_to_solicitacoes")
    );
    assert_eq!(request_columns(&mut conn), columns);
    assert_eq!(request_indexes(&mut conn), indexes);
    assert_eq!(
        constraints_of(&mut conn, "solicitacoes_consentimento"),
        constraints
    );
    assert_eq!(tables(&mut conn), TABLES);
    assert_eq!(
        names(
            &mut conn,
            "SELECT concat_ws('|', criacao, pgcc_id, coalesce(criacao_tentativa_em::text, '-')) \
             AS name FROM solicitacoes_consentimento"
        ),
        ["confirmada|pgcc-1|-"]
    );

    // Unfinished and cancelled creations are not consents: reverting removes them.
    conn.batch_execute(
        "INSERT INTO solicitacoes_consentimento (id, empresa_id, caso_de_uso_id, \
             caso_de_uso_id_template, cpf_titular, tipo_titular, modalidade_acesso, \
             data_expiracao_consentimento, status, pgcc_id, hash, criacao, criacao_tentativa_em) \
         VALUES ('00000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-00000000000e', \
             '00000000-0000-0000-0000-00000000000c', 'tpl-1', '52998224725', 'PessoaFisica', \
             'Direto', '2027-01-01T00:00:00Z', 'ativo', NULL, 'h2', 'em_andamento', now()), \
                ('00000000-0000-0000-0000-000000000003', '00000000-0000-0000-0000-00000000000e', \
             '00000000-0000-0000-0000-00000000000c', 'tpl-1', '52998224725', 'PessoaFisica', \
             'Direto', '2027-01-01T00:00:00Z', 'ativo', NULL, 'h3', 'cancelada', now())",
    )
    .unwrap();
    revert_through(
        &mut conn,
        "2026-11-23-000201_add_creation_state_to_solicitacoes",
    );
    assert_eq!(
        names(
            &mut conn,
            "SELECT pgcc_id AS name FROM solicitacoes_consentimento ORDER BY id"
        ),
        ["pgcc-1"]
    );
    let not_null = names(
        &mut conn,
        "SELECT is_nullable::text AS name FROM information_schema.columns \
         WHERE table_name = 'solicitacoes_consentimento' AND column_name = 'pgcc_id'",
    );
    assert_eq!(not_null, ["NO"]);
}

#[test]
fn a_creation_state_and_its_pgcc_id_must_agree() {
    let db = TestDb::new();
    let mut conn = db.conn();
    conn.batch_execute(
        "INSERT INTO empresas (id, nome, cnpj) VALUES \
             ('00000000-0000-0000-0000-00000000000e', 'ACME', '11222333000181'); \
         INSERT INTO casos_de_uso (id, empresa_id, titulo) VALUES \
             ('00000000-0000-0000-0000-00000000000c', '00000000-0000-0000-0000-00000000000e', 't')",
    )
    .unwrap();
    let insert = |criacao: &str, pgcc_id: &str, tentativa: &str| {
        format!(
            "INSERT INTO solicitacoes_consentimento (id, empresa_id, caso_de_uso_id, \
                 caso_de_uso_id_template, cpf_titular, tipo_titular, modalidade_acesso, \
                 data_expiracao_consentimento, status, pgcc_id, hash, criacao, \
                 criacao_tentativa_em) \
             VALUES (gen_random_uuid(), '00000000-0000-0000-0000-00000000000e', \
                 '00000000-0000-0000-0000-00000000000c', 'tpl-1', '52998224725', 'PessoaFisica', \
                 'Direto', '2027-01-01T00:00:00Z', 'ativo', {pgcc_id}, gen_random_uuid()::text, \
                 '{criacao}', {tentativa})"
        )
    };

    for refused in [
        insert("confirmada", "NULL", "NULL"),
        insert("em_andamento", "'pgcc-1'", "now()"),
        insert("cancelada", "'pgcc-1'", "now()"),
        insert("em_andamento", "NULL", "NULL"),
        insert("criada", "NULL", "now()"),
    ] {
        assert!(conn.batch_execute(&refused).is_err(), "{refused}");
    }
    for accepted in [
        insert("confirmada", "'pgcc-2'", "NULL"),
        insert("em_andamento", "NULL", "now()"),
        insert("em_andamento", "NULL", "now()"),
        insert("cancelada", "NULL", "NULL"),
    ] {
        conn.batch_execute(&accepted).unwrap();
    }
}

#[test]
fn the_outbox_tables_have_their_claim_and_log_indexes() {
    let db = TestDb::new();
    let mut conn = db.conn();
    let indexes = |conn: &mut PgConnection, table: &str| {
        names(
            conn,
            &format!(
                "SELECT indexdef::text AS name FROM pg_indexes \
                 WHERE schemaname = 'public' AND tablename = '{table}' ORDER BY indexname"
            ),
        )
    };

    assert_eq!(
        indexes(&mut conn, "webhook_entregas"),
        [
            "CREATE INDEX webhook_entregas_devidas_empresa_idx ON public.webhook_entregas \
             USING btree (empresa_id, proxima_tentativa_em) \
             WHERE ((status = 'pendente'::text) AND (NOT estacionada))",
            "CREATE UNIQUE INDEX webhook_entregas_empresa_evento_url_key ON public.webhook_entregas \
             USING btree (empresa_id, evento_id, webhook_url_id)",
            "CREATE INDEX webhook_entregas_empresa_finais_idx ON public.webhook_entregas \
             USING btree (empresa_id, atualizado_em) WHERE (status <> 'pendente'::text)",
            "CREATE INDEX webhook_entregas_pendentes_empresa_idx ON public.webhook_entregas \
             USING btree (empresa_id, proxima_tentativa_em) WHERE (status = 'pendente'::text)",
            "CREATE INDEX webhook_entregas_pendentes_idx ON public.webhook_entregas \
             USING btree (proxima_tentativa_em) WHERE (status = 'pendente'::text)",
            "CREATE INDEX webhook_entregas_pendentes_url_idx ON public.webhook_entregas \
             USING btree (webhook_url_id, estacionada) WHERE (status = 'pendente'::text)",
            "CREATE UNIQUE INDEX webhook_entregas_pkey ON public.webhook_entregas \
             USING btree (empresa_id, id)",
            "CREATE INDEX webhook_entregas_url_criado_em_idx ON public.webhook_entregas \
             USING btree (webhook_url_id, criado_em DESC)",
            // the console's health of a URL: its last success, its failed deliveries since a
            // time (issue 38, part 5)
            "CREATE INDEX webhook_entregas_url_entregue_em_idx ON public.webhook_entregas \
             USING btree (webhook_url_id, entregue_em DESC) WHERE (entregue_em IS NOT NULL)",
            "CREATE INDEX webhook_entregas_url_falhas_idx ON public.webhook_entregas \
             USING btree (webhook_url_id, criado_em) WHERE (status = 'falhou'::text)",
            // the delivery log's filters by status and by event type (issue 38, part 5)
            "CREATE INDEX webhook_entregas_url_status_idx ON public.webhook_entregas \
             USING btree (webhook_url_id, status, criado_em, id)",
            "CREATE INDEX webhook_entregas_url_tipo_status_idx ON public.webhook_entregas \
             USING btree (webhook_url_id, tipo_evento, status, criado_em, id) \
             WHERE (tipo_evento IS NOT NULL)",
        ]
    );
    assert_eq!(
        indexes(&mut conn, "webhook_tentativas"),
        [
            "CREATE INDEX webhook_tentativas_entrega_em_idx ON public.webhook_tentativas \
             USING btree (entrega_id, em)",
            "CREATE UNIQUE INDEX webhook_tentativas_pkey ON public.webhook_tentativas \
             USING btree (empresa_id, id)",
        ]
    );
}

#[test]
fn the_issue_14_migrations_add_the_reason_and_the_event_index_and_revert_exactly() {
    let db = TestDb::new();
    let mut conn = db.conn();
    let history_columns = columns_of(&mut conn, "solicitacoes_historico");
    assert_eq!(
        history_columns,
        [
            "id",
            "solicitacao_id",
            "de",
            "para",
            "em",
            "causa",
            "motivo",
            "empresa_id"
        ]
    );
    let event_indexes = |conn: &mut PgConnection| {
        names(
            conn,
            "SELECT indexname::text AS name FROM pg_indexes \
             WHERE schemaname = 'public' AND tablename = 'webhook_eventos' ORDER BY indexname",
        )
    };
    assert_eq!(
        event_indexes(&mut conn),
        [
            "webhook_eventos_empresa_criado_em_idx",
            "webhook_eventos_empresa_sem_entregas_idx",
            "webhook_eventos_empresa_transacao_idx",
            "webhook_eventos_pkey"
        ]
    );
    // the table itself bounds a reason (1 to 500 characters)
    assert!(constraints_of(&mut conn, "solicitacoes_historico")
        .contains(&"solicitacoes_historico_motivo_check".to_owned()));

    revert_through(
        &mut conn,
        "2026-11-27-001421_add_motivo_to_solicitacoes_historico",
    );

    assert_eq!(
        columns_of(&mut conn, "solicitacoes_historico"),
        history_columns[..6]
    );
    assert_eq!(
        event_indexes(&mut conn),
        ["webhook_eventos_criado_em_idx", "webhook_eventos_pkey"]
    );
    let applied = conn.run_pending_migrations(MIGRATIONS).unwrap();
    assert_eq!(
        applied.len(),
        from("2026-11-27-001421_add_motivo_to_solicitacoes_historico")
    );
    assert_eq!(
        columns_of(&mut conn, "solicitacoes_historico"),
        history_columns
    );
}

#[test]
fn the_per_url_events_migration_keeps_all_as_null_refuses_unknown_types_and_reverts_exactly() {
    let db = TestDb::new();
    let mut conn = db.conn();
    conn.batch_execute(
        "INSERT INTO empresas (id, nome, cnpj) VALUES \
             ('00000000-0000-0000-0000-00000000000e', 'ACME', '11222333000181'); \
         INSERT INTO webhook_urls (id, empresa_id, url, segredo_cifrado, url_normalizada) VALUES \
             ('00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-00000000000e', \
              'https://acme.example/a', 'x', 'https://acme.example/a')",
    )
    .unwrap();
    // a URL registered before (or without a choice) takes all: NULL
    assert_eq!(
        names(
            &mut conn,
            "SELECT coalesce(eventos::text, 'NULL') AS name FROM webhook_urls"
        ),
        ["NULL"]
    );
    for bad in ["'{}'", "'{solicitacao.apagada}'", "'{webhook.teste}'"] {
        let refused =
            conn.batch_execute(&format!("UPDATE webhook_urls SET eventos = {bad}::text[]"));
        assert!(refused.is_err(), "{bad} was accepted");
    }
    conn.batch_execute(
        "UPDATE webhook_urls SET eventos = '{solicitacao.revogada}'::text[]; \
         INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em) VALUES \
             ('00000000-0000-0000-0000-0000000000e1', '00000000-0000-0000-0000-00000000000e', \
              'webhook.teste', '{}', now()); \
         INSERT INTO webhook_entregas (id, evento_id, webhook_url_id, empresa_id, status, \
             tentativas, criado_em, atualizado_em) VALUES \
             ('00000000-0000-0000-0000-0000000000d1', '00000000-0000-0000-0000-0000000000e1', \
              '00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-00000000000e', \
              'entregue', 1, now(), now())",
    )
    .unwrap();

    revert_through(&mut conn, "2026-11-27-001423_choose_events_per_webhook_url");

    assert!(!columns_of(&mut conn, "webhook_urls").contains(&"eventos".to_owned()));
    assert_eq!(
        names(
            &mut conn,
            "SELECT count(*)::text AS name FROM webhook_eventos"
        ),
        ["0"],
        "test events (and their deliveries) go with the migration"
    );
    let applied = conn.run_pending_migrations(MIGRATIONS).unwrap();
    assert_eq!(
        applied.len(),
        from("2026-11-27-001423_choose_events_per_webhook_url")
    );
    assert!(columns_of(&mut conn, "webhook_urls").contains(&"eventos".to_owned()));
}

#[test]
fn the_feed_order_migration_places_existing_events_first_without_a_rewrite_and_reverts_exactly() {
    let db = TestDb::new();
    let mut conn = db.conn();
    let columns = columns_of(&mut conn, "webhook_eventos");
    revert_through(
        &mut conn,
        "2026-11-28-002151_order_webhook_eventos_by_commit",
    );
    assert_eq!(columns_of(&mut conn, "webhook_eventos"), columns[..5]);
    conn.batch_execute(
        "INSERT INTO empresas (id, nome, cnpj, criado_em) \
         VALUES ('00000000-0000-0000-0000-00000000000e', 'E', '11222333000181', now()); \
         INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em) \
         VALUES ('00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-00000000000e', \
             'solicitacao.criada', '{}', now())",
    )
    .unwrap();
    let file_before = names(
        &mut conn,
        "SELECT pg_relation_filenode('webhook_eventos')::text AS name",
    );

    let applied = conn.run_pending_migrations(MIGRATIONS).unwrap();

    assert_eq!(
        applied.len(),
        from("2026-11-28-002151_order_webhook_eventos_by_commit")
    );
    assert_eq!(columns_of(&mut conn, "webhook_eventos"), columns);
    assert_eq!(
        names(
            &mut conn,
            "SELECT pg_relation_filenode('webhook_eventos')::text AS name"
        ),
        file_before,
        "the table was not rewritten"
    );
    // the existing event stands before every new one: transaction 1, position 0
    conn.batch_execute(
        "INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em) \
         VALUES ('00000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-00000000000e', \
             'solicitacao.criada', '{}', now())",
    )
    .unwrap();
    assert_eq!(
        names(
            &mut conn,
            "SELECT string_agg(right(id::text, 1) || ':' || (transacao > 2)::text || ':' \
                 || (posicao > 0)::text, ',' ORDER BY transacao, posicao, id) AS name \
             FROM webhook_eventos"
        ),
        ["1:false:false,2:true:true"]
    );
}

#[test]
fn the_company_key_migrations_give_older_history_and_attempts_their_company_and_key_and_revert_exactly(
) {
    let db = TestDb::new();
    let mut conn = db.conn();
    let keys = |conn: &mut PgConnection| {
        names(
            conn,
            "SELECT conrelid::regclass::text || ' ' || pg_get_constraintdef(oid) AS name \
             FROM pg_constraint WHERE contype IN ('p', 'u', 'f') AND conrelid::regclass::text IN \
             ('casos_de_uso', 'solicitacoes_consentimento', 'solicitacoes_historico', \
              'verificacoes_status', 'webhook_urls', 'webhook_eventos', 'webhook_entregas', \
              'webhook_tentativas') ORDER BY 1",
        )
    };
    let after = keys(&mut conn);
    for table in [
        "solicitacoes_consentimento",
        "solicitacoes_historico",
        "webhook_tentativas",
    ] {
        assert!(
            after.contains(&format!("{table} PRIMARY KEY (empresa_id, id)")),
            "{table}: {after:?}"
        );
    }
    assert!(after.contains(
        &"webhook_tentativas FOREIGN KEY (empresa_id, entrega_id) \
          REFERENCES webhook_entregas(empresa_id, id)"
            .to_owned()
    ));

    revert_through(
        &mut conn,
        "2026-12-02-003001_add_empresa_id_to_history_and_attempts",
    );
    assert!(keys(&mut conn).contains(&"solicitacoes_consentimento PRIMARY KEY (id)".to_owned()));
    assert!(!columns_of(&mut conn, "solicitacoes_historico").contains(&"empresa_id".to_owned()));
    // Rows written before the migrations: two companies' requests with their history, and a
    // delivery with its attempt.
    let (acme, globex) = (
        "00000000-0000-0000-0000-00000000000e",
        "00000000-0000-0000-0000-00000000000f",
    );
    conn.batch_execute(&format!(
        "INSERT INTO empresas (id, nome, cnpj) VALUES \
             ('{acme}', 'ACME', '11222333000181'), ('{globex}', 'Globex', '11444777000161'); \
         INSERT INTO casos_de_uso (id, empresa_id, titulo) VALUES \
             ('00000000-0000-0000-0000-0000000000c1', '{acme}', 't'), \
             ('00000000-0000-0000-0000-0000000000c2', '{globex}', 't'); \
         INSERT INTO solicitacoes_consentimento (id, empresa_id, caso_de_uso_id, \
             caso_de_uso_id_template, cpf_titular, tipo_titular, modalidade_acesso, \
             data_expiracao_consentimento, status, pgcc_id, hash, sal_hash, criacao) \
         SELECT ('00000000-0000-0000-0000-00000000010' || n)::uuid, \
             CASE WHEN n % 2 = 0 THEN '{acme}'::uuid ELSE '{globex}'::uuid END, \
             CASE WHEN n % 2 = 0 THEN '00000000-0000-0000-0000-0000000000c1'::uuid \
                  ELSE '00000000-0000-0000-0000-0000000000c2'::uuid END, \
             'tpl-1', '52998224725', 'PessoaFisica', 'Direto', '2027-01-01T00:00:00Z', 'ativo', \
             'pgcc-' || n, 'h' || n, md5(n::text), 'confirmada' \
         FROM generate_series(1, 5) n; \
         INSERT INTO solicitacoes_historico (solicitacao_id, de, para, em, causa) \
         SELECT id, NULL, 'ativo', now(), 'empresa' FROM solicitacoes_consentimento; \
         INSERT INTO webhook_urls (id, empresa_id, url, segredo_cifrado, url_normalizada) VALUES \
             ('00000000-0000-0000-0000-0000000000a1', '{acme}', 'https://acme.example/a', 'x', \
              'https://acme.example/a'); \
         INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em) VALUES \
             ('00000000-0000-0000-0000-0000000000e1', '{acme}', 'webhook.teste', '{{}}', now()); \
         INSERT INTO webhook_entregas (id, evento_id, webhook_url_id, empresa_id, status, \
             tentativas, criado_em, atualizado_em) VALUES \
             ('00000000-0000-0000-0000-0000000000d1', '00000000-0000-0000-0000-0000000000e1', \
              '00000000-0000-0000-0000-0000000000a1', '{acme}', 'entregue', 1, now(), now()); \
         INSERT INTO webhook_tentativas (entrega_id, em, status_http, latencia_ms) VALUES \
             ('00000000-0000-0000-0000-0000000000d1', now(), 200, 5)"
    ))
    .unwrap();

    let applied = conn.run_pending_migrations(MIGRATIONS).unwrap();
    assert_eq!(
        applied.len(),
        from("2026-12-02-003001_add_empresa_id_to_history_and_attempts")
    );
    assert_eq!(keys(&mut conn), after);
    let count = |conn: &mut PgConnection, sql: &str| {
        diesel::sql_query(sql).get_result::<Count>(conn).unwrap().n
    };
    // 2026-12-03-003101 gave the older rows their company in the migration itself (no production
    // deployment exists: every database is small), then made the column NOT NULL
    assert_eq!(
        count(
            &mut conn,
            "SELECT count(*) AS n FROM solicitacoes_historico h \
             JOIN solicitacoes_consentimento s ON s.empresa_id = h.empresa_id \
                                               AND s.id = h.solicitacao_id"
        ),
        5,
        "each history row has its own request's company"
    );
    assert_eq!(
        count(
            &mut conn,
            "SELECT count(*) AS n FROM webhook_tentativas WHERE empresa_id = \
             '00000000-0000-0000-0000-00000000000e'"
        ),
        1,
        "the attempt has its delivery's company"
    );
    // a new row without its company is refused (NOT NULL)
    assert!(conn
        .batch_execute(
            "INSERT INTO solicitacoes_historico (solicitacao_id, de, para, em, causa) \
             VALUES ('00000000-0000-0000-0000-000000000101', NULL, 'ativo', now(), 'empresa')"
        )
        .is_err());
    // the backfills that 2026-12-02-003001 registered are marked done
    assert_eq!(
        count(
            &mut conn,
            "SELECT count(*) AS n FROM preenchimentos_retroativos \
             WHERE nome IN ('solicitacoes_historico_empresa_id', 'webhook_tentativas_empresa_id') \
               AND concluido_em IS NOT NULL"
        ),
        2
    );
}
