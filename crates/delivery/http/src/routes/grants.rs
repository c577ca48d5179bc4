//! Which scopes grant each `/api` route (issue 24, part 6; docs/security.md, "Scopes"): every
//! registered route is in [`GRANTS`], exactly once, by its method and its template as registered
//! in `routes/mod.rs`. A key may use a route when it holds ANY scope the route lists. A route
//! missing from the table is refused to every key (403): a forgotten line fails closed, and the
//! tests below fail first.
//!
//! Marking a new route is one line here. The grant is found per request by the matched route's
//! template (`HttpRequest::match_pattern`), by the `Api-Key` extractor, so no handler changes.

use actix_web::HttpRequest;
use domain::Scope::{Auditor, Check, Integration, Webhooks};
use domain::Scopes;

/// The scopes that grant one route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    /// Upper case, as HTTP writes it.
    pub method: &'static str,
    /// The template as registered (`/api/solicitacao-consentimento/{id}`): also what the
    /// record of reads of personal data names, never the concrete path.
    pub path: &'static str,
    pub scopes: Scopes,
}

const fn grant(method: &'static str, path: &'static str, scopes: &[domain::Scope]) -> Grant {
    Grant {
        method,
        path,
        scopes: Scopes::of(scopes),
    }
}

/// Every `/api` route and the scopes that grant it. Default keys (`integracao,consulta,webhooks`)
/// can use every route they could before scopes existed; `auditor` reads everything of the
/// company and writes nothing.
pub const GRANTS: &[Grant] = &[
    // Use cases: an integration needs the list to create; syncing is the integration's setup.
    grant("GET", "/api/casos-de-uso", &[Integration, Auditor]),
    grant("POST", "/api/casos-de-uso/sincronizar", &[Integration]),
    grant(
        "GET",
        "/api/casos-de-uso/{id}/versoes",
        &[Integration, Auditor],
    ),
    // the PGCC's health: any key (issue 25)
    grant(
        "GET",
        "/api/status",
        &[Integration, Check, Auditor, Webhooks],
    ),
    // Consent requests.
    grant(
        "POST",
        "/api/solicitacao-consentimento/criar/ativo",
        &[Integration],
    ),
    grant(
        "POST",
        "/api/solicitacao-consentimento/criar/pendente",
        &[Integration],
    ),
    grant(
        "GET",
        "/api/solicitacao-consentimento",
        &[Integration, Auditor],
    ),
    grant(
        "GET",
        "/api/solicitacao-consentimento/{id}",
        &[Integration, Auditor],
    ),
    grant(
        "POST",
        "/api/solicitacao-consentimento/{id}/revogar",
        &[Integration],
    ),
    // Evidence files (issue 37, part 5): uploaded by the integration, listed by both, the bytes
    // downloaded by the auditor only (recorded in the access log).
    grant(
        "PUT",
        "/api/solicitacao-consentimento/{id}/arquivos",
        &[Integration],
    ),
    grant(
        "GET",
        "/api/solicitacao-consentimento/{id}/arquivos",
        &[Integration, Auditor],
    ),
    grant(
        "PUT",
        "/api/solicitacao-consentimento/{id}/arquivos/{sha256}",
        &[Integration],
    ),
    grant(
        "GET",
        "/api/solicitacao-consentimento/{id}/arquivos/{sha256}",
        &[Auditor],
    ),
    grant("PUT", "/api/arquivos/{sha256}", &[Integration]),
    // Bulk imports (issue 37, parts 1-2): the integration's, like a creation; read back by
    // the integration and the auditor.
    grant("POST", "/api/importacoes", &[Integration]),
    grant("GET", "/api/importacoes/{id}", &[Integration, Auditor]),
    grant(
        "GET",
        "/api/importacoes/{id}/erros",
        &[Integration, Auditor],
    ),
    grant("POST", "/api/importacoes/{id}/cancelar", &[Integration]),
    // HashConsulta: what a `consulta` key is for. Reading a consent by its hash is a read of the
    // company's data too.
    grant("POST", "/api/hash-consulta", &[Check]),
    grant("POST", "/api/hash-consulta/lote", &[Check]),
    grant(
        "GET",
        "/api/hash-consulta/{hash}",
        &[Check, Integration, Auditor],
    ),
    // A subject's export (a read, with the full CPF and proofs) and the events feed.
    grant(
        "POST",
        "/api/titulares/consentimentos",
        &[Integration, Auditor],
    ),
    grant("GET", "/api/eventos", &[Integration, Auditor]),
    // Webhook URLs: managed by `webhooks`; their list and delivery log read by `auditor`.
    grant("GET", "/api/webhook-urls", &[Webhooks, Auditor]),
    grant("POST", "/api/webhook-urls", &[Webhooks]),
    grant("DELETE", "/api/webhook-urls/{webhookUrlId}", &[Webhooks]),
    grant("PATCH", "/api/webhook-urls/{webhookUrlId}", &[Webhooks]),
    grant(
        "POST",
        "/api/webhook-urls/{webhookUrlId}/testar",
        &[Webhooks],
    ),
    grant(
        "POST",
        "/api/webhook-urls/{webhookUrlId}/rotacionar-segredo",
        &[Webhooks],
    ),
    grant(
        "POST",
        "/api/webhook-urls/{webhookUrlId}/reativar",
        &[Webhooks],
    ),
    grant(
        "GET",
        "/api/webhook-urls/{webhookUrlId}/entregas",
        &[Webhooks, Auditor],
    ),
    grant(
        "POST",
        "/api/webhook-urls/{webhookUrlId}/entregas/{entregaId}/reenviar",
        &[Webhooks],
    ),
    // Audit routes.
    grant("GET", "/api/auditoria/acessos", &[Auditor]),
    // the company's verifiable log (issue 24): the log as a whole for auditors; a request's
    // proofs and receipt for the integration that made it too
    grant("GET", "/api/auditoria/checkpoint", &[Auditor]),
    grant("GET", "/api/auditoria/consistencia", &[Auditor]),
    grant(
        "GET",
        "/api/solicitacao-consentimento/{id}/provas",
        &[Integration, Auditor],
    ),
    grant(
        "GET",
        "/api/solicitacao-consentimento/{id}/recibo",
        &[Integration, Auditor],
    ),
    // records in the ISO/IEC TS 27560 form (issue 37, part 6): the company's integration
    // annotates its use cases; the record is read like the receipt
    grant("PUT", "/api/casos-de-uso/{id}/anotacoes", &[Integration]),
    grant(
        "GET",
        "/api/casos-de-uso/{id}/anotacoes",
        &[Integration, Auditor],
    ),
    grant(
        "GET",
        "/api/solicitacao-consentimento/{id}/registro",
        &[Integration, Auditor],
    ),
    // a period's requests or records for scheduled pulls (issue 37, part 6), as the console's
    // export: the auditor's
    grant("GET", "/api/exportacoes", &[Auditor]),
];

