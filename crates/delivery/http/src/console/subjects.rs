//! The DPO's search of a subject's requests (`auditor` scope): the CPF is typed in a form and
//! posted (never in a URL, so never in an access line, a proxy's log or the browser's history).
//! The answer ties the CPF to the company's requests, so it is recorded in the access log before
//! it is sent, as the API's subject export is.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use application::SubjectExportQuery;
use domain::Scope;
use serde::Deserialize;

use super::html::{self, esc};
use super::human::{status_badge, when};
use super::{nav, signed_in, SignedIn};
use crate::access_log::record_read;
use crate::dto::consent_read::Solicitacao;
use crate::error::ApiError;
use crate::state::ApiState;

/// How many of the subject's requests the page lists (oldest first).
const PAGE_SIZE: u32 = 100;

/// The search form (`error`: shown above it).
fn form(signed: &SignedIn, error: Option<&str>) -> String {
    let error = error
        .map(|e| format!("<p class=\"erro\" role=\"alert\">{}</p>", esc(e)))
        .unwrap_or_default();
    format!(
        "{error}{}",
        html::post_form(
            "/console/titulares",
            &signed.csrf,
            "<label for=\"cpf\">CPF do titular</label>\
             <input id=\"cpf\" name=\"cpf\" inputmode=\"numeric\" autocomplete=\"off\" required>",
            "Buscar",
        )
    )
}

/// `GET /console/titulares`: the form.
pub async fn search_form(state: web::Data<ApiState>, req: HttpRequest) -> HttpResponse {
    match signed_in(
        &state,
        &req,
        "/console/titulares",
        &[Scope::Auditor],
        None,
        |_, _| Ok(()),
    )
    .await
    {
        Ok((signed, ())) => html::page(
            StatusCode::OK,
            "Solicitações de um titular",
            &nav(&signed),
            &form(&signed, None),
        ),
        Err(refusal) => refusal.page(false),
    }
}

#[derive(Deserialize, Default)]
struct SearchForm {
    #[serde(default)]
    cpf: String,
    #[serde(default)]
    csrf: String,
    /// The page after this one's last request (the "next" form's hidden field); empty: the first.
    #[serde(default)]
    cursor: String,
}

/// `POST /console/titulares` (CSRF): the subject's requests of the company, 100 a page, each
/// linked to its page, with a form for the next page; an invalid CPF (or cursor) gets the form
/// again (422), nothing recorded.
pub async fn search(
    state: web::Data<ApiState>,
    req: HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    let form_data = serde_urlencoded::from_bytes::<SearchForm>(&body).unwrap_or_default();
    let cpf = form_data.cpf.trim().to_owned();
    let query = SubjectExportQuery {
        subject_cpf: Some(cpf.clone()),
        cursor: Some(form_data.cursor.trim().to_owned()).filter(|c| !c.is_empty()),
        limit: Some(PAGE_SIZE),
    };
    let outcome = signed_in(
        &state,
        &req,
        "/console/titulares",
        &[Scope::Auditor],
        Some(&form_data.csrf),
        move |s, call| {
            let page = match s.export_subject.execute(call.company(), query) {
                Ok(page) => page,
                Err(e) => {
                    return match ApiError::from(e) {
                        ApiError::Validation(_) => Ok(None),
                        e => Err(e),
                    }
                }
            };
            let items: Vec<Solicitacao> = page
                .items
                .into_iter()
                .map(|r| Solicitacao::from_domain(r.request, false, None))
                .collect();
            record_read(s, call, items.iter().map(|i| (i.id, i.hash.as_str())))?;
            // each use case's title: one row per distinct template of this page (at most a
            // page's worth of reads, whatever the subject's history)
            let mut titles = std::collections::BTreeMap::new();
            for item in &items {
                if !titles.contains_key(&item.template_id) {
                    let title = s
                        .list_use_cases
                        .title_of(call.company(), &item.template_id)?;
                    titles.insert(item.template_id.clone(), title);
                }
            }
            Ok(Some((items, titles, page.next_cursor)))
        },
    )
    .await;
    let (signed, found) = match outcome {
        Ok(done) => done,
        Err(refusal) => return refusal.page(true),
    };
    let title = "Solicitações de um titular";
    let Some((items, titles, more)) = found else {
        return html::page(
            StatusCode::UNPROCESSABLE_ENTITY,
            title,
            &nav(&signed),
            &form(&signed, Some("CPF inválido: confira os dígitos.")),
        );
    };
    let rows: String = items
        .iter()
        .map(|i| {
            format!(
                "<tr><td><a href=\"/console/solicitacoes/{id}\">{id}</a></td><td>{}</td>\
                 <td>{}</td><td>{}</td></tr>",
                status_badge(&i.status),
                esc(titles
                    .get(&i.template_id)
                    .and_then(Option::as_deref)
                    .unwrap_or(&i.template_id)),
                when(i.created_at),
                id = esc(&i.id.to_string()),
            )
        })
        .collect();
    let results = if items.is_empty() {
        "<p role=\"status\">Nenhuma solicitação deste titular na sua empresa.</p>".to_owned()
    } else {
        // the next page is another POST: the CPF travels in the page's form, never in a URL
        let more = match more {
            Some(cursor) => format!(
                "<p>Há mais solicitações deste titular.</p>{}",
                html::post_form(
                    "/console/titulares",
                    &signed.csrf,
                    &format!(
                        "<input type=\"hidden\" name=\"cpf\" value=\"{}\">\
                         <input type=\"hidden\" name=\"cursor\" value=\"{}\">",
                        esc(&cpf),
                        esc(&cursor)
                    ),
                    &format!("Próximas {PAGE_SIZE}"),
                )
            ),
            None => String::new(),
        };
        let count = match items.len() {
            1 => "1 solicitação".to_owned(),
            n => format!("{n} solicitações"),
        };
        let table = format!(
            "<table><caption>{count}, da mais antiga à mais recente</caption>\
             <thead><tr><th scope=\"col\">Solicitação</th><th scope=\"col\">Status</th>\
             <th scope=\"col\">Caso de uso</th><th scope=\"col\">Criada em</th></tr></thead>\
             <tbody>{rows}</tbody></table>"
        );
        format!(
            "{}{more}",
            html::scroll_box("Solicitações do titular", &table)
        )
    };
    let main = format!("{}<h2>Resultado</h2>{results}", form(&signed, None));
    html::page(StatusCode::OK, title, &nav(&signed), &main)
}
