//! Migrations a live database survives (issue 21): while the migrations after the salt's and
//! its backfill run over a table of 100,000 consents, a reader and a writer of that table are
//! never held more than a second.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel_migrations::MigrationHarness;
use postgres_adapter::{
    connect, invalid_indexes, run_migrations, run_pending_backfills, PoolSettings, MIGRATIONS,
};
use testkit::TestDb;

const ROWS: i64 = 100_000;
const SALT_MIGRATION: &str = "20261127001471";
const COMPANY: &str = "00000000-0000-0000-0000-00000000000e";

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

fn count(conn: &mut PgConnection, sql: &str) -> i64 {
    diesel::sql_query(sql).get_result::<Count>(conn).unwrap().n
}

/// The longest single statement of `work`, run in a loop on a connection of its own until
/// `stop`, and how many ran.
fn timed_loop(
    url: String,
    stop: Arc<AtomicBool>,
    work: impl Fn(&mut PgConnection, i64) + Send + 'static,
) -> thread::JoinHandle<(Duration, u64)> {
    thread::spawn(move || {
        let mut conn = PgConnection::establish(&url).unwrap();
        let (mut longest, mut runs) = (Duration::ZERO, 0u64);
        while !stop.load(Ordering::Relaxed) {
            let started = Instant::now();
            work(&mut conn, (runs as i64 * 7_919) % ROWS + 1);
            longest = longest.max(started.elapsed());
            runs += 1;
        }
        (longest, runs)
    })
}

fn row_id(n: i64) -> String {
    format!("00000000-0000-0000-0000-{n:012}")
}

#[test]
fn a_reader_and_a_writer_are_never_blocked_more_than_a_second_while_the_salt_migrations_and_backfill_run(
) {
    let db = TestDb::new();
    let mut conn = db.conn();
    while conn
        .applied_migrations()
        .unwrap()
        .iter()
        .any(|v| v.to_string() == SALT_MIGRATION)
    {
        conn.revert_last_migration(MIGRATIONS).unwrap();
    }
    // 100,000 consents stored before the salt, each with its unsalted hash
    conn.batch_execute(&format!(
        "INSERT INTO empresas (id, nome, cnpj) VALUES ('{COMPANY}', 'ACME', '11222333000181'); \
         INSERT INTO casos_de_uso (id, empresa_id, titulo) VALUES \
             ('00000000-0000-0000-0000-00000000000c', '{COMPANY}', 't'); \
         INSERT INTO solicitacoes_consentimento (id, empresa_id, caso_de_uso_id, \
             caso_de_uso_id_template, cpf_titular, tipo_titular, modalidade_acesso, \
             data_expiracao_consentimento, data_titular_respondeu_consentimento, prova_coleta, \
             status, pgcc_id, hash, criado_em) \
         SELECT ('00000000-0000-0000-0000-' || lpad(g::text, 12, '0'))::uuid, '{COMPANY}', \
             '00000000-0000-0000-0000-00000000000c', 'tpl-1', lpad((g % 100000000000)::text, 11, '0'), \
             'PessoaFisica', 'Direto', '2030-01-01T00:00:00Z', '2026-05-01T12:00:00Z', 'prova', \
             'ativo', 'pgcc-' || g, encode(sha256(g::text::bytea), 'hex'), \
             '2026-05-01T12:00:00Z'::timestamptz + g * interval '1 second' \
         FROM generate_series(1, {ROWS}) g; \
         ANALYZE solicitacoes_consentimento"
    ))
    .unwrap();
    let pool = connect(
        db.url(),
        &PoolSettings {
            max_size: 2,
            checkout_timeout: Duration::from_secs(10),
            ..PoolSettings::default()
        },
    )
    .unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let reader = timed_loop(db.url().to_owned(), stop.clone(), |conn, n| {
        // by id, then a page of the company's list
        diesel::sql_query(
            "SELECT id::text AS name FROM solicitacoes_consentimento WHERE id = $1::uuid",
        )
        .bind::<Text, _>(row_id(n))
        .execute(conn)
        .unwrap();
        diesel::sql_query(
            "SELECT id FROM solicitacoes_consentimento \
             WHERE empresa_id = $1::uuid AND criacao = 'confirmada' \
             ORDER BY criado_em, id LIMIT 20",
        )
        .bind::<Text, _>(COMPANY)
        .execute(conn)
        .unwrap();
    });
    let writer = timed_loop(db.url().to_owned(), stop.clone(), |conn, n| {
        diesel::sql_query(
            "UPDATE solicitacoes_consentimento SET atualizado_em = now() WHERE id = $1::uuid",
        )
        .bind::<Text, _>(row_id(n))
        .execute(conn)
        .unwrap();
    });
    thread::sleep(Duration::from_millis(200));

    let started = Instant::now();
    let applied = run_migrations(&pool).unwrap();
    let backfills = run_pending_backfills(&pool, 1_000).unwrap();
    let took = started.elapsed();
    thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::Relaxed);
    let (read_wait, reads) = reader.join().unwrap();
    let (write_wait, writes) = writer.join().unwrap();
    eprintln!(
        "migrations {applied:?} and backfills {backfills:?} in {took:?}; longest read {read_wait:?} \
         of {reads}, longest write {write_wait:?} of {writes}"
    );

    assert!(applied.iter().any(|m| m.starts_with("2026-11-27-001471")));
    let salt = backfills
        .iter()
        .find(|b| b.name == "sal_hash")
        .expect("the salt backfill ran");
    assert_eq!(salt.touched, ROWS as u64);
    // and every open request got its status check schedule the same way
    let schedule = backfills
        .iter()
        .find(|b| b.name == "verificacoes_status")
        .expect("the schedule backfill ran");
    assert_eq!(schedule.touched, ROWS as u64);
    assert!(
        read_wait < Duration::from_secs(1),
        "a read waited {read_wait:?}"
    );
    assert!(
        write_wait < Duration::from_secs(1),
        "a write waited {write_wait:?}"
    );
    assert!(
        reads > 100 && writes > 100,
        "{reads} reads, {writes} writes"
    );

    // every row got its salt and salted hash, its unsalted one kept
    let mut conn = db.conn();
    assert_eq!(
        count(
            &mut conn,
            "SELECT count(*) AS n FROM solicitacoes_consentimento \
             WHERE sal_hash ~ '^[0-9a-f]{32}$' AND hash ~ '^[0-9a-f]{64}$' \
               AND hash_anterior = encode(sha256(substr(id::text, 25)::bigint::text::bytea), 'hex') \
               AND hash <> hash_anterior"
        ),
        ROWS
    );
    assert_eq!(
        count(
            &mut conn,
            "SELECT count(DISTINCT sal_hash) AS n FROM solicitacoes_consentimento"
        ),
        ROWS,
        "a salt per row"
    );
    assert_eq!(
        count(
            &mut conn,
            "SELECT count(*) AS n FROM preenchimentos_retroativos \
             WHERE nome = 'sal_hash' AND concluido_em IS NOT NULL"
        ),
        1
    );
    assert!(invalid_indexes(&mut conn).unwrap().is_empty());
    assert_eq!(
        count(
            &mut conn,
            "SELECT count(*) AS n FROM pg_constraint \
             WHERE conname = 'solicitacoes_consentimento_sal_hash_check' AND convalidated"
        ),
        1
    );
    // a second run finds nothing to do
    assert!(run_migrations(&pool).unwrap().is_empty());
    assert!(run_pending_backfills(&pool, 1_000).unwrap().is_empty());
}
