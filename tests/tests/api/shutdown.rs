//! Graceful shutdown: SIGTERM stops accepting connections, lets in-flight requests finish, stops
//! the background jobs after their current round, and exits 0 within the grace period.

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use testkit::processes::send_signal;
use testkit::{wait_until, Client, Worker};

use crate::helpers::*;

const GRACE_SECONDS: u64 = 10;

fn address(base_url: &str) -> SocketAddr {
    base_url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .expect("the API's address")
}

#[test]
fn sigterm_finishes_the_request_in_flight_refuses_new_connections_and_exits_0() {
    let mut app = TestApp::spawn_with(&[
        ("APP__SERVER__SHUTDOWN_GRACE_SECONDS", "10"),
        ("APP__PGCC__TIMEOUT_MS", "10000"),
        // the jobs run (they must stop too), but none calls the PGCC and takes the fault
        ("APP__WORKERS__STATUS_POLL_SECONDS", "0"),
        ("APP__WORKERS__SYNC_SECONDS", "0"),
    ]);
    app.a
        .post_empty("/api/casos-de-uso/sincronizar")
        .expect(200);
    let addr = address(&app.api.base_url);

    // A creation held 2.5 s by the PGCC: in flight when the signal arrives.
    app.fault(json!({"latencyMs": 2500, "count": 1}));
    let done = Arc::new(AtomicBool::new(false));
    let in_flight = {
        let client = Client::new(&app.api.base_url, Some(&app.key_a));
        let done = done.clone();
        std::thread::spawn(move || {
            let reply = client.post_json(PENDENTE, &pending_body());
            done.store(true, Ordering::SeqCst);
            reply
        })
    };
    // In flight: its row is stored (unfinished, invisible to reads) before the PGCC is called.
    assert!(
        wait_until(Duration::from_secs(10), || {
            app.db
                .scalar("SELECT count(*) AS v FROM solicitacoes_consentimento")
                == 1
        }),
        "the creation never reached the PGCC call"
    );
    send_signal(app.api.pid(), "TERM");

    // No new connection once the signal is handled, while the creation is still running.
    let refused = wait_until(Duration::from_secs(2), || {
        TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_err()
    });
    assert!(refused, "new connections were still accepted after SIGTERM");
    if done.load(Ordering::SeqCst) {
        let reply = in_flight.join().unwrap();
        panic!(
            "the creation ended before the listener closed: the test did not observe an in-flight request ({} {})",
            reply.status, reply.text
        );
    }

    let reply = in_flight.join().unwrap().expect(200);
    let id = reply.data()["id"].as_str().unwrap().to_owned();
    assert_eq!(
        app.db.scalar(&format!(
            "SELECT count(*) AS v FROM solicitacoes_consentimento WHERE id = '{id}' AND criacao = 'confirmada'"
        )),
        1,
        "the request finished during the shutdown was stored"
    );
    let status = app
        .api
        .wait_exit(Duration::from_secs(GRACE_SECONDS + 5))
        .expect("the process did not exit within the grace period");
    assert!(status.success(), "exit status {status}");
}

#[test]
fn sigterm_stops_the_worker_command_after_its_current_round_with_exit_0() {
    let app = TestApp::spawn();
    let mut worker = Worker::start_with(
        &app.db,
        &app.sim,
        &[
            ("APP__SERVER__SHUTDOWN_GRACE_SECONDS", "10"),
            ("APP__WORKERS__DELIVERY_POLL_MS", "100"),
        ],
    );
    send_signal(worker.pid(), "TERM");
    let status = worker
        .wait_exit(Duration::from_secs(GRACE_SECONDS + 5))
        .expect("the worker did not exit within the grace period");
    assert!(status.success(), "exit status {status}");
}
