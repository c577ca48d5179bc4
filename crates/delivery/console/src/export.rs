//! `GET /console/exportar` (`auditor` scope): the company's consent requests created in a period
//! of days, as CSV or as JSON Lines, for the DPO to hand on. The items are the consent list's
//! (`GET /api/solicitacao-consentimento`: the CPF masked, the proof included), so the export is
//! recorded in the access log page by page exactly as the list is.
//!
//! Streamed a page (500 requests, cut at `server.page_max_bytes` as the API's lists are) at a
//! time: a year of a large company is millions of rows, and one answer must not hold them. A
//! producer task reads the pages in turn, each in one blocking hop, and hands them to the
//! response through a channel of two pages: a slow download holds at most three pages in memory
//! and one blocking thread at a time, never the whole period. A company has at most
//! [`MAX_EXPORTS_PER_COMPANY`] exports under way per process (issue 39: 500 rows of 63 KB proofs
//! were 32 MB a page, and 60 stalled downloads of one session took the process from 61 MB to
//! 1,072 MB); one more is a 429 page with `Retry-After`, nothing read.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::web::Bytes;
use actix_web::{web, HttpResponse};
use application::{ConsentListQuery, Services};
use chrono::{DateTime, Utc};
use delivery_http::access_log::Answered;
use delivery_http::blocking::{in_blocking_hop, Call};
use delivery_http::dto::consent_read::Solicitacao;
use delivery_http::ApiError;
use domain::{CompanyId, Scope};
use futures_core::Stream;
use maud::{html, Markup};
use serde::Deserialize;
use tokio::sync::mpsc;

use crate::accesses::day;
use crate::layout::{self, alert};
use crate::visit::{SignedIn, Visit};

/// Requests per page read (the list's largest page).
const PAGE_SIZE: u32 = 500;
/// Pages waiting for the client, beyond the one being written.
const PAGES_IN_FLIGHT: usize = 2;
/// Exports a company may have under way at once in one process: with pages of at most
/// `server.page_max_bytes`, a company holds at most this many times three pages of memory and
/// this many blocking hops, however many downloads its keys start or leave stalled.
pub const MAX_EXPORTS_PER_COMPANY: u32 = 2;
const TITLE: &str = "Exportar solicitações";

/// The exports under way, per company, in this process.
#[derive(Default)]
pub struct ExportsUnderWay {
    running: Mutex<HashMap<CompanyId, u32>>,
}

impl ExportsUnderWay {
    /// A slot for one more export of `company`, or `None` when it has
    /// [`MAX_EXPORTS_PER_COMPANY`] under way. The slot is given back when dropped: the export
    /// ended, failed, or its client went away.
    fn take(self: &Arc<Self>, company: CompanyId) -> Option<ExportSlot> {
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        let n = running.entry(company).or_insert(0);
        if *n >= MAX_EXPORTS_PER_COMPANY {
            return None;
        }
        *n += 1;
        Some(ExportSlot {
            exports: self.clone(),
            company,
        })
    }
}

/// One export under way (see [`ExportsUnderWay::take`]).
struct ExportSlot {
    exports: Arc<ExportsUnderWay>,
    company: CompanyId,
}

impl Drop for ExportSlot {
    fn drop(&mut self) {
        let mut running = self
            .exports
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(n) = running.get_mut(&self.company) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                running.remove(&self.company);
            }
        }
    }
}

/// The CSV's columns: the list item's fields, in this order.
const COLUMNS: [&str; 15] = [
    "id",
    "pgccId",
    "status",
    "casoDeUsoIdTemplate",
    "versaoCasoDeUso",
    "cpfTitular",
    "tipoTitular",
    "modalidadeAcesso",
    "cnpjAnuente",
    "dataExpiracaoConsentimento",
    "dataTitularRespondeuConsentimento",
    "criadoEm",
    "atualizadoEm",
    "hash",
    "provaColeta",
];

#[derive(Deserialize, Default)]
pub struct ExportForm {
    /// First day of creation, `AAAA-MM-DD`, from its midnight UTC.
    #[serde(default)]
    de: String,
    /// Last day, included.
    #[serde(default)]
    ate: String,
    /// `csv` or `jsonl`.
    #[serde(default)]
    formato: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Csv,
    JsonLines,
}

/// A valid export: its period (`until` excluded) and format.
#[derive(Clone, Copy)]
struct Export {
    from: DateTime<Utc>,
    until: DateTime<Utc>,
    format: Format,
}

fn parse(f: &ExportForm) -> Result<Export, &'static str> {
    let from = day(&f.de, false).ok().flatten();
    let until = day(&f.ate, true).ok().flatten();
    let (Some(from), Some(until)) = (from, until) else {
        return Err("Informe os dois dias do período (AAAA-MM-DD).");
    };
    if until <= from {
        return Err("O último dia deve ser igual ou posterior ao primeiro.");
    }
    let format = match f.formato.as_str() {
        "csv" => Format::Csv,
        "jsonl" => Format::JsonLines,
        _ => return Err("Escolha o formato: CSV ou JSON Lines."),
    };
    Ok(Export {
        from,
        until,
        format,
    })
}

