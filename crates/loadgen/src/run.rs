//! The schedule, the connections and the tally.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand::Rng;
use serde_json::{json, Value};
use ureq::Agent;

use crate::pace::Pace;

pub struct Plan {
    pub method: String,
    pub urls: Vec<String>,
    pub headers: Vec<(String, String)>,
    pub bodies: Vec<String>,
    pub keys: Vec<String>,
    pub etags: Vec<String>,
    pub connections: usize,
    pub duration: Duration,
    pub timeout: Duration,
}

#[derive(Default)]
pub struct Report {
    pub elapsed: Duration,
    /// Microseconds from each answered request's due time to its answer.
    pub latencies_us: Vec<u64>,
    pub statuses: BTreeMap<u16, u64>,
    pub errors: BTreeMap<String, u64>,
    /// Requests sent (answered or not).
    pub sent: u64,
    /// When, after the start, the last request was sent.
    pub last_send: Duration,
}

impl Report {
    fn merge(&mut self, other: Report) {
        self.sent += other.sent;
        self.last_send = self.last_send.max(other.last_send);
        self.latencies_us.extend(other.latencies_us);
        for (status, n) in other.statuses {
            *self.statuses.entry(status).or_default() += n;
        }
        for (error, n) in other.errors {
            *self.errors.entry(error).or_default() += n;
        }
    }

    /// How this run kept the schedule of `plan` at `rate`.
    pub fn pace(&self, rate: f64, plan: &Plan) -> Pace {
        Pace {
            target: rate,
            sent: self.sent,
            duration: plan.duration,
            last_send: self.last_send,
        }
    }

    /// The JSON report; `latencyPercentiles` is null for a generator-bound run (its latencies
    /// include the generator's own queue).
    pub fn to_json(&self, pace: &Pace) -> Value {
        let mut sorted = self.latencies_us.clone();
        sorted.sort_unstable();
        let at = |p: f64| percentile(&sorted, p) as f64 / 1e6;
        let latency = if pace.generator_bound() {
            Value::Null
        } else {
            json!({"p50": at(50.0), "p90": at(90.0), "p99": at(99.0), "p999": at(99.9)})
        };
        json!({
            "tool": "loadgen",
            "summary": {"total": self.elapsed.as_secs_f64()},
            "statusCodeDistribution": self.statuses.iter().map(|(s, n)| (s.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
            "errorDistribution": self.errors,
            "latencyPercentiles": latency,
            "rate": pace_json(pace),
        })
    }
}

/// The rate asked for, the rate achieved and the verdict, as the JSON report gives them.
pub fn pace_json(pace: &Pace) -> Value {
    json!({
        "target": pace.target,
        "achieved": pace.achieved(),
        "generatorBound": pace.generator_bound(),
    })
}

/// The `p`th percentile (nearest rank) of sorted values; 0 when there are none.
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// When request `i` is due, after the start.
pub fn due(i: u64, rate: f64) -> Duration {
    Duration::from_secs_f64(i as f64 / rate)
}

/// One attempt: the schedule of `plan` at `rate` requests/s.
pub fn run(plan: &Plan, rate: f64) -> Report {
    let next = AtomicU64::new(0);
    let start = Instant::now();
    let mut report = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..plan.connections)
            .map(|_| scope.spawn(|| connection(plan, rate, &next, start)))
            .collect();
        let mut all = Report::default();
        for worker in workers {
            all.merge(worker.join().expect("a connection thread panicked"));
        }
        all
    });
    report.elapsed = start
        .elapsed()
        .min(plan.duration.max(Duration::from_millis(1)));
    report
}

