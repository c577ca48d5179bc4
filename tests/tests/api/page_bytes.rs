//! Answers bounded in bytes (issue 22, part 1): a page stops adding items at
//! `server.page_max_bytes` and gives the cursor to continue, so a company asking for 500
//! requests with 60 KB proofs gets about 1 MiB at a time, every request once, and twelve such
//! pages at once cost the process a few pages' worth of memory, not 12 x 30 MB.

use serde_json::json;

use crate::helpers::*;
use crate::lifecycle::{create, synced_with};

const EXPORT: &str = "/api/titulares/consentimentos";
const LIST: &str = "/api/solicitacao-consentimento";
const MIB: usize = 1024 * 1024;

/// `n` active requests of the subject, each with a 60 KB proof; their ids, oldest first.
fn heavy_requests(app: &TestApp, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let mut body = active_body();
            body["provaColeta"] = json!(format!("{i:05}:{}", "p".repeat(60_000)));
            create(&app.a, ATIVO, &body).0
        })
        .collect()
}

/// Follows `proximoCursor` from `first` to the end; every page's body size and the ids seen.
fn follow(page: impl Fn(Option<&str>) -> testkit::Reply) -> (Vec<usize>, Vec<String>) {
    let (mut sizes, mut ids) = (Vec::new(), Vec::new());
    let mut cursor: Option<String> = None;
    for _ in 0..100 {
        let reply = page(cursor.as_deref()).expect(200);
        sizes.push(reply.text.len());
        let items = reply.data()["itens"].as_array().unwrap().clone();
        assert!(
            !items.is_empty(),
            "a page with a cursor before it is never empty here"
        );
        ids.extend(items.iter().map(|i| i["id"].as_str().unwrap().to_owned()));
        match reply.data()["proximoCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return (sizes, ids),
        }
    }
    panic!("more than 100 pages");
}

fn export(app: &TestApp, cursor: Option<&str>) -> testkit::Reply {
    let query = match cursor {
        Some(c) => format!("?limite=500&cursor={c}"),
        None => "?limite=500".to_owned(),
    };
    app.a
        .post_json(&format!("{EXPORT}{query}"), &json!({ "cpfTitular": CPF }))
}

#[test]
fn pages_of_heavy_requests_stop_at_the_byte_bound_and_the_cursors_return_each_request_once() {
    let app = synced_with(&[("APP__WORKERS__STATUS_POLL_SECONDS", "0")]);
    let created = heavy_requests(&app, 40);

    // The export: 40 x 60 KB would be 2.4 MB in one page.
    let (sizes, ids) = follow(|cursor| export(&app, cursor));
    assert_eq!(ids, created, "every request once, oldest first");
    assert!(sizes.len() >= 3, "{sizes:?}");
    assert!(sizes.iter().all(|&s| s <= 3 * MIB / 2), "{sizes:?}");

    // The list (its items carry the proof too).
    let (sizes, ids) = follow(|cursor| {
        let query = match cursor {
            Some(c) => format!("?limite=500&cursor={c}"),
            None => "?limite=500".to_owned(),
        };
        app.a.get(&format!("{LIST}{query}"))
    });
    assert_eq!(ids, created);
    assert!(
        sizes.len() >= 3 && sizes.iter().all(|&s| s <= 3 * MIB / 2),
        "{sizes:?}"
    );
}

/// Copies of request `id` (the same subject and company, another id, PGCC id, hash and a
/// 60 KB proof each), made with SQL: `n` of them, created a millisecond apart after it.
fn copies(app: &TestApp, id: &str, n: u32) {
    diesel::RunQueryDsl::execute(
        diesel::sql_query(format!(
            "INSERT INTO solicitacoes_consentimento \
             SELECT (jsonb_populate_record(s, jsonb_build_object( \
                 'id', gen_random_uuid(), 'pgcc_id', 'copia-' || g, \
                 'hash', encode(sha256(('copia-' || g)::bytea), 'hex'), \
                 'criado_em', s.criado_em + g * interval '1 millisecond', \
                 'prova_coleta', lpad(g::text, 5, '0') || ':' || repeat('p', 60000)))).* \
             FROM solicitacoes_consentimento s, generate_series(1, {n}) g WHERE s.id = '{id}'"
        )),
        &mut app.db.conn(),
    )
    .expect("copy the request");
}

