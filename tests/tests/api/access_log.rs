//! The access log names routes by their template, never by the raw path: a path segment can be
//! personal data (a CPF typed into a URL, an id).

use std::time::Duration;

use testkit::processes::wait_until;

use crate::helpers::*;

#[test]
fn the_access_log_writes_route_templates_and_never_a_raw_path_segment() {
    let app = TestApp::spawn();
    let id = "0d6c9a57-6d0e-4c1a-9a52-3f1b2c7d8e90";
    app.a
        .get_with(
            &format!("/api/solicitacao-consentimento/{id}"),
            &[("X-Request-Id", "log-matched")],
        )
        .expect(404);
    // A CPF where an id belongs, and one in a path no route matches, in both its forms.
    app.a
        .get_with(
            &format!("/api/solicitacao-consentimento/{CPF_DIGITS}"),
            &[("X-Request-Id", "log-matched-cpf")],
        )
        .expect(404);
    app.a
        .get_with(
            &format!("/titulares/{CPF_DIGITS}/consentimentos"),
            &[("X-Request-Id", "log-unmatched")],
        )
        .expect(404);
    app.anonymous
        .get_with(
            &format!("/{CPF}"),
            &[("X-Request-Id", "log-unmatched-masked")],
        )
        .expect(404);

    let mut log = String::new();
    let logged = wait_until(Duration::from_secs(5), || {
        log = std::fs::read_to_string(&app.api.log).unwrap();
        log.contains("log-unmatched-masked")
    });
    assert!(logged, "no access line in {}", app.api.log.display());
    let line = |request_id: &str| {
        log.lines()
            .find(|l| l.contains(&format!("request_id={request_id} ")) && l.contains("status="))
            .unwrap_or_else(|| panic!("no access line of {request_id} in:\n{log}"))
            .to_owned()
    };
    for request_id in ["log-matched", "log-matched-cpf"] {
        let line = line(request_id);
        assert!(
            line.contains("/api/solicitacao-consentimento/{id}"),
            "{line}"
        );
    }
    for request_id in ["log-unmatched", "log-unmatched-masked"] {
        let line = line(request_id);
        assert!(line.contains("<unmatched>"), "{line}");
        assert!(!line.contains("titulares"), "{line}");
    }
    assert!(!log.contains(id), "the raw id is in the log");
    assert_no_canary_cpf("the API's log", &log);
}
