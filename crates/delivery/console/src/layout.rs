//! The console's pages: one layout (landmarks, headings, a skip link, Portuguese), the
//! navigation, and the pieces every page uses. No inline script or style: the
//! Content-Security-Policy forbids both (the one script, the receipt check, is a file of this
//! server). Every value is put in by maud, which escapes it.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use domain::Scope;
use maud::{html, Markup, DOCTYPE};

use crate::visit::SignedIn;

/// Only this server's stylesheet and script files (the receipt check: never inline), reads of
/// this server only, no frame, forms post only here.
pub const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self'; \
                       script-src 'self'; connect-src 'self'; \
                       form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// A page: `title` as its title and first heading, the navigation of `signed` (none when
/// signed out) and `main` in their landmarks.
pub fn page(
    status: StatusCode,
    title: &str,
    signed: Option<&SignedIn>,
    main: Markup,
) -> HttpResponse {
    let body = html! {
        (DOCTYPE)
        html lang="pt-BR" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · Console de consentimentos" }
                link rel="stylesheet" href="/console/estilo.css";
            }
            body {
                a.pular href="#conteudo" { "Pular para o conteúdo" }
                header {
                    p.marca { "Console de consentimentos" }
                    @if let Some(signed) = signed { (nav(signed)) }
                }
                main id="conteudo" tabindex="-1" {
                    h1 { (title) }
                    (main)
                }
            }
        }
    };
    let mut res = HttpResponse::build(status).body(body.into_string());
    secure_headers(&mut res, "text/html; charset=utf-8");
    res
}

/// The headers of every console answer: its type, the CSP, and nothing cached (a page may
/// carry a CPF or a proof).
pub fn secure_headers(res: &mut HttpResponse, content_type: &'static str) {
    let headers = res.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}

/// The navigation of a signed-in page: the pages the key's scopes allow, and sign-out. The
/// link of the page shown is marked `aria-current="page"`; the section a deeper page belongs
/// to (a request under Titulares, a URL's deliveries under Webhooks) `aria-current="true"`.
fn nav(signed: &SignedIn) -> Markup {
    let scopes = signed.scopes();
    let route = signed.call.route;
    let mut pages: Vec<(&str, &str, &[&str])> = vec![("/console", "Início", &[])];
    if scopes.contains(Scope::Auditor) {
        pages.push((
            "/console/titulares",
            "Titulares",
            &["/console/solicitacoes/", "/console/titulares/"],
        ));
        pages.push(("/console/acessos", "Acessos", &[]));
        pages.push(("/console/exportar", "Exportar", &[]));
        pages.push(("/console/painel", "Painel", &[]));
    }
    if scopes.contains(Scope::Webhooks) || scopes.contains(Scope::Auditor) {
        pages.push(("/console/webhooks", "Webhooks", &["/console/webhooks/"]));
    }
    if scopes.contains(Scope::Integration) || scopes.contains(Scope::Auditor) {
        pages.push((
            "/console/importacoes",
            "Importações",
            &["/console/importacoes/"],
        ));
    }
    pages.push(("/console/pgcc", "PGCC", &[]));
    let current = |href: &str, under: &[&str]| {
        if route == href {
            Some("page")
        } else if under.iter().any(|prefix| route.starts_with(prefix)) {
            Some("true")
        } else {
            None
        }
    };
    html! {
        nav aria-label="Principal" {
            ul {
                @for (href, label, under) in pages {
                    li { a href=(href) aria-current=[current(href, under)] { (label) } }
                }
                li { (post_form("/console/sair", &signed.csrf, html! {}, "Sair")) }
            }
        }
    }
}

/// A form that changes something: POST to `action`, carrying the session's CSRF token.
pub fn post_form(action: &str, csrf: &str, fields: Markup, button: &str) -> Markup {
    html! {
        form method="post" action=(action) {
            input type="hidden" name="csrf" value=(csrf);
            (fields)
            button type="submit" { (button) }
        }
    }
}

/// A table in its own scrolling box: at 320 px a wide table scrolls inside itself, never the
/// page (WCAG 2.2 reflow). The box is a named region one can reach with Tab, so a keyboard
/// user can scroll it too.
pub fn scroll_box(label: &str, table: Markup) -> Markup {
    html! {
        div.rolagem tabindex="0" role="region" aria-label=(label) { (table) }
    }
}

/// What was wrong with a form, above it (nothing when `error` is `None`).
pub fn alert(error: Option<&str>) -> Markup {
    html! {
        @if let Some(error) = error { p.erro role="alert" { (error) } }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_values_is_escaped() {
        let form = post_form("/x?a=1&b=\"2\"", "<csrf>", html! {}, "<b>Ir</b>").into_string();
        assert_eq!(
            form,
            "<form method=\"post\" action=\"/x?a=1&amp;b=&quot;2&quot;\">\
             <input type=\"hidden\" name=\"csrf\" value=\"&lt;csrf&gt;\">\
             <button type=\"submit\">&lt;b&gt;Ir&lt;/b&gt;</button></form>"
        );
        assert_eq!(
            alert(Some("<script>alert(1)</script>")).into_string(),
            "<p class=\"erro\" role=\"alert\">&lt;script&gt;alert(1)&lt;/script&gt;</p>"
        );
    }
}
