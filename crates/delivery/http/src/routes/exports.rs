//! `GET /api/exportacoes` (`auditor` scope; issue 37, part 6): a period's requests for a
//! scheduled pull, a page per call, as gzipped JSON Lines: the list's items or each request's
//! ISO/IEC TS 27560 record. The pages are the console's download's (`crate::exports`): bounded
//! by `server.page_max_bytes` of uncompressed lines, recorded in the access log, and counted
//! against the company's exports under way (a page holds a slot while it is read). The next
//! page's cursor is in `X-Proximo-Cursor` (and a `Link` of `rel="next"`); none on the last page.

use std::io::Write as _;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpRequest, HttpResponse};
use domain::ValidationErrors;
use flate2::write::GzEncoder;
use flate2::Compression;

use crate::api_key::ApiKeyHeader;
use crate::blocking::as_caller;
use crate::dto::envelope::{Envelope as EnvelopeDoc, Erro};
use crate::dto::export::{FiltroExportacao, PaginaExportacao};
use crate::dto::record::context_url;
use crate::error::ApiError;
use crate::exports::{page_of, period, ExportFormat, ExportQuery};
use crate::state::ApiState;

/// The header carrying the next page's cursor.
pub const NEXT_CURSOR: &str = "X-Proximo-Cursor";

/// A page of the requests created in a period (`de` to `ate`, days included), gzipped JSON
/// Lines: the list's items (`formato=jsonl`, the default) or their ISO/IEC TS 27560 records
/// (`formato=registro`). Follow `X-Proximo-Cursor` until it is absent.
#[utoipa::path(
    get,
    path = "/api/exportacoes",
    operation_id = "exportarSolicitacoes",
    tag = "Auditoria",
    params(FiltroExportacao),
    responses(
        (status = 200, description = "A page: gzip of JSON Lines, one request a line (at most 500 items, or 100 records, and `server.page_max_bytes` of uncompressed lines; an empty file past the last request). Recorded in the access log.", content_type = "application/octet-stream", body = PaginaExportacao,
            headers(
                ("X-Proximo-Cursor" = String, description = "The next page's `cursor`; absent on the last page."),
                ("Content-Disposition" = String, description = "`attachment`, with a file name of the period."),
            )),
        (status = 422, description = "A parameter breaks a rule (a day missing or not `AAAA-MM-DD`, `ate` before `de`, an unknown `formato`, a bad cursor), or a record's mandatory field cannot be filled (`formato=registro`: each missing field named, as `GET .../registro` names them). Nothing was read.", body = EnvelopeDoc<Erro>),
        (status = 429, description = "The company already has its exports under way (the console's downloads count too); `Retry-After` says when to try again. Nothing was read.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn export(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    query: crate::query::Query<FiltroExportacao>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let q = query.into_inner();
    let export = parse(&q)?;
    let exports = state.exports.clone();
    let context = context_url(&req);
    let cursor = q.cursor.filter(|c| !c.is_empty());
    let (gzipped, next) = as_caller(&state, key, move |s, call| {
        let _slot = exports
            .take(call.company().id)
            .ok_or(ApiError::TooManyExports)?;
        let (lines, next) = page_of(s, call, export, cursor, &context)?;
        let mut gz = GzEncoder::new(Vec::with_capacity(lines.len() / 4), Compression::default());
        gz.write_all(&lines)
            .and_then(|_| gz.finish())
            .map(|bytes| (bytes, next))
            .map_err(|e| ApiError::Internal(e.into()))
    })
    .await?;
    let mut res = HttpResponse::Ok();
    res.insert_header((header::CONTENT_TYPE, "application/octet-stream"));
    let name = format!(
        "attachment; filename=\"solicitacoes-{}-{}{}.jsonl.gz\"",
        export.from.format("%Y-%m-%d"),
        (export.until - chrono::Days::new(1)).format("%Y-%m-%d"),
        if export.format == ExportFormat::Records {
            "-registros"
        } else {
            ""
        },
    );
    if let Ok(value) = HeaderValue::from_str(&name) {
        res.insert_header((header::CONTENT_DISPOSITION, value));
    }
    if let Some(next) = next {
        let link = format!(
            "</api/exportacoes?de={}&ate={}&formato={}&cursor={}>; rel=\"next\"",
            export.from.format("%Y-%m-%d"),
            (export.until - chrono::Days::new(1)).format("%Y-%m-%d"),
            match export.format {
                ExportFormat::Records => "registro",
                _ => "jsonl",
            },
            form_urlencoded::byte_serialize(next.as_bytes()).collect::<String>(),
        );
        if let Ok(value) = HeaderValue::from_str(&link) {
            res.insert_header((header::LINK, value));
        }
        if let Ok(value) = HeaderValue::from_str(&next) {
            res.insert_header((NEXT_CURSOR, value));
        }
    }
    Ok(res.body(gzipped))
}

/// The period and form asked, or every broken rule named.
fn parse(q: &FiltroExportacao) -> Result<ExportQuery, ApiError> {
    let mut errors = ValidationErrors::default();
    let format = match q.formato.as_deref() {
        None | Some("") | Some("jsonl") => Some(ExportFormat::JsonLines),
        Some("registro") => Some(ExportFormat::Records),
        Some(_) => {
            errors.push("formato", "Use `jsonl` ou `registro`.");
            None
        }
    };
    let period = period(&q.de, &q.ate);
    if let Err(why) = period {
        let field = if crate::exports::day(&q.de, false).ok().flatten().is_none() {
            "de"
        } else {
            "ate"
        };
        errors.push(field, why);
    }
    match (period, format) {
        (Ok((from, until)), Some(format)) if errors.is_empty() => Ok(ExportQuery {
            from,
            until,
            format,
        }),
        _ => Err(ApiError::Validation(errors)),
    }
}
