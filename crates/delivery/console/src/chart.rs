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
use actix_web::{web, HttpResponse};
use chrono::{Datelike, Days, NaiveDate, Utc};
use delivery_http::blocking::check_rate;
use domain::{ConsentStatus, Scope};
use maud::{html, Markup};
use ports::DailyCount;
use serde::Deserialize;

use crate::human::status_label;
use crate::layout::{self, alert, scroll_box};
use crate::visit::Visit;
use delivery_http::exports::day;

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
const TITLE: &str = "Painel";
/// A bar's width, the gap between bars, and the tallest bar's height, in pixels.
const BAR: u64 = 14;
const GAP: u64 = 4;
const HEIGHT: u64 = 160;
/// Rows counted per request of the quota a call of the chart takes (a list page reads up to 500).
pub const ROWS_PER_REQUEST: u64 = 1000;
/// Companies whose last count is remembered (then all are forgotten: each is charged one again).
const REMEMBERED: usize = 10_000;

/// The rows each company's last call of the chart (or of the home page's figures) read, in this
/// process.
#[derive(Default)]
pub struct ChartRows {
    rows: std::sync::Mutex<std::collections::HashMap<domain::CompanyId, u64>>,
}

impl ChartRows {
    /// The requests of the quota a call of `company` takes besides the page's own.
    pub(crate) fn weight(&self, company: domain::CompanyId) -> u32 {
        let rows = self.lock().get(&company).copied().unwrap_or(0);
        u32::try_from(rows / ROWS_PER_REQUEST).unwrap_or(u32::MAX)
    }

