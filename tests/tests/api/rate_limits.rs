//! Rate limits per company, through the real binary: a company over its quota gets 429 with
//! `Retry-After` and the RateLimit headers, while another company, in the same time window, is
//! served as usual. No assertion on how fast anything is: the pace only has to exceed the quota.

use std::time::{Duration, Instant};

use testkit::{wait_until, Api, Client};

use crate::helpers::*;

const PER_SECOND: u32 = 2;
const BURST: u32 = 4;

/// The numbers of `RateLimit: limit=L, remaining=R, reset=S`.
fn rate_limit_fields(value: &str) -> (u32, u32, u64) {
    let mut limit = None;
    let mut remaining = None;
    let mut reset = None;
    for part in value.split(',') {
        let (name, number) = part.trim().split_once('=').expect("name=value");
        match name {
            "limit" => limit = number.parse().ok(),
            "remaining" => remaining = number.parse().ok(),
            "reset" => reset = number.parse().ok(),
            other => panic!("unexpected RateLimit parameter {other} in {value}"),
        }
    }
    (limit.unwrap(), remaining.unwrap(), reset.unwrap())
}

#[test]
fn a_company_at_three_times_its_quota_gets_429s_with_headers_while_another_is_served() {
    let per_second = PER_SECOND.to_string();
    let burst = BURST.to_string();
    let app = TestApp::spawn_with(&[
        ("APP__RATE_LIMIT__PER_SECOND", per_second.as_str()),
        ("APP__RATE_LIMIT__BURST", burst.as_str()),
    ]);
    let policy = format!("{PER_SECOND};w=1;burst={BURST}");
    // Company A sends at 3x its rate for 3 s; B sends one request for every 6 of A's (1 a
    // second, half its rate), interleaved in the same window.
    let interval = Duration::from_secs(1) / (3 * PER_SECOND);
    let start = Instant::now();
    let (mut a_ok, mut a_limited, mut b_replies) = (0, Vec::new(), Vec::new());
    for i in 0..(3 * 3 * PER_SECOND) {
        let due = start + interval * i;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let reply = app.a.get("/api/casos-de-uso");
        match reply.status {
            200 => a_ok += 1,
            429 => a_limited.push(reply.expect(429)),
            other => panic!("company A: unexpected {other}: {}", reply.text),
        }
        if i % 6 == 0 {
            b_replies.push(app.b.get("/api/casos-de-uso"));
        }
    }

    assert!(a_ok >= BURST, "the burst is always served: {a_ok} served");
    assert!(
        !a_limited.is_empty(),
        "company A went over its quota and was refused"
    );
    for refused in &a_limited {
        let retry: u64 = refused
            .retry_after
            .as_deref()
            .expect("Retry-After on a 429")
            .parse()
            .expect("Retry-After in whole seconds");
        assert!(retry >= 1, "{retry}");
        let (limit, remaining, reset) =
            rate_limit_fields(refused.header("ratelimit").expect("RateLimit on a 429"));
        assert_eq!((limit, remaining), (BURST, 0));
        assert!(
            reset >= retry,
            "full only after the next token: {reset} < {retry}"
        );
        assert_eq!(refused.header("ratelimit-policy"), Some(policy.as_str()));
        assert_eq!(refused.json["isPgccErro"], false);
        assert_eq!(refused.json["pgccCodigoErro"], "OK");
    }
    assert!(b_replies.len() >= 3, "{}", b_replies.len());
    for reply in b_replies {
        let reply = reply.expect(200);
        let (limit, remaining, _) =
            rate_limit_fields(reply.header("ratelimit").expect("RateLimit on success"));
        assert_eq!(limit, BURST);
        assert!(remaining < BURST);
        assert_eq!(reply.header("ratelimit-policy"), Some(policy.as_str()));
    }
}

#[test]
fn requests_without_a_usable_key_are_401_and_carry_no_rate_limit_headers() {
    let app = TestApp::spawn_with(&[
        ("APP__RATE_LIMIT__PER_SECOND", "1"),
        ("APP__RATE_LIMIT__BURST", "1"),
    ]);

    for _ in 0..3 {
        let reply = app.anonymous.get("/api/casos-de-uso").expect(401);
        assert_eq!(reply.header("ratelimit"), None);
    }
    let served = app.a.get("/api/casos-de-uso").expect(200);
    assert!(served.header("ratelimit").is_some());
}

/// Three `serve` replicas on one database: a company sending round robin to all three at three
/// times its quota is served `burst + per_second × elapsed` requests (±10%), as one process would
/// serve it, not three times that; another company is served meanwhile.
#[test]
fn three_replicas_together_hold_a_companys_quota() {
    replicas_hold_one_quota(3, 0);
}

/// Two replicas serving and a third that beats but takes no traffic (out of the load balancer):
/// the two serve the company its whole quota, not two thirds of it.
#[test]
fn a_replica_that_serves_nothing_does_not_shrink_the_quota() {
    replicas_hold_one_quota(2, 1);
}

fn replicas_hold_one_quota(serving: usize, idle: usize) {
    const PER_SECOND: u32 = 20;
    const BURST: u32 = 20;
    let env = [
        ("APP__RATE_LIMIT__PER_SECOND", "20"),
        ("APP__RATE_LIMIT__BURST", "20"),
        ("APP__RATE_LIMIT__REPLICA_HEARTBEAT_MS", "200"),
    ];
    let app = TestApp::spawn_with(&env);
    let others: Vec<Api> = (1..serving + idle)
        .map(|_| Api::start_with(&app.db, &app.sim, &env))
        .collect();
    let apis: Vec<&Api> = std::iter::once(&app.api).chain(others.iter()).collect();
    let replicas: Vec<Client> = apis[..serving]
        .iter()
        .map(|api| Client::new(&api.base_url, Some(&app.key_a)))
        .collect();
    let live =
        "SELECT count(*) AS v FROM replicas_ativas WHERE visto_em > now() - interval '600 ms'";
    assert!(
        wait_until(Duration::from_secs(10), || app.db.scalar(live)
            == (serving + idle) as i64),
        "every replica beats"
    );
    // the serving replicas serve (company B, so A's buckets stay full) and have said so in a
    // beat, and the buckets these touched are full again
    for api in &apis[..serving] {
        Client::new(&api.base_url, Some(&app.key_b))
            .get("/api/casos-de-uso")
            .expect(200);
    }
    std::thread::sleep(Duration::from_millis(1500));

    let n = serving as u32;
    let interval = Duration::from_secs(1) / (3 * PER_SECOND);
    let start = Instant::now();
    let (mut served, mut refused) = (0u32, 0u32);
    let mut last_sent = start;
    for i in 0..(3 * 3 * PER_SECOND) {
        let due = start + interval * i;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        last_sent = Instant::now();
        let reply = replicas[(i % n) as usize].get("/api/casos-de-uso");
        match reply.status {
            200 => served += 1,
            429 => refused += 1,
            other => panic!("company A: unexpected {other}: {}", reply.text),
        }
        if i % 20 == 0 {
            app.b.get("/api/casos-de-uso").expect(200);
        }
    }

    let elapsed = last_sent.duration_since(start).as_secs_f64();
    let expected = f64::from(BURST) + f64::from(PER_SECOND) * elapsed;
    let served = f64::from(served);
    assert!(
        (served - expected).abs() <= expected * 0.10 + 1.0,
        "{serving} serving, {idle} idle: served {served} of {} sent over {elapsed:.2} s; one \
         quota allows {expected:.0} (unshared ones would allow {:.0})",
        served as u32 + refused,
        f64::from(n) * expected
    );
    assert!(refused > 0);
}