/// One connection: takes due requests until the schedule ends.
fn connection(plan: &Plan, rate: f64, next: &AtomicU64, start: Instant) -> Report {
    let agent: Agent = Agent::config_builder()
        .timeout_global(Some(plan.timeout))
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(None)
        .max_idle_connections(1)
        .max_idle_connections_per_host(1)
        .build()
        .into();
    let mut rng = rand::thread_rng();
    let mut report = Report::default();
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let due_at = due(i, rate);
        if due_at >= plan.duration {
            return report;
        }
        let now = start.elapsed();
        if due_at > now {
            std::thread::sleep(due_at - now);
        }
        let pick = |lines: &Vec<String>, n: usize| lines.get(n).cloned();
        let key_index = (!plan.keys.is_empty()).then(|| rng.gen_range(0..plan.keys.len()));
        // as many URLs as keys: URL i goes with key i (a read names its company's request)
        let url = match key_index {
            Some(k) if plan.urls.len() == plan.keys.len() => &plan.urls[k],
            _ => &plan.urls[rng.gen_range(0..plan.urls.len())],
        };
        // as many bodies as keys: body i goes with key i (a creation names its company's template)
        let body_index = match key_index {
            Some(k) if plan.bodies.len() == plan.keys.len() => Some(k),
            _ => (!plan.bodies.is_empty()).then(|| rng.gen_range(0..plan.bodies.len())),
        };
        let body = body_index.map(|b| plan.bodies[b].clone());
        let mut request = ureq::http::Request::builder()
            .method(plan.method.as_str())
            .uri(url.as_str());
        for (name, value) in &plan.headers {
            request = request.header(name.as_str(), value.as_str());
        }
        if let Some(k) = key_index {
            request = request.header("Api-Key", plan.keys[k].as_str());
            if let Some(etag) = pick(&plan.etags, k) {
                request = request.header("If-None-Match", etag);
            }
        }
        report.sent += 1;
        report.last_send = start.elapsed();
        let result = match body {
            Some(body) => agent.run(
                request
                    .header("Content-Type", "application/json")
                    .body(body)
                    .expect("a valid request"),
            ),
            None => agent.run(request.body(()).expect("a valid request")),
        };
        match result {
            Ok(mut response) => {
                // drained, so the connection can carry the next request
                let _ = response.body_mut().read_to_vec();
                let latency = start.elapsed().saturating_sub(due_at);
                report.latencies_us.push(latency.as_micros() as u64);
                *report
                    .statuses
                    .entry(response.status().as_u16())
                    .or_default() += 1;
            }
            Err(e) => {
                *report.errors.entry(e.to_string()).or_default() += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let values: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&values, 50.0), 50);
        assert_eq!(percentile(&values, 99.0), 99);
        assert_eq!(percentile(&values, 100.0), 100);
        assert_eq!(percentile(&[7], 99.9), 7);
        assert_eq!(percentile(&[], 50.0), 0);
    }

    #[test]
    fn requests_are_due_on_a_fixed_schedule() {
        assert_eq!(due(0, 1000.0), Duration::ZERO);
        assert_eq!(due(500, 1000.0), Duration::from_millis(500));
        assert_eq!(due(3, 2.0), Duration::from_millis(1500));
    }

    #[test]
    fn a_stalled_server_delays_every_request_due_meanwhile() {
        // one connection, 100 requests/s, a server answering in 300 ms: each request is due
        // 10 ms after the previous one but sent when the connection is free, so latencies from
        // the due time grow (the corrected figure), as a real client's would
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let mut stream = stream.unwrap();
                std::thread::spawn(move || {
                    use std::io::{Read, Write};
                    let mut buf = [0u8; 1024];
                    while matches!(stream.read(&mut buf), Ok(n) if n > 0) {
                        std::thread::sleep(Duration::from_millis(300));
                        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
                    }
                });
            }
        });
        let plan = Plan {
            method: "GET".into(),
            urls: vec![url],
            headers: vec![],
            bodies: vec![],
            keys: vec![],
            etags: vec![],
            connections: 1,
            duration: Duration::from_millis(50),
            timeout: Duration::from_secs(5),
        };

        let report = run(&plan, 100.0);

        assert_eq!(
            report.statuses.get(&200),
            Some(&5),
            "5 requests due in 50 ms"
        );
        let mut sorted = report.latencies_us.clone();
        sorted.sort_unstable();
        // the last one was due at 40 ms and answered after 5 x 300 ms
        assert!(percentile(&sorted, 100.0) > 1_400_000, "{sorted:?}");
        assert!(percentile(&sorted, 0.0) >= 300_000, "{sorted:?}");
        // 5 requests due in 50 ms took 1.2 s to send: generator-bound, no latency reported
        let pace = report.pace(100.0, &plan);
        assert_eq!(pace.sent, 5);
        assert!(pace.last_send >= Duration::from_millis(1200), "{pace:?}");
        assert!(pace.generator_bound());
        assert!(report.to_json(&pace)["latencyPercentiles"].is_null());
    }

    #[test]
    fn a_server_that_keeps_up_is_measured() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let mut stream = stream.unwrap();
                std::thread::spawn(move || {
                    use std::io::{Read, Write};
                    let mut buf = [0u8; 1024];
                    while matches!(stream.read(&mut buf), Ok(n) if n > 0) {
                        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
                    }
                });
            }
        });
        let plan = Plan {
            method: "GET".into(),
            urls: vec![url],
            headers: vec![],
            bodies: vec![],
            keys: vec![],
            etags: vec![],
            connections: 2,
            duration: Duration::from_millis(500),
            timeout: Duration::from_secs(5),
        };

        let report = run(&plan, 40.0);

        let pace = report.pace(40.0, &plan);
        assert_eq!(pace.sent, 20, "20 requests due in 500 ms");
        assert!(!pace.generator_bound(), "{pace:?}");
        let json = report.to_json(&pace);
        assert!(json["latencyPercentiles"]["p50"].as_f64().unwrap() < 0.5);
        assert_eq!(json["rate"]["generatorBound"], false);
    }
}