    pub(crate) fn read(&self, company: domain::CompanyId, rows: u64) {
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
        Err(_) => return Err("Data final inválida (AAAA-MM-DD)."),
    };
    // a date at either end of chrono's range (years ±262143) has no day after, or no period
    // before it: a wrong date, never a panic
    let first = match day(&p.de, false) {
        Ok(Some(at)) => at.date_naive(),
        Ok(None) => last
            .checked_sub_days(Days::new(DEFAULT_DAYS - 1))
            .ok_or("Data final inválida (AAAA-MM-DD).")?,
        Err(_) => return Err("Data inicial inválida (AAAA-MM-DD)."),
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

fn form(p: &Period, first: NaiveDate, last: NaiveDate, error: Option<&str>) -> Markup {
    // the days asked for as typed; the period shown when none was
    let value = |raw: &str, fallback: NaiveDate| {
        if raw.is_empty() {
            fallback.to_string()
        } else {
            raw.to_owned()
        }
    };
    html! {
        (alert(error))
        form method="get" action="/console/painel" {
            label for="de" { "De (dia de criação, UTC)" }
            input id="de" name="de" type="date" value=(value(&p.de, first));
            label for="ate" { "Até (dia, incluído)" }
            input id="ate" name="ate" type="date" value=(value(&p.ate, last));
            button type="submit" { "Mostrar" }
        }
    }
}

pub async fn page(visit: Visit, query: web::Query<Period>) -> HttpResponse {
    let p = query.into_inner();
    let period = parse(&p);
    let asked = period.ok();
    // a task-local: taken here, not on the blocking thread
    let limiter = delivery_http::rate_limit::current_limiter();
    let chart_rows = visit.console.chart_rows.clone();
    let outcome = visit
        .signed_in(
            "/console/painel",
            &[Scope::Auditor],
            None,
            move |s, call| match asked {
                Some((first, end)) => {
                    let company = call.company().id;
                    let weight = chart_rows.weight(company);
                    if weight > 0 {
                        check_rate(limiter.as_deref(), call.caller.quota_of, weight)?;
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
    let main = match period {
        // a valid period was counted
        Ok((first, end)) => html! {
            (form(&p, first, end - Days::new(1), None))
            (render(&counts.unwrap_or_default(), first, end))
        },
        Err(why) => {
            let today = Utc::now().date_naive();
            let first = today - Days::new(DEFAULT_DAYS - 1);
            let main = form(&p, first, today, Some(why));
            return layout::page(StatusCode::UNPROCESSABLE_ENTITY, TITLE, Some(&signed), main);
        }
    };
    layout::page(StatusCode::OK, TITLE, Some(&signed), main)
}

/// The chart and its tables.
fn render(counts: &[DailyCount], first: NaiveDate, end: NaiveDate) -> Markup {
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
    let width = (days.len() as u64) * (BAR + GAP) + 60;
    let last = (end - Days::new(1)).format("%d/%m/%Y");
    let first = first.format("%d/%m/%Y");
    let day_rows = by_day
        .iter()
        .map(|(d, v)| (d.format("%d/%m/%Y").to_string(), v));
    let template_rows = by_template.iter().map(|(t, v)| (t.to_string(), v));
    html! {
        p role="status" { (total) " solicitações criadas de " (first) " a " (last) "." }
        h2 { "Por dia" }
        figure {
            svg role="img" aria-labelledby="grafico-titulo" width=(width) height=(HEIGHT + 30)
                viewBox={ "0 0 " (width) " " (HEIGHT + 30) } {
                title id="grafico-titulo" {
                    "Solicitações criadas por dia, empilhadas por status; o maior dia teve " (top)
                }
                line x1="45" y1=(HEIGHT + 10) x2=(width) y2=(HEIGHT + 10) stroke="#333" {}
                text x="0" y="20" font-size="12" { (top) }
                text x="0" y=(HEIGHT + 14) font-size="12" { "0" }
                (bars(&days, &by_day, top))
            }
            figcaption {
                "De " (first) " a " (last) ", um traço por dia. Legenda:"
                ul.legenda {
                    @for (status, colour) in STATUSES {
                        li {
                            svg width="12" height="12" aria-hidden="true" {
                                rect width="12" height="12" fill=(colour) {}
                            }
                            " " (label(status))
                        }
                    }
                }
            }
        }
        (scroll_box("Por dia", table(
            "Solicitações criadas por dia e status atual (dias sem nenhuma omitidos)",
            "Dia",
            day_rows,
        )))
        h2 { "Por caso de uso" }
        (scroll_box("Por caso de uso", table(
            "Solicitações do período por caso de uso e status atual",
            "Caso de uso",
            template_rows,
        )))
    }
}

/// Each day's bar, its statuses stacked from the bottom.
fn bars(days: &[NaiveDate], by_day: &BTreeMap<NaiveDate, [u64; 5]>, top: u64) -> Markup {
    let mut rects = Vec::new();
    for (i, d) in days.iter().enumerate() {
        let x = 50 + (i as u64) * (BAR + GAP);
        let mut y = HEIGHT + 10;
        let row = by_day.get(d).copied().unwrap_or_default();
        for (j, (_, colour)) in STATUSES.iter().enumerate() {
            let h = row[j] * HEIGHT / top;
            if h == 0 {
                continue;
            }
            y -= h;
            rects.push((x, y, h, *colour));
        }
    }
    html! {
        @for (x, y, h, colour) in rects {
            rect x=(x) y=(y) width=(BAR) height=(h) fill=(colour) {}
        }
    }
}

/// A status's label (its code when it has none).
fn label(status: ConsentStatus) -> &'static str {
    status_label(status.as_str()).unwrap_or(status.as_str())
}

/// A table of counts: a row per `rows` item (its header cell, then a cell per status and the
/// total).
fn table<'a>(
    caption: &str,
    first_column: &str,
    rows: impl Iterator<Item = (String, &'a [u64; 5])>,
) -> Markup {
    html! {
        table {
            caption { (caption) }
            thead {
                tr {
                    th scope="col" { (first_column) }
                    @for (status, _) in STATUSES { th scope="col" { (label(status)) } }
                    th scope="col" { "Total" }
                }
            }
            tbody {
                @for (name, counts) in rows {
                    tr {
                        th scope="row" { (name) }
                        @for n in counts { td { (n) } }
                        td { (counts.iter().sum::<u64>()) }
                    }
                }
            }
        }
    }
}