/// The grant of `method` on the route template `path`, if the table has one.
pub fn find(method: &str, path: &str) -> Option<&'static Grant> {
    GRANTS
        .iter()
        .find(|g| g.path == path && g.method.eq_ignore_ascii_case(method))
}

/// The grant of the route `req` matched (`None`: no route matched, or the table lacks it).
pub fn of_request(req: &HttpRequest) -> Option<&'static Grant> {
    let pattern = req.match_pattern()?;
    find(req.method().as_str(), &pattern)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// (method, template) of every route `routes/mod.rs` registers, read from its source: each
    /// `web::resource("...")` and the `.route(web::<method>()` calls that follow it.
    /// The routes registered in `mod.rs` and in the modules it hands a `configure` (the audit
    /// routes register themselves together).
    fn registered_routes() -> BTreeSet<(String, String)> {
        let source = [include_str!("mod.rs"), include_str!("audit.rs")].concat();
        let mut routes = BTreeSet::new();
        for chunk in source.split("web::resource(\"").skip(1) {
            let path = &chunk[..chunk.find('"').unwrap()];
            let chunk = chunk.split("web::resource(").next().unwrap();
            for call in chunk.split(".route(web::").skip(1) {
                let method = &call[..call.find('(').unwrap()];
                routes.insert((method.to_uppercase(), path.to_owned()));
            }
        }
        routes
    }

    fn granted() -> BTreeSet<(String, String)> {
        GRANTS
            .iter()
            .map(|g| (g.method.to_owned(), g.path.to_owned()))
            .collect()
    }

    #[test]
    fn every_registered_api_route_has_exactly_one_grant_and_every_grant_a_route() {
        let api: BTreeSet<_> = registered_routes()
            .into_iter()
            .filter(|(_, path)| path.starts_with("/api/"))
            .collect();
        assert!(api.len() >= 20, "the registration was read: {api:?}");
        let granted = granted();
        assert_eq!(granted.len(), GRANTS.len(), "a route listed twice");
        let missing: Vec<_> = api.difference(&granted).collect();
        assert!(missing.is_empty(), "routes without a grant: {missing:?}");
        let stale: Vec<_> = granted.difference(&api).collect();
        assert!(stale.is_empty(), "grants of no registered route: {stale:?}");
    }

    #[test]
    fn every_documented_api_operation_has_a_grant() {
        let doc = crate::routes::openapi::document_json();
        for (path, item) in doc["paths"].as_object().unwrap() {
            if !path.starts_with("/api/") {
                continue;
            }
            for method in item.as_object().unwrap().keys() {
                if ["get", "post", "put", "patch", "delete"].contains(&method.as_str()) {
                    assert!(find(method, path).is_some(), "{method} {path}");
                }
            }
        }
    }

    #[test]
    fn every_grant_names_at_least_one_scope() {
        for g in GRANTS {
            assert!(!g.scopes.is_empty(), "{g:?}");
        }
    }

    fn allowed(scopes: Scopes) -> BTreeSet<(&'static str, &'static str)> {
        GRANTS
            .iter()
            .filter(|g| g.scopes.intersects(scopes))
            .map(|g| (g.method, g.path))
            .collect()
    }

    #[test]
    fn a_default_key_can_use_every_route_but_the_audit_ones_and_the_evidence_download() {
        let denied: Vec<_> = GRANTS
            .iter()
            .filter(|g| !g.scopes.intersects(Scopes::DEFAULT))
            .map(|g| g.path)
            .collect();
        assert_eq!(
            denied,
            [
                // the evidence files' bytes, like the log, are the auditor's to read
                "/api/solicitacao-consentimento/{id}/arquivos/{sha256}",
                "/api/auditoria/acessos",
                "/api/auditoria/checkpoint",
                "/api/auditoria/consistencia",
                "/api/exportacoes"
            ]
        );
    }

    #[test]
    fn an_auditor_key_reads_everything_and_writes_nothing() {
        let auditor = allowed(Scopes::of(&[Auditor]));
        for g in GRANTS {
            let read = g.method == "GET" || g.path == "/api/titulares/consentimentos";
            assert_eq!(
                auditor.contains(&(g.method, g.path)),
                read,
                "{} {}",
                g.method,
                g.path
            );
        }
    }

    #[test]
    fn a_consulta_key_only_checks_consents() {
        let check = allowed(Scopes::of(&[Check]));
        // and the PGCC's health, which any key reads
        assert!(check
            .iter()
            .all(|(_, path)| path.starts_with("/api/hash-consulta") || *path == "/api/status"));
        assert_eq!(check.len(), 4);
    }

    #[test]
    fn a_webhooks_key_only_manages_webhook_urls() {
        let webhooks = allowed(Scopes::of(&[Webhooks]));
        assert!(webhooks
            .iter()
            .all(|(_, path)| path.starts_with("/api/webhook-urls") || *path == "/api/status"));
        let all_webhook_routes = GRANTS
            .iter()
            .filter(|g| g.path.starts_with("/api/webhook-urls"))
            .count();
        assert_eq!(
            webhooks.len(),
            all_webhook_routes + 1,
            "and the PGCC's health"
        );
    }

    #[test]
    fn an_integracao_key_creates_revokes_reads_and_exports_but_manages_no_webhook() {
        let integration = allowed(Scopes::of(&[Integration]));
        for route in [
            ("POST", "/api/solicitacao-consentimento/criar/ativo"),
            ("POST", "/api/solicitacao-consentimento/criar/pendente"),
            ("POST", "/api/solicitacao-consentimento/{id}/revogar"),
            ("GET", "/api/solicitacao-consentimento/{id}"),
            ("GET", "/api/solicitacao-consentimento"),
            ("POST", "/api/titulares/consentimentos"),
            ("GET", "/api/eventos"),
            ("GET", "/api/casos-de-uso"),
        ] {
            assert!(integration.contains(&route), "{route:?}");
        }
        assert!(!integration
            .iter()
            .any(|(_, path)| path.starts_with("/api/webhook-urls")
                || path.starts_with("/api/auditoria")));
    }

    #[test]
    fn a_grant_is_found_by_method_and_template() {
        let g = find("get", "/api/solicitacao-consentimento/{id}").unwrap();
        assert_eq!(g.path, "/api/solicitacao-consentimento/{id}");
        assert!(find("DELETE", "/api/solicitacao-consentimento/{id}").is_none());
        assert!(find("GET", "/api/solicitacao-consentimento/123").is_none());
    }
}
