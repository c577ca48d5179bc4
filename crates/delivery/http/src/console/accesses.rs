//! The access log page (`auditor` scope): who read personal data, filterable by key and period.
//! A GET form (nothing in it is personal data: a key's id and dates); viewing it is itself
//! recorded, as `GET /api/auditoria/acessos` is.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use application::AccessListQuery;
use chrono::{DateTime, Days, NaiveDate, Utc};
use domain::Scope;
use serde::Deserialize;

use super::html::{self, esc};
use super::human::{route_label, when};
use super::{nav, signed_in};
use crate::access_log::record_read;
use crate::dto::access_log::Acesso;
use crate::error::ApiError;
use crate::state::ApiState;

/// Rows per page.
const PAGE_SIZE: u32 = 100;

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

pub(super) fn day(raw: &str, next: bool) -> Result<Option<DateTime<Utc>>, ()> {
    if raw.trim().is_empty() {
        return Ok(None);
    }
    let date = NaiveDate::parse_from_str(raw.trim(), "%Y-%m-%d").map_err(|_| ())?;
    let date = if next {
        date.checked_add_days(Days::new(1)).ok_or(())?
    } else {
        date
    };
    Ok(Some(date.and_hms_opt(0, 0, 0).ok_or(())?.and_utc()))
}

fn form(f: &Filter, error: Option<&str>) -> String {
    let error = error
        .map(|e| format!("<p class=\"erro\" role=\"alert\">{}</p>", esc(e)))
        .unwrap_or_default();
    format!(
        "{error}<form method=\"get\" action=\"/console/acessos\">\
         <label for=\"apiKeyId\">Id da chave (opcional)</label>\
         <input id=\"apiKeyId\" name=\"apiKeyId\" value=\"{}\" autocomplete=\"off\">\
         <label for=\"de\">De (dia, UTC)</label>\
         <input id=\"de\" name=\"de\" type=\"date\" value=\"{}\">\
         <label for=\"ate\">Até (dia, incluído)</label>\
         <input id=\"ate\" name=\"ate\" type=\"date\" value=\"{}\">\
         <button type=\"submit\">Filtrar</button></form>",
        esc(&f.api_key_id),
        esc(&f.de),
        esc(&f.ate)
    )
}

/// `GET /console/acessos`: the company's record of reads, oldest first within the filter.
pub async fn list(
    state: web::Data<ApiState>,
    req: HttpRequest,
    query: web::Query<Filter>,
) -> HttpResponse {
    let filter = query.into_inner();
    let period = day(&filter.de, false).and_then(|from| Ok((from, day(&filter.ate, true)?)));
    let list_query = period.map(|(from, until)| AccessListQuery {
        api_key_id: Some(filter.api_key_id.trim().to_owned()).filter(|k| !k.is_empty()),
        from,
        until,
        cursor: Some(filter.cursor.clone()).filter(|c| !c.is_empty()),
        limit: Some(PAGE_SIZE),
    });
    let outcome = signed_in(
        &state,
        &req,
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
    let (signed, page) = match outcome {
        Ok(done) => done,
        Err(refusal) => return refusal.page(false),
    };
    let title = "Registro de acessos";
    let Some(page) = page else {
        return html::page(
            StatusCode::UNPROCESSABLE_ENTITY,
            title,
            &nav(&signed),
            &form(
                &filter,
                Some("Filtro inválido: confira o id da chave (um UUID) e as datas."),
            ),
        );
    };
    let rows: String = page
        .items
        .into_iter()
        .map(Acesso::from)
        .map(|a| {
            let requests: String = a
                .request_ids
                .iter()
                .map(|id| format!("<a href=\"/console/solicitacoes/{id}\">{id}</a> "))
                .collect();
            format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{requests}</td></tr>",
                when(a.at),
                esc(&a.api_key_id.to_string()),
                route_label(&a.route)
            )
        })
        .collect();
    let table = if rows.is_empty() {
        "<p role=\"status\">Nenhum acesso no filtro.</p>".to_owned()
    } else {
        html::scroll_box(
            "Leituras de dados pessoais",
            &format!(
                "<table><caption>Leituras de dados pessoais, da mais antiga à mais recente\
                 </caption><thead><tr><th scope=\"col\">Quando</th>\
                 <th scope=\"col\">Chave</th><th scope=\"col\">O que foi lido</th>\
                 <th scope=\"col\">Solicitações</th></tr></thead><tbody>{rows}</tbody></table>"
            ),
        )
    };
    let next = page.next_cursor.map_or(String::new(), |cursor| {
        let query = serde_urlencoded::to_string([
            ("apiKeyId", filter.api_key_id.as_str()),
            ("de", filter.de.as_str()),
            ("ate", filter.ate.as_str()),
            ("cursor", cursor.as_str()),
        ])
        .unwrap_or_default();
        format!(
            "<p><a href=\"/console/acessos?{}\">Próxima página</a></p>",
            esc(&query)
        )
    });
    let main = format!("{}<h2>Acessos</h2>{table}{next}", form(&filter, None));
    html::page(StatusCode::OK, title, &nav(&signed), &main)
}
