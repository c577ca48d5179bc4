//! `GET /console/painel` (`auditor` scope): the company's requests created per day over a period
//! (30 days by default, at most `application::MAX_COUNT_DAYS`), drawn as a bar chart stacked by
//! status (inline SVG: no script), with the same numbers in tables, by day and by use case, for
//! screen readers and for copying. Counts only: nothing personal, nothing recorded.
//!
//! Charged by the rows it reads (issue 39: up to 92 days of rows per call, charged one request;
//! at 3x10^5 rows, 4.3 calls a second raised another company's p50 from 5.0 to 19.6 ms): besides
//! the page's one request, a call takes one request of the company's quota per
//! [`ROWS_PER_REQUEST`] rows its company's previous call read (the rows are known only once
//! counted; the first call of a process is charged one), before it reads anything: a company
//! asking again and again for a large period runs out of its own quota, 429 without a read.

use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use chrono::{Datelike, Days, NaiveDate, Utc};
use domain::{ConsentStatus, Scope};
use ports::DailyCount;
use serde::Deserialize;

use super::accesses::day;
use super::html::{self, esc};
use super::human::status_label;
use super::{nav, signed_in};
use crate::state::ApiState;

/// The statuses in the order they are stacked, each with its bar colour (a palette that keeps
/// its contrast against white; the legend and the tables name each status, colour is never the
/// only cue).
const STATUSES: [(ConsentStatus, &str); 5] = [
    (ConsentStatus::Pending, "#8a6d00"),
    (ConsentStatus::Active, "#1b6e3a"),
    (ConsentStatus::Refused, "#6b4c9a"),
    (ConsentStatus::Expired, "#5a5a5a"),
    (ConsentStatus::Revoked, "#b3261e"),
];
const DEFAULT_DAYS: u64 = 30;
/// Rows counted per request of the quota a call of the chart takes (a list page reads up to 500).
pub const ROWS_PER_REQUEST: u64 = 1000;
/// Companies whose last count is remembered (then all are forgotten: each is charged one again).
const REMEMBERED: usize = 10_000;

/// The rows each company's last call of the chart read, in this process.
#[derive(Default)]
pub struct ChartRows {
    rows: std::sync::Mutex<std::collections::HashMap<domain::CompanyId, u64>>,
}

impl ChartRows {
    /// The requests of the quota a call of `company` takes besides the page's own.
    fn weight(&self, company: domain::CompanyId) -> u32 {
        let rows = self.lock().get(&company).copied().unwrap_or(0);
        u32::try_from(rows / ROWS_PER_REQUEST).unwrap_or(u32::MAX)
    }

