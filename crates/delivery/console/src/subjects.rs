//! The DPO's search of a subject's requests (`auditor` scope): the CPF is typed in a form and
//! posted (never in a URL, so never in an access line, a proxy's log or the browser's history).
//! The answer ties the CPF to the company's requests, so it is recorded in the access log before
//! it is sent, as the API's subject export is.

use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use application::SubjectExportQuery;
use delivery_http::access_log::record_read;
use delivery_http::dto::consent_read::Solicitacao;
use delivery_http::ApiError;
use domain::Scope;
use maud::{html, Markup};
use serde::Deserialize;

use crate::human::{status_badge, when};
use crate::layout::{self, alert, post_form, scroll_box};
use crate::visit::{SignedIn, Visit};

/// How many of the subject's requests the page lists (oldest first).
const PAGE_SIZE: u32 = 100;
const TITLE: &str = "Solicitações de um titular";

/// The search form (`error`: shown above it).
fn form(signed: &SignedIn, error: Option<&str>) -> Markup {
    html! {
        (alert(error))
        (post_form("/console/titulares", &signed.csrf, html! {
            label for="cpf" { "CPF do titular" }
            input id="cpf" name="cpf" inputmode="numeric" autocomplete="off" required;
        }, "Buscar"))
    }
}

/// `GET /console/titulares`: the form.
pub async fn search_form(visit: Visit) -> HttpResponse {
    match visit
        .signed_in("/console/titulares", &[Scope::Auditor], None, |_, _| Ok(()))
        .await
    {
        Ok((signed, ())) => layout::page(StatusCode::OK, TITLE, Some(&signed), form(&signed, None)),
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

/// A page of the subject's requests, each with its use case's title (when it has one).
struct Found {
    items: Vec<Solicitacao>,
    titles: BTreeMap<String, Option<String>>,
    next_cursor: Option<String>,
}

/// `POST /console/titulares` (CSRF): the subject's requests of the company, 100 a page, each
/// linked to its page, with a form for the next page; an invalid CPF (or cursor) gets the form
/// again (422), nothing recorded.
pub async fn search(visit: Visit, body: web::Bytes) -> HttpResponse {
    let form_data = serde_urlencoded::from_bytes::<SearchForm>(&body).unwrap_or_default();
    let cpf = form_data.cpf.trim().to_owned();
    let query = SubjectExportQuery {
        subject_cpf: Some(cpf.clone()),
        cursor: Some(form_data.cursor.trim().to_owned()).filter(|c| !c.is_empty()),
        limit: Some(PAGE_SIZE),
    };
    let outcome = visit
        .signed_in(
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
                let mut titles = BTreeMap::new();
                for item in &items {
                    if !titles.contains_key(&item.template_id) {
                        let title = s
                            .list_use_cases
                            .title_of(call.company(), &item.template_id)?;
                        titles.insert(item.template_id.clone(), title);
                    }
                }
                Ok(Some(Found {
                    items,
                    titles,
                    next_cursor: page.next_cursor,
                }))
            },
        )
        .await;
    match outcome {
        Ok((signed, Some(found))) => layout::page(
            StatusCode::OK,
            TITLE,
            Some(&signed),
            html! {
                (form(&signed, None))
                h2 { "Resultado" }
                (results(&signed, &cpf, &found))
            },
        ),
        Ok((signed, None)) => layout::page(
            StatusCode::UNPROCESSABLE_ENTITY,
            TITLE,
            Some(&signed),
            form(&signed, Some("CPF inválido: confira os dígitos.")),
        ),
        Err(refusal) => refusal.page(true),
    }
}

/// The subject's requests, and the form of the next page: another POST, the CPF travelling in
/// the page's form, never in a URL.
fn results(signed: &SignedIn, cpf: &str, found: &Found) -> Markup {
    if found.items.is_empty() {
        return html! {
            p role="status" { "Nenhuma solicitação deste titular na sua empresa." }
        };
    }
    let count = match found.items.len() {
        1 => "1 solicitação".to_owned(),
        n => format!("{n} solicitações"),
    };
    let title_of = |i: &Solicitacao| -> String {
        found
            .titles
            .get(&i.template_id)
            .and_then(Option::as_deref)
            .unwrap_or(&i.template_id)
            .to_owned()
    };
    html! {
        (scroll_box("Solicitações do titular", html! {
            table {
                caption { (count) ", da mais antiga à mais recente" }
                thead {
                    tr {
                        th scope="col" { "Solicitação" }
                        th scope="col" { "Status" }
                        th scope="col" { "Caso de uso" }
                        th scope="col" { "Criada em" }
                    }
                }
                tbody {
                    @for i in &found.items {
                        tr {
                            td { a href={ "/console/solicitacoes/" (i.id) } { (i.id) } }
                            td { (status_badge(&i.status)) }
                            td { (title_of(i)) }
                            td { (when(i.created_at)) }
                        }
                    }
                }
            }
        }))
        @if let Some(cursor) = &found.next_cursor {
            p { "Há mais solicitações deste titular." }
            (post_form("/console/titulares", &signed.csrf, html! {
                input type="hidden" name="cpf" value=(cpf);
                input type="hidden" name="cursor" value=(cursor);
            }, &format!("Próximas {PAGE_SIZE}")))
        }
    }
}
