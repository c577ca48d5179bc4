//! Read replicas (`database.replica_urls`): the consent list and the events feed read a
//! streaming replica while its replay lag is within `database.max_replica_lag_ms`, the primary
//! once it is past it or does not answer; a get-by-id always reads the primary. The replica is
//! the test's own, made with `pg_basebackup -R` from the test's own primary cluster; its replay
//! is paused with `pg_wal_replay_pause()` to make it fall behind. The use-case list is checked
//! too, with its in-process cache off (with it on, its misses read the primary).

use std::time::Duration;

use diesel::prelude::*;
use diesel::PgConnection;
use serde_json::Value;
use testkit::cluster::Cluster;
use testkit::db::with_database;
use testkit::processes::company_with_key;
use testkit::{wait_until, Api, Client, Sim, TestDb};

use crate::helpers::*;

const MAX_LAG_MS: u64 = 1000;
const LIST: &str = "/api/solicitacao-consentimento?limite=500";
const EVENTS: &str = "/api/eventos?limite=500";

/// `consent_api_db_reads_total{target="<target>"}` from `/metrics` (0 before the first).
fn reads(metrics: &Client, target: &str) -> u64 {
    let text = metrics.get("/metrics").text;
    let prefix = format!("consent_api_db_reads_total{{target=\"{target}\"}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .map_or(0, |v| v.trim().parse().unwrap())
}

/// The `consent_api_db_replica_*{replica="..."}` series of `/metrics`, name suffix -> value.
fn replica_series(metrics: &Client, name: &str) -> Option<f64> {
    let text = metrics.get("/metrics").text;
    let prefix = format!("consent_api_db_replica_{name}{{replica=\"");
    text.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .and_then(|rest| rest.rsplit_once(' '))
        .map(|(_, v)| v.trim().parse().unwrap())
}

fn listed_ids(a: &Client) -> Vec<String> {
    a.get(LIST).expect(200).data()["itens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Creates an active consent and at once reads it by id: found every time (get-by-id reads the
/// primary, whatever the replica holds).
fn create_and_get(a: &Client) -> String {
    let created = a.post_json(ATIVO, &active_body()).expect(200);
    let id = created.data()["id"].as_str().unwrap().to_owned();
    let got = a
        .get(&format!("/api/solicitacao-consentimento/{id}"))
        .expect(200);
    assert_eq!(got.data()["id"], Value::from(id.as_str()));
    id
}

fn on_replica(replica: &Cluster, sql: &str) {
    let mut conn = PgConnection::establish(&format!("{}?gssencmode=disable", replica.admin_url()))
        .expect("connect to the replica");
    diesel::sql_query(sql)
        .execute(&mut conn)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

#[test]
fn the_lists_leave_a_replica_past_its_lag_bound_and_come_back_when_it_catches_up() {
    let primary = Cluster::start();
    let db = TestDb::on_cluster(primary.admin_url());
    // Declared after the primary: stopped first.
    let replica = Cluster::replica_of(&primary);
    let replica_url = with_database(replica.admin_url(), db.name());
    let sim = Sim::start(&seed());
    let (_, key) = company_with_key(&db, &sim, "Empresa A", CNPJ_A);
    let max_lag = MAX_LAG_MS.to_string();
    let api = Api::start_with(
        &db,
        &sim,
        &[
            ("APP__DATABASE__REPLICA_URLS", replica_url.as_str()),
            ("APP__DATABASE__MAX_REPLICA_LAG_MS", max_lag.as_str()),
            ("APP__WORKERS__RUN_IN_SERVE", "false"),
            // the use-case list reads a replica only without its in-process cache
            ("APP__CACHE__USE_CASE_LISTS_BYTES", "0"),
        ],
    );
    let a = Client::new(&api.base_url, Some(&key));
    let metrics = Client::new(&api.base_url, None);
    a.post_empty("/api/casos-de-uso/sincronizar").expect(200);

    // Caught up: the lists read the replica; get-by-id right after a creation finds it.
    let mut created = Vec::new();
    for _ in 0..3 {
        created.push(create_and_get(&a));
    }
    assert!(
        wait_until(Duration::from_secs(10), || {
            let before = reads(&metrics, "replica");
            let ids = listed_ids(&a);
            created.iter().all(|id| ids.contains(id)) && reads(&metrics, "replica") > before
        }),
        "the list never read the caught-up replica"
    );
    assert_eq!(replica_series(&metrics, "in_use"), Some(1.0));
    let replica_before = reads(&metrics, "replica");
    a.get(EVENTS).expect(200);
    a.get("/api/casos-de-uso").expect(200);
    assert_eq!(
        reads(&metrics, "replica"),
        replica_before + 2,
        "the events feed or the use-case list did not read the replica"
    );

    // Replay paused: the replica holds nothing written from now on.
    on_replica(&replica, "SELECT pg_wal_replay_pause()");
    let mut during_pause = Vec::new();
    for _ in 0..5 {
        // every creation found by id at once, though the replica never gets it
        during_pause.push(create_and_get(&a));
    }
    let newest = during_pause.last().unwrap().clone();
    // Its lag passes the bound at most MAX_LAG_MS after the first of these writes: from then
    // on, within 2 s, the list reads the primary, where the new requests are.
    assert!(
        wait_until(
            Duration::from_millis(MAX_LAG_MS) + Duration::from_secs(2),
            || listed_ids(&a).contains(&newest)
        ),
        "the list kept reading the paused replica past its lag bound"
    );
    let ids = listed_ids(&a);
    assert!(during_pause.iter().all(|id| ids.contains(id)));
    assert_eq!(replica_series(&metrics, "in_use"), Some(0.0));
    // The replica is left as soon as its lag could pass the bound; the gauge shows it past
    // the bound at the next measurement.
    assert!(
        wait_until(Duration::from_secs(2), || replica_series(
            &metrics,
            "lag_seconds"
        )
        .unwrap()
            > MAX_LAG_MS as f64 / 1000.0),
        "the lag gauge does not show the paused replica behind"
    );
    let (primary_before, replica_before) = (reads(&metrics, "primary"), reads(&metrics, "replica"));
    a.get(LIST).expect(200);
    a.get(EVENTS).expect(200);
    assert_eq!(reads(&metrics, "primary"), primary_before + 2);
    assert_eq!(reads(&metrics, "replica"), replica_before);

    // Resumed: it catches up and the lists read it again.
    on_replica(&replica, "SELECT pg_wal_replay_resume()");
    assert!(
        wait_until(Duration::from_secs(10), || replica_series(
            &metrics, "in_use"
        ) == Some(1.0)),
        "the replica was not used again after catching up"
    );
    let (primary_before, replica_before) = (reads(&metrics, "primary"), reads(&metrics, "replica"));
    let ids = listed_ids(&a);
    assert!(
        during_pause.iter().all(|id| ids.contains(id)),
        "the replica read after resuming misses requests"
    );
    a.get(EVENTS).expect(200);
    assert_eq!(reads(&metrics, "replica"), replica_before + 2);
    assert_eq!(reads(&metrics, "primary"), primary_before);

    // A replica that stops answering is skipped: the lists still answer, from the primary.
    replica.crash();
    let newest = create_and_get(&a);
    assert!(listed_ids(&a).contains(&newest));
    a.get(EVENTS).expect(200);
    assert!(
        wait_until(Duration::from_secs(5), || replica_series(
            &metrics, "in_use"
        ) == Some(0.0)),
        "a replica that does not answer is still reported in use"
    );
    let primary_before = reads(&metrics, "primary");
    assert!(listed_ids(&a).contains(&newest));
    assert_eq!(reads(&metrics, "primary"), primary_before + 1);
}