    fn read(&self, company: domain::CompanyId, rows: u64) {
        let mut remembered = self.lock();
        if remembered.len() >= REMEMBERED && !remembered.contains_key(&company) {
            remembered.clear();
        }
        remembered.insert(company, rows);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<domain::CompanyId, u64>> {
        self.rows.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[derive(Deserialize, Default)]
pub struct Period {
    #[serde(default)]
    de: String,
    #[serde(default)]
    ate: String,
}

/// The period's first day and the day after its last; a message when it is wrong.
fn parse(p: &Period) -> Result<(NaiveDate, NaiveDate), &'static str> {
    let today = Utc::now().date_naive();
    let last = match day(&p.ate, false) {
        Ok(Some(at)) => at.date_naive(),
        Ok(None) => today,
        Err(()) => return Err("Data final inválida (AAAA-MM-DD)."),
    };
    // a date at either end of chrono's range (years ±262143) has no day after, or no period
    // before it: a wrong date, never a panic
    let first = match day(&p.de, false) {
        Ok(Some(at)) => at.date_naive(),
        Ok(None) => last
            .checked_sub_days(Days::new(DEFAULT_DAYS - 1))
            .ok_or("Data final inválida (AAAA-MM-DD).")?,
        Err(()) => return Err("Data inicial inválida (AAAA-MM-DD)."),
    };
    let end = last
        .checked_add_days(Days::new(1))
        .ok_or("Data final inválida (AAAA-MM-DD).")?;
    // years a date field can hold and PostgreSQL's timestamps can compare (it has none before
    // 4713 BC): anything else is a wrong date, not a query that fails
    if !(1..=9999).contains(&first.year()) || !(1..=9999).contains(&last.year()) {
        return Err("Datas entre os anos 1 e 9999 (AAAA-MM-DD).");
    }
    if end <= first {
        return Err("O último dia deve ser igual ou posterior ao primeiro.");
    }
    if (end - first).num_days() > application::MAX_COUNT_DAYS {
        return Err("O período pode ter no máximo 92 dias.");
    }
    Ok((first, end))
}

fn form(p: &Period, first: NaiveDate, last: NaiveDate, error: Option<&str>) -> String {
    let error = error
        .map(|e| format!("<p class=\"erro\" role=\"alert\">{}</p>", esc(e)))
        .unwrap_or_default();
    let value = |raw: &str, fallback: NaiveDate| {
        if raw.is_empty() {
            fallback.to_string()
        } else {
            esc(raw)
        }
    };
    format!(
        "{error}<form method=\"get\" action=\"/console/painel\">\
         <label for=\"de\">De (dia de criação, UTC)</label>\
         <input id=\"de\" name=\"de\" type=\"date\" value=\"{}\">\
         <label for=\"ate\">Até (dia, incluído)</label>\
         <input id=\"ate\" name=\"ate\" type=\"date\" value=\"{}\">\
         <button type=\"submit\">Mostrar</button></form>",
        value(&p.de, first),
        value(&p.ate, last),
    )
}

pub async fn page(
    state: web::Data<ApiState>,
    req: HttpRequest,
    query: web::Query<Period>,
) -> HttpResponse {
    let p = query.into_inner();
    let period = parse(&p);
    let asked = period.ok();
    // a task-local: taken here, not on the blocking thread
    let limiter = crate::rate_limit::current_limiter();
    let chart_rows = state.chart_rows.clone();
    let outcome = signed_in(
        &state,
        &req,
        "/console/painel",
        &[Scope::Auditor],
        None,
        move |s, call| match asked {
            Some((first, end)) => {
                let company = call.company().id;
                let weight = chart_rows.weight(company);
                if weight > 0 {
                    crate::blocking::check_rate(limiter.as_deref(), call.caller.quota_of, weight)?;
                }
                let counts = s.count_consent_requests.by_day(
                    call.company(),
                    first.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc(),
                    end.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc(),
                )?;
                chart_rows.read(company, counts.iter().map(|c| c.count).sum());
                Ok(Some(counts))
            }
            None => Ok(None),
        },
    )
    .await;
    let (signed, counts) = match outcome {
        Ok(done) => done,
        Err(refusal) => return refusal.page(false),
    };
    let today = Utc::now().date_naive();
    let (first, end) = match period {
        Ok(period) => period,
        Err(why) => {
            return html::page(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Painel",
                &nav(&signed),
                &form(&p, today - Days::new(DEFAULT_DAYS - 1), today, Some(why)),
            )
        }
    };
    // a valid period was counted
    let counts = counts.unwrap_or_default();
    let last = end - Days::new(1);
    let main = format!(
        "{}{}",
        form(&p, first, last, None),
        render(&counts, first, end)
    );
    html::page(StatusCode::OK, "Painel", &nav(&signed), &main)
}

/// The chart and its tables.
fn render(counts: &[DailyCount], first: NaiveDate, end: NaiveDate) -> String {
    let days: Vec<NaiveDate> = first.iter_days().take_while(|d| *d < end).collect();
    let mut by_day: BTreeMap<NaiveDate, [u64; 5]> = BTreeMap::new();
    let mut by_template: BTreeMap<&str, [u64; 5]> = BTreeMap::new();
    for c in counts {
        let Some(i) = STATUSES.iter().position(|(s, _)| *s == c.status) else {
            continue;
        };
        by_day.entry(c.day).or_default()[i] += c.count;
        by_template.entry(c.template_id.as_str()).or_default()[i] += c.count;
    }
    let total: u64 = by_day.values().flat_map(|v| v.iter()).sum();
    let top = by_day
        .values()
        .map(|v| v.iter().sum::<u64>())
        .max()
        .unwrap_or(0)
        .max(1);
    let (bar, gap, height) = (14u64, 4u64, 160u64);
    let width = (days.len() as u64) * (bar + gap) + 60;
    let mut bars = String::new();
    for (i, d) in days.iter().enumerate() {
        let x = 50 + (i as u64) * (bar + gap);
        let mut y = height + 10;
        let row = by_day.get(d).copied().unwrap_or_default();
        for (j, (_, colour)) in STATUSES.iter().enumerate() {
            let h = row[j] * height / top;
            if h == 0 {
                continue;
            }
            y -= h;
            bars.push_str(&format!(
                "<rect x=\"{x}\" y=\"{y}\" width=\"{bar}\" height=\"{h}\" fill=\"{colour}\"></rect>"
            ));
        }
    }
    let legend: String = STATUSES
        .iter()
        .map(|(s, colour)| {
            format!(
                "<li><svg width=\"12\" height=\"12\" aria-hidden=\"true\"><rect width=\"12\" \
                 height=\"12\" fill=\"{colour}\"></rect></svg> {}</li>",
                status_label(s.as_str()).unwrap_or(s.as_str())
            )
        })
        .collect();
    let head: String = STATUSES
        .iter()
        .map(|(s, _)| {
            format!(
                "<th scope=\"col\">{}</th>",
                status_label(s.as_str()).unwrap_or(s.as_str())
            )
        })
        .collect();
    let cells = |v: &[u64; 5]| -> String {
        v.iter()
            .map(|n| format!("<td>{n}</td>"))
            .chain(std::iter::once(format!(
                "<td>{}</td>",
                v.iter().sum::<u64>()
            )))
            .collect()
    };
    let day_rows: String = by_day
        .iter()
        .map(|(d, v)| {
            format!(
                "<tr><th scope=\"row\">{}</th>{}</tr>",
                d.format("%d/%m/%Y"),
                cells(v)
            )
        })
        .collect();
    let template_rows: String = by_template
        .iter()
        .map(|(t, v)| format!("<tr><th scope=\"row\">{}</th>{}</tr>", esc(t), cells(v)))
        .collect();
    let last = (end - Days::new(1)).format("%d/%m/%Y");
    let first = first.format("%d/%m/%Y");
    format!(
        "<p role=\"status\">{total} solicitações criadas de {first} a {last}.</p>\
         <h2>Por dia</h2>\
         <figure><svg role=\"img\" aria-labelledby=\"grafico-titulo\" width=\"{width}\" \
         height=\"{}\" viewBox=\"0 0 {width} {}\">\
         <title id=\"grafico-titulo\">Solicitações criadas por dia, empilhadas por status; \
         o maior dia teve {top}</title>\
         <line x1=\"45\" y1=\"{}\" x2=\"{width}\" y2=\"{}\" stroke=\"#333\"></line>\
         <text x=\"0\" y=\"20\" font-size=\"12\">{top}</text>\
         <text x=\"0\" y=\"{}\" font-size=\"12\">0</text>{bars}</svg>\
         <figcaption>De {first} a {last}, um traço por dia. Legenda:<ul class=\"legenda\">\
         {legend}</ul></figcaption></figure>\
         <div class=\"rolagem\" tabindex=\"0\" role=\"region\" aria-label=\"Por dia\">\
         <table><caption>Solicitações criadas por dia e status atual (dias sem nenhuma \
         omitidos)</caption><thead><tr><th scope=\"col\">Dia</th>{head}\
         <th scope=\"col\">Total</th></tr></thead><tbody>{day_rows}</tbody></table></div>\
         <h2>Por caso de uso</h2>\
         <div class=\"rolagem\" tabindex=\"0\" role=\"region\" aria-label=\"Por caso de uso\">\
         <table><caption>Solicitações do período por caso de uso e status atual</caption>\
         <thead><tr><th scope=\"col\">Caso de uso</th>{head}<th scope=\"col\">Total</th></tr>\
         </thead><tbody>{template_rows}</tbody></table></div>",
        height + 30,
        height + 30,
        height + 10,
        height + 10,
        height + 14,
    )
}
