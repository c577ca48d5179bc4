//! A company's exports of a period (issue 34, part 5; issue 37, part 6): the console's download
//! (`/console/exportar`, a file streamed a page at a time) and the API's scheduled pulls
//! (`GET /api/exportacoes`, a gzipped page per call) read the same pages, here, under the same
//! per-company limit on exports under way.
//!
//! A page is up to [`ExportFormat::page_size`] requests created in the period, cut at
//! `server.page_max_bytes` of uncompressed lines as the API's lists are (the first line always
//! goes), with the cursor of the next page. Its reads are recorded in the access log: the list's
//! items when they carry a proof, as the list records them; every record, as
//! `GET .../registro` records one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use actix_web::web::Bytes;
use application::{ConsentListQuery, Services};
use chrono::{DateTime, Days, NaiveDate, Utc};
use domain::CompanyId;
use uuid::Uuid;

use crate::access_log::{record_read, Answered};
use crate::blocking::Call;
use crate::dto::consent_read::Solicitacao;
use crate::dto::record::consent_record;
use crate::error::ApiError;

/// Exports a company may have under way at once in one process (the console's downloads and
/// the API's pages together): with pages of at most `server.page_max_bytes`, a company holds at
/// most this many times three pages of memory and this many blocking hops, however many
/// downloads its keys start or leave stalled (issue 39: 500 rows of 63 KB proofs were 32 MB a
/// page, and 60 stalled downloads of one session took the process from 61 MB to 1,072 MB).
pub const MAX_EXPORTS_PER_COMPANY: u32 = 2;

/// The exports under way, per company, in this process.
#[derive(Default)]
pub struct ExportsUnderWay {
    running: Mutex<HashMap<CompanyId, u32>>,
}