fn form(f: &ExportForm, error: Option<&str>) -> Markup {
    let checked = |v: &str| f.formato == v || (f.formato.is_empty() && v == "csv");
    html! {
        (alert(error))
        p {
            "As solicitações criadas no período, com os campos da listagem da API (o CPF \
             mascarado, a prova de coleta incluída). A exportação fica registrada no registro de \
             acessos."
        }
        form method="get" action="/console/exportar" {
            label for="de" { "De (dia de criação, UTC)" }
            input id="de" name="de" type="date" required value=(f.de);
            label for="ate" { "Até (dia, incluído)" }
            input id="ate" name="ate" type="date" required value=(f.ate);
            fieldset {
                legend { "Formato" }
                label.opcao {
                    input id="formato-csv" type="radio" name="formato" value="csv"
                        checked[checked("csv")];
                    " CSV"
                }
                label.opcao {
                    input id="formato-jsonl" type="radio" name="formato" value="jsonl"
                        checked[checked("jsonl")];
                    " JSON Lines"
                }
            }
            button type="submit" { "Exportar" }
        }
    }
}

/// The form (no field given), or the file: a 422 form when a field is wrong, nothing read.
pub async fn export(visit: Visit, query: web::Query<ExportForm>) -> HttpResponse {
    let f = query.into_inner();
    let asked = !(f.de.is_empty() && f.ate.is_empty() && f.formato.is_empty());
    let export = if asked { Some(parse(&f)) } else { None };
    let first = match export {
        Some(Ok(export)) => Some(export),
        _ => None,
    };
    let exports = visit.console.exports.clone();
    let outcome = visit
        .signed_in(
            "/console/exportar",
            &[Scope::Auditor],
            None,
            move |s, call| match first {
                Some(export) => {
                    // taken before the first page is read, held by the producer to the end
                    let Some(slot) = exports.take(call.company().id) else {
                        return Ok(Some(Err(())));
                    };
                    page_of(s, call, export, None).map(|page| Some(Ok((page, slot))))
                }
                None => Ok(None),
            },
        )
        .await;
    let (signed, first_page) = match outcome {
        Ok(done) => done,
        Err(refusal) => return refusal.page(false),
    };
    match (export, first_page) {
        (Some(Ok(_)), Some(Err(()))) => too_many_exports(&signed),
        (Some(Ok(export)), Some(Ok(page))) => download(&visit, &signed, export, page),
        (Some(Err(why)), _) => {
            let main = form(&f, Some(why));
            layout::page(StatusCode::UNPROCESSABLE_ENTITY, TITLE, Some(&signed), main)
        }
        _ => layout::page(StatusCode::OK, TITLE, Some(&signed), form(&f, None)),
    }
}

/// The file: its first page read, the others read by a producer task as the client takes them.
fn download(
    visit: &Visit,
    signed: &SignedIn,
    export: Export,
    ((bytes, next), slot): ((Bytes, Option<String>), ExportSlot),
) -> HttpResponse {
    let (tx, rx) = mpsc::channel(PAGES_IN_FLIGHT);
    let head = match export.format {
        Format::Csv => Bytes::from(format!("{}\r\n", COLUMNS.join(","))),
        Format::JsonLines => Bytes::new(),
    };
    // room for both: the channel is empty
    let _ = tx.try_send(Ok(head));
    let _ = tx.try_send(Ok(bytes));
    let call = signed.call.clone();
    let state = visit.state.clone();
    actix_web::rt::spawn(async move {
        let mut cursor = next;
        while let Some(after) = cursor.take() {
            let call = call.clone();
            let page =
                in_blocking_hop(&state, move |s| page_of(s, &call, export, Some(after))).await;
            let (bytes, next) = match page {
                Ok(page) => page,
                Err(e) => {
                    // the file ends short: the client sees the transfer fail, never a complete
                    // file with rows missing
                    tracing::warn!("console export stopped: {e}");
                    let _ = tx.send(Err(e)).await;
                    return;
                }
            };
            if tx.send(Ok(bytes)).await.is_err() {
                return; // the client went away
            }
            cursor = next;
        }
    });
    let (extension, content_type) = match export.format {
        Format::Csv => ("csv", "text/csv; charset=utf-8"),
        Format::JsonLines => ("jsonl", "application/jsonl; charset=utf-8"),
    };
    // the slot goes with the body: given back when the download ends or its client goes away
    let mut res = HttpResponse::Ok().streaming(Pages(rx, slot));
    layout::secure_headers(&mut res, content_type);
    let name = format!(
        "attachment; filename=\"solicitacoes-{}-{}.{extension}\"",
        export.from.format("%Y-%m-%d"),
        (export.until - chrono::Days::new(1)).format("%Y-%m-%d"),
    );
    if let Ok(value) = HeaderValue::from_str(&name) {
        res.headers_mut().insert(header::CONTENT_DISPOSITION, value);
    }
    res
}

