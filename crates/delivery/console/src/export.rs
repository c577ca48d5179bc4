//! `GET /console/exportar` (`auditor` scope): the company's consent requests created in a period
//! of days, as CSV or as JSON Lines of the consent list's items (`GET
//! /api/solicitacao-consentimento`: the CPF masked, the proof included), or as JSON Lines of
//! their ISO/IEC TS 27560 records (docs/records.md), for the DPO to hand on. The pages are the
//! API's export's (`delivery_http::exports`), recorded in the access log as they are.
//!
//! Streamed a page at a time: a year of a large company is millions of rows, and one answer
//! must not hold them. A producer task reads the pages in turn, each in one blocking hop, and
//! hands them to the response through a channel of two pages: a slow download holds at most
//! three pages in memory and one blocking thread at a time, never the whole period. A company
//! has at most [`MAX_EXPORTS_PER_COMPANY`] exports under way per process, the API's included;
//! one more is a 429 page with `Retry-After`, nothing read.

use std::pin::Pin;
use std::task::{Context, Poll};

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::web::Bytes;
use actix_web::{web, HttpResponse};
use delivery_http::blocking::in_blocking_hop;
use delivery_http::dto::record::context_url;
use delivery_http::exports::{
    page_of, period, ExportFormat, ExportQuery, ExportSlot, COLUMNS, MAX_EXPORTS_PER_COMPANY,
};
use delivery_http::ApiError;
use domain::Scope;
use futures_core::Stream;
use maud::{html, Markup};
use serde::Deserialize;
use tokio::sync::mpsc;

use crate::layout::{self, alert};
use crate::visit::{SignedIn, Visit};

/// Pages waiting for the client, beyond the one being written.
const PAGES_IN_FLIGHT: usize = 2;
const TITLE: &str = "Exportar solicitações";

#[derive(Deserialize, Default)]
pub struct ExportForm {
    /// First day of creation, `AAAA-MM-DD`, from its midnight UTC.
    #[serde(default)]
    de: String,
    /// Last day, included.
    #[serde(default)]
    ate: String,
    /// `csv`, `jsonl` or `registro`.
    #[serde(default)]
    formato: String,
}

fn parse(f: &ExportForm) -> Result<ExportQuery, &'static str> {
    let (from, until) = period(&f.de, &f.ate)?;
    let format = match f.formato.as_str() {
        "csv" => ExportFormat::Csv,
        "jsonl" => ExportFormat::JsonLines,
        "registro" => ExportFormat::Records,
        _ => return Err("Escolha o formato: CSV, JSON Lines ou registros ISO/IEC TS 27560."),
    };
    Ok(ExportQuery {
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
                label.opcao {
                    input id="formato-registro" type="radio" name="formato" value="registro"
                        checked[checked("registro")];
                    " Registros ISO/IEC TS 27560 (JSON-LD, um por linha)"
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
    let exports = visit.state.exports.clone();
    let context = context_url(&visit.req);
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
                    page_of(s, call, export, None, &context).map(|page| Some(Ok((page, slot))))
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
    export: ExportQuery,
    ((bytes, next), slot): ((Bytes, Option<String>), ExportSlot),
) -> HttpResponse {
    let (tx, rx) = mpsc::channel(PAGES_IN_FLIGHT);
    let head = match export.format {
        ExportFormat::Csv => Bytes::from(format!("{}\r\n", COLUMNS.join(","))),
        ExportFormat::JsonLines | ExportFormat::Records => Bytes::new(),
    };
    // room for both: the channel is empty
    let _ = tx.try_send(Ok(head));
    let _ = tx.try_send(Ok(bytes));
    let call = signed.call.clone();
    let state = visit.state.clone();
    let context = context_url(&visit.req);
    actix_web::rt::spawn(async move {
        let mut cursor = next;
        while let Some(after) = cursor.take() {
            let (call, context) = (call.clone(), context.clone());
            let page = in_blocking_hop(&state, move |s| {
                page_of(s, &call, export, Some(after), &context)
            })
            .await;
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
        ExportFormat::Csv => ("csv", "text/csv; charset=utf-8"),
        ExportFormat::JsonLines => ("jsonl", "application/jsonl; charset=utf-8"),
        ExportFormat::Records => ("jsonld.jsonl", "application/jsonl; charset=utf-8"),
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
