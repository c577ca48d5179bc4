//! The scheduled use-case sync shared by several processes: each company is synchronized about
//! once per period, not once per process.

use std::time::Duration;

use testkit::processes::company_with_key;
use testkit::{Client, Sim, TestDb, Worker};

use crate::helpers::*;

#[test]
fn two_processes_running_the_scheduled_sync_sync_each_company_once_per_period() {
    let db = TestDb::new();
    let sim = Sim::start(&seed());
    company_with_key(&db, &sim, "Empresa A", CNPJ_A);
    company_with_key(&db, &sim, "Empresa B", CNPJ_B);
    let sim_admin = Client::new(&sim.base_url, None);
    assert_eq!(sim_admin.delete("/_sim/casos-de-uso-consultas").status, 204);

    // Rounds every 4 s in each process; watched for 9.5 s: two rounds each. One process alone
    // syncs each company twice; two sharing the schedule must not make it four.
    let env = [
        ("APP__WORKERS__SYNC_SECONDS", "4"),
        ("APP__WORKERS__STATUS_POLL_SECONDS", "0"),
        ("APP__WORKERS__EXPIRY_SECONDS", "0"),
    ];
    let first = Worker::start_with(&db, &sim, &env);
    let second = Worker::start_with(&db, &sim, &env);
    std::thread::sleep(Duration::from_millis(9_500));
    drop((first, second));

    let asked = sim_admin.get("/_sim/casos-de-uso-consultas").json;
    let counts: Vec<u64> = asked
        .as_object()
        .expect("an object of counts")
        .values()
        .map(|n| n.as_u64().unwrap())
        .collect();
    assert_eq!(counts.len(), 2, "both companies synced: {asked}");
    assert!(
        counts.iter().all(|n| (1..=3).contains(n)),
        "a company synced more than once per period: {asked}"
    );
    let synced_rows = db.scalar("SELECT count(*) AS v FROM casos_de_uso");
    assert_eq!(synced_rows, 4, "the seed's use cases of A and B are stored");
}
