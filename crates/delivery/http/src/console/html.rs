//! The console's pages: one layout (landmarks, headings, a skip link, Portuguese), and escaping
//! of every value put in them. No inline script or style: the Content-Security-Policy forbids
//! both (the one script, the receipt check, is a file of this server).

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::HttpResponse;

/// Only this server's stylesheet and script files (the receipt check: never inline), reads of
/// this server only, no frame, forms post only here.
pub const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self'; \
                       script-src 'self'; connect-src 'self'; \
                       form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// `text` for HTML text and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A page: `title` (escaped) as its title and first heading, `nav` (HTML, empty when signed
/// out) and `main` (HTML) in their landmarks.
pub fn page(status: StatusCode, title: &str, nav: &str, main: &str) -> HttpResponse {
    let title = esc(title);
    let body = format!(
        "<!DOCTYPE html>\n<html lang=\"pt-BR\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title} · Console de consentimentos</title>\n\
         <link rel=\"stylesheet\" href=\"/console/estilo.css\">\n</head>\n<body>\n\
         <a class=\"pular\" href=\"#conteudo\">Pular para o conteúdo</a>\n\
         <header><p class=\"marca\">Console de consentimentos</p>{nav}</header>\n\
         <main id=\"conteudo\" tabindex=\"-1\">\n<h1>{title}</h1>\n{main}\n</main>\n\
         </body>\n</html>\n"
    );
    let mut res = HttpResponse::build(status).body(body);
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

/// A form that changes something: POST to `action`, carrying the session's CSRF token.
pub fn post_form(action: &str, csrf: &str, fields: &str, button: &str) -> String {
    format!(
        "<form method=\"post\" action=\"{}\">\
         <input type=\"hidden\" name=\"csrf\" value=\"{}\">{fields}\
         <button type=\"submit\">{}</button></form>",
        esc(action),
        esc(csrf),
        esc(button)
    )
}

/// A table in its own scrolling box: at 320 px a wide table scrolls inside itself, never the
/// page (WCAG 2.2 reflow). The box is a named region one can reach with Tab, so a keyboard
/// user can scroll it too.
pub fn scroll_box(label: &str, table: &str) -> String {
    format!(
        "<div class=\"rolagem\" tabindex=\"0\" role=\"region\" aria-label=\"{}\">{table}</div>",
        esc(label)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_values_is_escaped() {
        assert_eq!(
            esc("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }
}
