//! The access log page (`auditor` scope): who read personal data, filterable by key and period.
//! A GET form (nothing in it is personal data: a key's id and dates); viewing it is itself
//! recorded, as `GET /api/auditoria/acessos` is.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use application::{AccessListQuery, AccessPage};
use delivery_http::access_log::record_read;
use delivery_http::dto::access_log::Acesso;
use delivery_http::exports::day;
use delivery_http::ApiError;
use domain::Scope;
use maud::{html, Markup};
use serde::Deserialize;

use crate::human::{route_label, when};
use crate::layout::{self, alert, scroll_box};
use crate::visit::Visit;

/// Rows per page.
const PAGE_SIZE: u32 = 100;
const TITLE: &str = "Registro de acessos";

#[derive(Deserialize, Default)]
pub struct Filter {
    #[serde(default, rename = "apiKeyId")]
    api_key_id: String,
    /// First day, `AAAA-MM-DD` (an HTML date field), from its midnight UTC.
    #[serde(default)]
    de: String,
    /// Last day, included.
    #[serde(default)]
    ate: String,
    #[serde(default)]
    cursor: String,
}

fn form(f: &Filter, error: Option<&str>) -> Markup {
    html! {
        (alert(error))
        form method="get" action="/console/acessos" {
            label for="apiKeyId" { "Id da chave (opcional)" }
            input id="apiKeyId" name="apiKeyId" value=(f.api_key_id) autocomplete="off";
            label for="de" { "De (dia, UTC)" }
            input id="de" name="de" type="date" value=(f.de);
            label for="ate" { "Até (dia, incluído)" }
            input id="ate" name="ate" type="date" value=(f.ate);
            button type="submit" { "Filtrar" }
        }
    }
}

/// `GET /console/acessos`: the company's record of reads, oldest first within the filter.
pub async fn list(visit: Visit, query: web::Query<Filter>) -> HttpResponse {
    let filter = query.into_inner();
    let period = day(&filter.de, false).and_then(|from| Ok((from, day(&filter.ate, true)?)));
    let list_query = period.map(|(from, until)| AccessListQuery {
        api_key_id: Some(filter.api_key_id.trim().to_owned()).filter(|k| !k.is_empty()),
        from,
        until,
        cursor: Some(filter.cursor.clone()).filter(|c| !c.is_empty()),
        limit: Some(PAGE_SIZE),
    });
    let outcome = visit
        .signed_in(
            "/console/acessos",
            &[Scope::Auditor],
            None,
            move |s, call| {
                let Ok(list_query) = list_query else {
                    return Ok(None);
                };
                let page = match s.personal_data_accesses.list(call.company(), list_query) {
                    Ok(page) => page,
                    Err(e) => {
                        return match ApiError::from(e) {
                            ApiError::Validation(_) => Ok(None),
                            e => Err(e),
                        }
                    }
                };
                record_read(s, call, [])?;
                Ok(Some(page))
            },
        )
        .await;
    match outcome {
        Ok((signed, Some(page))) => layout::page(
            StatusCode::OK,
            TITLE,
            Some(&signed),
            html! {
                (form(&filter, None))
                h2 { "Acessos" }
                (view(&filter, page))
            },
        ),
        Ok((signed, None)) => layout::page(
            StatusCode::UNPROCESSABLE_ENTITY,
            TITLE,
            Some(&signed),
            form(
                &filter,
                Some("Filtro inválido: confira o id da chave (um UUID) e as datas."),
            ),
        ),
        Err(refusal) => refusal.page(false),
    }
}

/// The reads of the page, and the link to the next one (the filter and the cursor in its query).
fn view(filter: &Filter, page: AccessPage) -> Markup {
    let next = page.next_cursor.map(|cursor| {
        serde_urlencoded::to_string([
            ("apiKeyId", filter.api_key_id.as_str()),
            ("de", filter.de.as_str()),
            ("ate", filter.ate.as_str()),
            ("cursor", cursor.as_str()),
        ])
        .unwrap_or_default()
    });
    let reads: Vec<Acesso> = page.items.into_iter().map(Acesso::from).collect();
    html! {
        @if reads.is_empty() {
            p role="status" { "Nenhum acesso no filtro." }
        } @else {
            (scroll_box("Leituras de dados pessoais", html! {
                table {
                    caption { "Leituras de dados pessoais, da mais antiga à mais recente" }
                    thead {
                        tr {
                            th scope="col" { "Quando" }
                            th scope="col" { "Chave" }
                            th scope="col" { "O que foi lido" }
                            th scope="col" { "Solicitações" }
                        }
                    }
                    tbody {
                        @for a in &reads {
                            tr {
                                td { (when(a.at)) }
                                td { (a.api_key_id) }
                                td { (route_label(&a.route)) }
                                td {
                                    @for id in &a.request_ids {
                                        a href={ "/console/solicitacoes/" (id) } { (id) } " "
                                    }
                                }
                            }
                        }
                    }
                }
            }))
        }
        @if let Some(query) = next {
            p { a href={ "/console/acessos?" (query) } { "Próxima página" } }
        }
    }
}