/// The company already has [`MAX_EXPORTS_PER_COMPANY`] exports under way: 429, nothing read.
fn too_many_exports(signed: &SignedIn) -> HttpResponse {
    let main = alert(Some(&format!(
        "A empresa já tem {MAX_EXPORTS_PER_COMPANY} exportações em andamento. Espere uma \
         terminar e tente de novo."
    )));
    let mut res = layout::page(StatusCode::TOO_MANY_REQUESTS, TITLE, Some(signed), main);
    res.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    res
}

/// One page of the export after `after`, rendered and cut at `server.page_max_bytes` (the
/// first row always goes), its read recorded when it carries a proof (as the list's), with the
/// cursor of the next page: right after the last row kept when the bound cut it.
fn page_of(
    s: &Services,
    call: &Call,
    export: Export,
    after: Option<String>,
) -> Result<(Bytes, Option<String>), ApiError> {
    let page = s.list_consent_requests.execute(
        call.company(),
        ConsentListQuery {
            created_from: Some(export.from),
            created_until: Some(export.until),
            cursor: after,
            limit: Some(PAGE_SIZE),
            ..ConsentListQuery::default()
        },
    )?;
    let page_len = page.items.len();
    let answered = Answered::default();
    let mut out = String::new();
    let mut count = 0;
    let mut cut_after = None;
    for request in page.items {
        let resume = application::resume_after(&request);
        let item = Solicitacao::from_domain(request, false, None);
        let value = serde_json::to_value(&item).map_err(|e| ApiError::Internal(e.into()))?;
        let line = match export.format {
            Format::JsonLines => format!("{value}\n"),
            Format::Csv => {
                let row: Vec<String> = COLUMNS.iter().map(|c| csv_field(value.get(*c))).collect();
                format!("{}\r\n", row.join(","))
            }
        };
        if count > 0 && out.len() + line.len() > s.page_max_bytes {
            break;
        }
        answered.note(item, false);
        out.push_str(&line);
        count += 1;
        cut_after = Some(resume);
    }
    answered.record_if_personal(s, call, count)?;
    // every row fitted: the list's own next cursor; cut: right after the last row kept
    let next = if count < page_len {
        cut_after
    } else {
        page.next_cursor
    };
    Ok((Bytes::from(out), next))
}

/// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break. A text that a
/// spreadsheet would run as a formula (`=`, `+`, `-`, `@` first) gets a leading `'` (OWASP's CSV
/// injection advice): the proof and the templates are the company's or the PGCC's text.
fn csv_field(value: Option<&serde_json::Value>) -> String {
    let text = match value {
        None | Some(serde_json::Value::Null) => return String::new(),
        Some(serde_json::Value::String(s)) => {
            if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
                format!("'{s}")
            } else {
                s.clone()
            }
        }
        Some(other) => other.to_string(),
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

/// The response body: the pages as the producer hands them over, and the export's slot (held,
/// never read: given back when the body is dropped).
struct Pages(
    mpsc::Receiver<Result<Bytes, ApiError>>,
    #[allow(dead_code)] ExportSlot,
);

impl Stream for Pages {
    type Item = Result<Bytes, ApiError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_company_has_at_most_two_exports_under_way_and_a_finished_one_gives_its_slot_back() {
        let exports = Arc::new(ExportsUnderWay::default());
        let (a, b) = (
            CompanyId(uuid::Uuid::from_u128(1)),
            CompanyId(uuid::Uuid::from_u128(2)),
        );
        let first = exports.take(a).expect("one");
        let _second = exports.take(a).expect("two");
        assert!(exports.take(a).is_none(), "a third is refused");
        assert!(exports.take(b).is_some(), "another company's is not");
        drop(first);
        assert!(
            exports.take(a).is_some(),
            "a finished export gives its slot back"
        );
    }

    #[test]
    fn csv_fields_are_quoted_when_needed_and_formulas_defused() {
        let s = |v: &str| csv_field(Some(&serde_json::Value::String(v.into())));
        assert_eq!(s("ativo"), "ativo");
        assert_eq!(s("a,b"), "\"a,b\"");
        assert_eq!(s("diz \"sim\""), "\"diz \"\"sim\"\"\"");
        assert_eq!(s("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(s("-1"), "'-1");
        assert_eq!(csv_field(Some(&serde_json::json!(2))), "2");
        assert_eq!(csv_field(None), "");
        assert_eq!(csv_field(Some(&serde_json::Value::Null)), "");
    }
}
