//! The event feed's order (issue 21, part 5): events are listed in the order of the transactions
//! that wrote them, and only once no running transaction can still add one before them, so a
//! reader resuming from its last position never misses an event that commits late.

mod common;

use diesel::connection::SimpleConnection;
use diesel::PgConnection;
use domain::CompanyId;
use ports::{EventFilter, EventLog, EventPosition, StoredEvent};
use postgres_adapter::{PgEventLog, PgPool};
use testkit::TestDb;
use uuid::Uuid;

use common::{create_company, pool};

fn insert_event(conn: &mut PgConnection, company: CompanyId, n: u128) {
    conn.batch_execute(&format!(
        "INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em) \
         VALUES ('{}', '{}', 'solicitacao.criada', '{{}}', now())",
        Uuid::from_u128(n),
        company.0
    ))
    .expect("insert an event");
}

/// The company's page after `cursor` once it holds at least `want` events (or after 10 s, for
/// the assertion to show what it holds): the feed's watermark is cluster-wide, so a transaction
/// of a test running beside this one may hold committed events back a moment (never reorder
/// them).
fn settled(
    log: &PgEventLog,
    company: CompanyId,
    cursor: Option<EventPosition>,
    want: usize,
) -> Vec<StoredEvent> {
    let all = EventFilter::default();
    for _ in 0..100 {
        let page = log.list(company, &all, cursor, 10).unwrap();
        if page.len() >= want {
            return page;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    log.list(company, &all, cursor, 10).unwrap()
}

fn ids(events: &[StoredEvent]) -> Vec<u128> {
    events.iter().map(|e| e.id.as_u128()).collect()
}

#[test]
fn an_event_still_uncommitted_holds_back_the_later_ones_and_then_comes_first_after_the_cursor() {
    held_back_then_first_after_the_cursor(PgEventLog::new);
}

#[test]
fn with_the_watermark_of_a_citus_coordinator_an_uncommitted_event_holds_back_the_later_ones_too() {
    held_back_then_first_after_the_cursor(|pool| PgEventLog::new(pool).watermark_as_on_citus());
}

fn held_back_then_first_after_the_cursor(log: impl Fn(PgPool) -> PgEventLog) {
    let db = TestDb::new();
    let pool = pool(&db);
    let company = create_company(&pool, "Empresa A", "112223330001").id;
    let other = create_company(&pool, "Empresa B", "998887770001").id;
    let log = log(pool.clone());
    let all = EventFilter::default();

    let mut first = db.conn();
    insert_event(&mut first, company, 1);
    let read = settled(&log, company, None, 1);
    assert_eq!(ids(&read), [1]);
    let cursor = read[0].position;

    // a creation's transaction starts (its event written, not committed yet) ...
    let mut slow = db.conn();
    slow.batch_execute("BEGIN").unwrap();
    insert_event(&mut slow, company, 2);
    // ... another one starts later and commits at once, and so does another company's
    insert_event(&mut first, company, 3);
    insert_event(&mut first, other, 4);
    let mut aborted = db.conn();
    aborted.batch_execute("BEGIN").unwrap();
    insert_event(&mut aborted, company, 5);
    aborted.batch_execute("ROLLBACK").unwrap();

    // the committed event waits: listing it now would put it before one still to come
    assert!(log
        .list(company, &all, Some(cursor), 10)
        .unwrap()
        .is_empty());

    slow.batch_execute("COMMIT").unwrap();
    // The watermark is cluster-wide: a transaction of a test running beside this one may hold
    // event 3 back a moment longer (never 2 before it, never past it), so wait for both.
    let after = settled(&log, company, Some(cursor), 2);
    assert_eq!(
        ids(&after),
        [2, 3],
        "in transaction order; the rolled back one never"
    );
    assert!(after[0].position < after[1].position);
    // read again from the last one: nothing new
    assert!(log
        .list(company, &all, Some(after[1].position), 10)
        .unwrap()
        .is_empty());
    // from the start, the same order, and each company its own
    assert_eq!(ids(&settled(&log, company, None, 3)), [1, 2, 3]);
    assert_eq!(ids(&settled(&log, other, None, 1)), [4]);
}
