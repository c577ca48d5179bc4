use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::helpers::CNPJ;

#[test]
fn the_binary_prints_its_address_serves_the_seed_and_exits_when_stdin_closes() {
    let seed = concat!(env!("CARGO_MANIFEST_DIR"), "/seeds/demo.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_pgcc-sim"))
        .args([
            "--port",
            "0",
            "--seed",
            seed,
            "--token",
            "t0k",
            "--exit-on-stdin-close",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("starting pgcc-sim");

    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim_end()
        .strip_prefix("pgcc-sim listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
        .to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");

    let agent: ureq::Agent = ureq::Agent::config_builder().proxy(None).build().into();
    let mut response = agent
        .get(format!("{base}/pgcc/v1/empresas/{CNPJ}/casos-de-uso"))
        .header("Authorization", "Bearer t0k")
        .call()
        .unwrap();
    let body: serde_json::Value = response.body_mut().read_json().unwrap();
    assert_eq!(body["vinculos"].as_array().unwrap().len(), 2);

    drop(child.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success());
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("pgcc-sim did not exit after stdin closed");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