impl ExportsUnderWay {
    /// A slot for one more export of `company`, or `None` when it has
    /// [`MAX_EXPORTS_PER_COMPANY`] under way. The slot is given back when dropped: the export
    /// ended, failed, or its client went away.
    pub fn take(self: &Arc<Self>, company: CompanyId) -> Option<ExportSlot> {
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
pub struct ExportSlot {
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

/// The form of an export's lines.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ExportFormat {
    /// The list's items (`GET /api/solicitacao-consentimento`), as CSV rows of [`COLUMNS`].
    Csv,
    /// The list's items, one JSON object a line.
    JsonLines,
    /// Each request's ISO/IEC TS 27560 record (`GET .../registro`), one JSON-LD document a line.
    Records,
}

impl ExportFormat {
    /// Requests read a page. A record costs two reads (the request, its history) besides the
    /// list's, so its pages are shorter: each page stays one short blocking hop.
    pub fn page_size(self) -> u32 {
        match self {
            ExportFormat::Csv | ExportFormat::JsonLines => 500,
            ExportFormat::Records => 100,
        }
    }
}

/// The CSV's columns: the list item's fields, in this order.
pub const COLUMNS: [&str; 15] = [
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

/// An export's period (creation at or after `from`, before `until`) and form.
#[derive(Clone, Copy, Debug)]
pub struct ExportQuery {
    pub from: DateTime<Utc>,
    pub until: DateTime<Utc>,
    pub format: ExportFormat,
}

/// A text that is not a day `AAAA-MM-DD` (or one past the calendar's end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotADay;

/// A day `AAAA-MM-DD` as its midnight UTC, or the next day's when `next` (the end of a period
/// that includes it); `Ok(None)` when blank.
pub fn day(raw: &str, next: bool) -> Result<Option<DateTime<Utc>>, NotADay> {
    if raw.trim().is_empty() {
        return Ok(None);
    }
    let date = NaiveDate::parse_from_str(raw.trim(), "%Y-%m-%d").map_err(|_| NotADay)?;
    let date = if next {
        date.checked_add_days(Days::new(1)).ok_or(NotADay)?
    } else {
        date
    };
    Ok(Some(date.and_hms_opt(0, 0, 0).ok_or(NotADay)?.and_utc()))
}

/// The period of days `de` to `ate` (both included, `AAAA-MM-DD`) as `[from, until)`, or what
/// is wrong with it, in the words the console and the API both answer.
pub fn period(de: &str, ate: &str) -> Result<(DateTime<Utc>, DateTime<Utc>), &'static str> {
    let from = day(de, false).ok().flatten();
    let until = day(ate, true).ok().flatten();
    let (Some(from), Some(until)) = (from, until) else {
        return Err("Informe os dois dias do período (AAAA-MM-DD).");
    };
    if until <= from {
        return Err("O último dia deve ser igual ou posterior ao primeiro.");
    }
    Ok((from, until))
}

/// One page of the export after `after`, rendered and cut at `server.page_max_bytes` (the
/// first line always goes), its reads recorded, with the cursor of the next page: right after
/// the last line kept when the bound cut it. `context` is the records' `@context` URL.
pub fn page_of(
    s: &Services,
    call: &Call,
    export: ExportQuery,
    after: Option<String>,
    context: &str,
) -> Result<(Bytes, Option<String>), ApiError> {
    let page = s.list_consent_requests.execute(
        call.company(),
        ConsentListQuery {
            created_from: Some(export.from),
            created_until: Some(export.until),
            cursor: after,
            limit: Some(export.format.page_size()),
            ..ConsentListQuery::default()
        },
    )?;
    let mut lines = Vec::with_capacity(page.items.len());
    if export.format == ExportFormat::Records {
        let ids: Vec<Uuid> = page.items.iter().map(|r| r.id).collect();
        let resumes: HashMap<Uuid, String> = page
            .items
            .iter()
            .map(|r| (r.id, application::resume_after(r)))
            .collect();
        for source in s.consent_records.many(call.company(), &ids)? {
            let id = source.request.id;
            let line = format!("{}\n", consent_record(&source, context));
            lines.push((
                line,
                resumes[&id].clone(),
                Read::Record(id, source.request.hash),
            ));
        }
    } else {
        for request in page.items {
            let resume = application::resume_after(&request);
            let item = Solicitacao::from_domain(request, false, None);
            let value = serde_json::to_value(&item).map_err(|e| ApiError::Internal(e.into()))?;
            let line = match export.format {
                ExportFormat::Csv => {
                    let row: Vec<String> =
                        COLUMNS.iter().map(|c| csv_field(value.get(*c))).collect();
                    format!("{}\r\n", row.join(","))
                }
                _ => format!("{value}\n"),
            };
            lines.push((line, resume, Read::Item(Box::new(item))));
        }
    }
    let answered = Answered::default();
    let mut records = Vec::new();
    let mut out = String::new();
    let mut count = 0;
    let mut cut_after = None;
    let listed = lines.len();
    for (line, resume, read) in lines {
        if count > 0 && out.len() + line.len() > s.page_max_bytes {
            break;
        }
        match read {
            Read::Item(item) => {
                answered.note(*item, false);
            }
            Read::Record(id, hash) => records.push((id, hash)),
        }
        out.push_str(&line);
        count += 1;
        cut_after = Some(resume);
    }
    answered.record_if_personal(s, call, count)?;
    if !records.is_empty() {
        record_read(s, call, records.iter().map(|(id, h)| (*id, h.as_str())))?;
    }
    // every line fitted: the list's own next cursor; cut: right after the last line kept
    let next = if count < listed {
        cut_after
    } else {
        page.next_cursor
    };
    Ok((Bytes::from(out), next))
}

/// What a line read, for the access log.
enum Read {
    Item(Box<Solicitacao>),
    Record(Uuid, String),
}

/// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break. A text that a
/// spreadsheet would run as a formula (`=`, `+`, `-`, `@` first) gets a leading `'` (OWASP's CSV
/// injection advice): the proof and the templates are the company's or the PGCC's text.
pub fn csv_field(value: Option<&serde_json::Value>) -> String {
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
    fn a_period_is_two_days_in_order_the_last_included() {
        let (from, until) = period("2026-01-01", "2026-01-01").unwrap();
        assert_eq!(until - from, chrono::Duration::days(1));
        assert!(period("2026-01-02", "2026-01-01").is_err());
        assert!(period("", "2026-01-01").is_err());
        assert!(period("2026-02-30", "2026-03-01").is_err());
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