#[test]
fn twelve_concurrent_export_pages_cost_the_process_a_few_pages_not_twelve_whole_answers() {
    // A connection for each page, so all twelve are read at once (the memory this test bounds):
    // with the tests' four, eight waited for one, and on Citus, where a page is gathered from
    // the workers, a wait could outlast the checkout timeout (a 503, which is the pool's bound
    // working, tested in `pool_and_migrations`, not this test's subject).
    let app = synced_with(&[
        ("APP__WORKERS__STATUS_POLL_SECONDS", "0"),
        ("APP__DATABASE__POOL_SIZE", "12"),
    ]);
    // 500 requests of one subject with 60 KB proofs: one page of `limite=500` would be 30 MB.
    let first = heavy_requests(&app, 1).remove(0);
    copies(&app, &first, 499);
    // one page first: whatever a single request costs is in the baseline
    export(&app, None).expect(200);
    let before = app.api.peak_rss_bytes();

    let sizes: Vec<usize> = std::thread::scope(|scope| {
        let pages: Vec<_> = (0..12)
            .map(|_| scope.spawn(|| export(&app, None).expect(200).text.len()))
            .collect();
        pages.into_iter().map(|p| p.join().unwrap()).collect()
    });

    assert!(sizes.iter().all(|&s| s <= 3 * MIB / 2), "{sizes:?}");
    let grown = app.api.peak_rss_bytes().saturating_sub(before);
    assert!(
        grown < 200 * 1024 * 1024,
        "peak RSS grew by {} MiB",
        grown / (1024 * 1024)
    );
    // and following the cursors still returns all 500, once each
    let (_, ids) = follow(|cursor| export(&app, cursor));
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!((ids.len(), unique.len()), (500, 500));
}

/// Every event of company A through the feed from its start, following the cursors; the ids
/// and the number of pages read. Each page's items stay within the 2,000-byte bound (or are one
/// item alone).
fn read_feed(app: &TestApp) -> (Vec<String>, usize) {
    let mut seen = Vec::new();
    let mut query = "/api/eventos?limite=200".to_owned();
    for pages in 1..50 {
        let reply = app.a.get(&query).expect(200);
        let items = reply.data()["itens"].as_array().unwrap().clone();
        if items.is_empty() {
            return (seen, pages);
        }
        let bytes: usize = items.iter().map(|i| i.to_string().len() + 1).sum();
        assert!(
            items.len() == 1 || bytes <= 2000,
            "{bytes} bytes in {} items",
            items.len()
        );
        seen.extend(items.iter().map(|i| i["id"].as_str().unwrap().to_owned()));
        let cursor = reply.data()["proximoCursor"].as_str().unwrap().to_owned();
        query = format!("/api/eventos?limite=200&cursor={cursor}");
    }
    panic!("more than 50 pages");
}

#[test]
fn a_smaller_configured_bound_cuts_the_event_feed_too_and_its_cursor_continues() {
    let app = synced_with(&[
        ("APP__WORKERS__STATUS_POLL_SECONDS", "0"),
        ("APP__SERVER__PAGE_MAX_BYTES", "2000"),
    ]);
    for _ in 0..8 {
        create(&app.a, PENDENTE, &pending_body());
    }
    let stored = app.db.scalar(&format!(
        "SELECT count(*) AS v FROM webhook_eventos WHERE empresa_id = '{}'",
        app.company_a
    )) as usize;
    // the feed lists an event once no running transaction could precede it: wait for all
    assert!(testkit::wait_until(
        std::time::Duration::from_secs(30),
        || read_feed(&app).0.len() == stored
    ));

    let (seen, pages) = read_feed(&app);
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), stored, "every event once");
    assert!(
        stored >= 9,
        "the sync's event and the eight creations': {stored}"
    );
    assert!(pages > 3, "{pages} pages");
}
