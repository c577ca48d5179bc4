//! `GET /console/webhooks/{id}/entregas` (`webhooks`, `auditor`): a webhook URL's health and its
//! delivery log (issue 38, part 5). Health: its state (disabled: when and why), the success rate
//! and median latency of its attempts over 24 h, its last success. The log: filtered by status,
//! event type and period, 50 a page newest first with a link to the next, each delivery with its
//! next retry time, its attempts (with the start of each answer's body) and its request's body.
//! For a `webhooks` key, the forms: replay one delivery, resend
//! every failed delivery since a time, change the event types.
//!
//! The figures are a bounded read, charged as the chart is (docs/console.md, "A URL's health"):
//! at most `application::HEALTH_MAX_DELIVERIES` deliveries of the window and their attempts,
//! and besides the page's one request, one request of the company's quota per
//! [`crate::chart::ROWS_PER_REQUEST`] rows the company's previous read of them read.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use delivery_http::blocking::check_rate;
use delivery_http::error::Resource;
use delivery_http::ApiError;
use domain::{EventType, Scope, WebhookUrl};
use maud::{html, Markup};
use ports::{DeliveryAttempt, DeliveryFilter, DeliveryRecord, UrlHealth, DELIVERY_STATUSES};
use serde::Deserialize;
use uuid::Uuid;

use crate::human::{delivery_badge, delivery_label, event_label, when, when_or_dash};
use crate::layout::{self, alert, post_form, scroll_box};
use crate::operator::{answer, back_to_urls, url_events, url_state};
use crate::visit::{SignedIn, Visit};
use delivery_http::exports::day;

/// Deliveries a page of the log shows.
pub const PAGE: u32 = 50;

/// The filter as the GET form sends it (nothing personal: ids, codes and days).
#[derive(Deserialize, Default, Clone, serde::Serialize)]
pub struct Query {
    #[serde(default)]
    status: String,
    #[serde(default)]
    evento: String,
    #[serde(default)]
    de: String,
    #[serde(default)]
    ate: String,
    /// The next page: the last delivery shown (created at, RFC 3339, and id).
    #[serde(default)]
    antes_em: String,
    #[serde(default)]
    antes_id: String,
    /// How many failed deliveries the last resend replayed (shown once, after its redirect).
    #[serde(default, skip_serializing)]
    reenviadas: Option<u32>,
}

/// The repository's filter; a message when a field is wrong. Each value is one the log has an
/// index range for (a status of [`DELIVERY_STATUSES`], an event type of `EventType::ALL`, UTC
/// days): anything else is refused before any read, never turned into a scan.
fn filter(q: &Query) -> Result<DeliveryFilter, &'static str> {
    let status = match q.status.as_str() {
        "" => None,
        s if DELIVERY_STATUSES.contains(&s) => Some(s.to_owned()),
        _ => return Err("Status desconhecido."),
    };
    let event_type = match q.evento.as_str() {
        "" => None,
        e => Some(
            EventType::parse(e)
                .ok_or("Tipo de evento desconhecido.")?
                .as_str()
                .to_owned(),
        ),
    };
    let created_from = day(&q.de, false).map_err(|_| "Data inicial inválida (AAAA-MM-DD).")?;
    let created_until = day(&q.ate, true).map_err(|_| "Data final inválida (AAAA-MM-DD).")?;
    let before = match (q.antes_em.as_str(), q.antes_id.as_str()) {
        ("", "") => None,
        (at, id) => Some((
            DateTime::parse_from_rfc3339(at)
                .map_err(|_| "Página inválida.")?
                .with_timezone(&Utc),
            Uuid::parse_str(id).map_err(|_| "Página inválida.")?,
        )),
    };
    Ok(DeliveryFilter {
        status,
        event_type,
        created_from,
        created_until,
        before,
    })
}

/// What the page shows.
struct UrlPage {
    /// The URL (`None` once removed: its log stays readable).
    url: Option<WebhookUrl>,
    health: UrlHealth,
    /// The page's deliveries, and whether there are more.
    deliveries: Vec<DeliveryRecord>,
    more: bool,
}

pub async fn page(visit: Visit, path: web::Path<String>, query: web::Query<Query>) -> HttpResponse {
    let q = query.into_inner();
    let asked = filter(&q);
    let id = Uuid::parse_str(&path).ok();
    // a task-local: taken here, not on the blocking thread
    let limiter = delivery_http::rate_limit::current_limiter();
    let rows = visit.console.health_rows.clone();
    let wrong = asked.as_ref().err().copied();
    let outcome = visit
        .signed_in(
            "/console/webhooks/{id}/entregas",
            &[Scope::Webhooks, Scope::Auditor],
            None,
            move |s, call| {
                let id = id.ok_or(ApiError::NotFound(Resource::WebhookUrl))?;
                let company = call.company();
                let weight = rows.weight(company.id);
                if weight > 0 {
                    check_rate(limiter.as_deref(), call.caller.quota_of, weight)?;
                }
                let health = s.webhook_deliveries.health(company, id)?;
                rows.read(
                    company.id,
                    u64::from(health.deliveries) + u64::from(health.attempts),
                );
                let url = s
                    .webhook_urls
                    .list(company)?
                    .into_iter()
                    .find(|u| u.id == id);
                // a wrong filter: the health and the form again, no log read
                let f = asked.unwrap_or_default();
                let mut deliveries = if wrong.is_none() {
                    s.webhook_deliveries.page(company, id, &f, PAGE + 1)?
                } else {
                    Vec::new()
                };
                let more = deliveries.len() > PAGE as usize;
                deliveries.truncate(PAGE as usize);
                Ok(UrlPage {
                    url,
                    health,
                    deliveries,
                    more,
                })
            },
        )
        .await;
    let (signed, found) = match outcome {
        Ok(done) => done,
        Err(refusal) => return refusal.page(false),
    };
    let status = if wrong.is_some() {
        StatusCode::UNPROCESSABLE_ENTITY
    } else {
        StatusCode::OK
    };
    let main = view(&signed, &path, &q, wrong, &found);
    layout::page(status, "Saúde e entregas", Some(&signed), main)
}

fn view(signed: &SignedIn, url_id: &str, q: &Query, wrong: Option<&str>, p: &UrlPage) -> Markup {
    let manages = signed.scopes().contains(Scope::Webhooks);
    html! {
        @if let Some(n) = q.reenviadas {
            p role="status" {
                @match n {
                    0 => "Nenhuma entrega com falha no período: nada foi reenviado.",
                    1 => "1 entrega com falha reenviada.",
                    n => { (n) " entregas com falha reenviadas." }
                }
            }
        }
        @if let Some(url) = &p.url {
            p { "URL: " strong { (url.url) } }
            p { "Estado: " (url_state(url)) }
            p { "Eventos recebidos: " (url_events(url)) }
        } @else {
            p { "Esta URL foi removida; seu registro de entregas continua disponível." }
        }
        (health_view(&p.health))
        @if manages {
            @if let Some(url) = &p.url { (crate::url_forms::forms(signed, url)) }
        }
        h2 { "Entregas" }
        (filter_form(url_id, q, wrong))
        (deliveries_view(signed, url_id, &p.deliveries, manages))
        @if p.more {
            @if let Some(last) = p.deliveries.last() {
                p { a href=(next_page(url_id, q, last)) { "Próximas " (PAGE) } }
            }
        }
        (back_to_urls())
    }
}

/// The figures over 24 h and the last success.
fn health_view(h: &UrlHealth) -> Markup {
    let rate = (h.attempts > 0).then(|| {
        let percent = f64::from(h.successes) * 100.0 / f64::from(h.attempts);
        format!("{percent:.1}%").replace('.', ",")
    });
    let max = crate::home::thousands(u64::from(application::HEALTH_MAX_DELIVERIES));
    html! {
        h2 { "Saúde nas últimas 24 horas" }
        dl {
            dt { "Taxa de sucesso das tentativas" }
            dd {
                @match &rate {
                    Some(rate) => { (rate) " (" (h.successes) " de " (h.attempts) ")" }
                    None => "Nenhuma tentativa nas últimas 24 horas",
                }
            }
            dt { "Latência mediana" }
            dd {
                @match h.median_latency_ms {
                    Some(ms) => { (ms) " ms" }
                    None => "—",
                }
            }
            dt { "Último sucesso" }
            dd { (when_or_dash(h.last_success)) }
        }
        @if h.capped {
            p {
                "Mais de " (max) " entregas nas últimas 24 horas: as taxas são das " (max)
                " mais recentes."
            }
        }
    }
}

fn filter_form(url_id: &str, q: &Query, wrong: Option<&str>) -> Markup {
    html! {
        (alert(wrong))
        form method="get" action={ "/console/webhooks/" (url_id) "/entregas" } {
            label for="status" { "Status" }
            select id="status" name="status" {
                option value="" selected[q.status.is_empty()] { "Todos" }
                @for code in DELIVERY_STATUSES {
                    option value=(code) selected[q.status == code] {
                        (delivery_label(code).unwrap_or(code))
                    }
                }
            }
            label for="evento" { "Tipo de evento" }
            select id="evento" name="evento" {
                option value="" selected[q.evento.is_empty()] { "Todos" }
                @for t in EventType::ALL {
                    option value=(t.as_str()) selected[q.evento == t.as_str()] {
                        (event_label(t.as_str()))
                    }
                }
            }
            label for="de" { "De (dia de criação, UTC)" }
            input id="de" name="de" type="date" value=(q.de);
            label for="ate" { "Até (dia, incluído)" }
            input id="ate" name="ate" type="date" value=(q.ate);
            button type="submit" { "Filtrar" }
        }
    }
}

/// The link to the page after `last`, with the same filter.
fn next_page(url_id: &str, q: &Query, last: &DeliveryRecord) -> String {
    let mut next = q.clone();
    next.antes_em = last
        .created_at
        .to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    next.antes_id = last.id.to_string();
    let query = serde_urlencoded::to_string(&next).unwrap_or_default();
    format!("/console/webhooks/{url_id}/entregas?{query}")
}

/// A body on demand (`summary` names it), and whether it was cut at `shown` characters.
fn body_on_demand(summary: &str, body: &str, shown: usize) -> Markup {
    let cut = body.chars().count() >= shown;
    html! {
        details {
            summary { (summary) }
            pre { (body) }
            @if cut { p { "(cortado em " (crate::home::thousands(shown as u64)) " caracteres)" } }
        }
    }
}

/// The request's body on demand (the event as sent: the CPF masked in it).
fn request_body(body: &str) -> Markup {
    body_on_demand("Ver", body, ports::REQUEST_BODY_SHOWN)
}

/// One attempt: when, the receiver's status, the latency, why it failed, and the start of what
/// the receiver answered on demand (its text, escaped by the template like every value).
fn attempt_view(a: &DeliveryAttempt) -> Markup {
    html! {
        (when(a.at)) ": " (answer(a.http_status)) ", " (a.latency_ms) " ms"
        @if let Some(e) = &a.error { " (" (e) ")" }
        @if let Some(body) = &a.response_body {
            (body_on_demand("Resposta do receptor", body, ports::RESPONSE_BODY_KEPT))
        }
    }
}

fn deliveries_view(
    signed: &SignedIn,
    url_id: &str,
    deliveries: &[DeliveryRecord],
    manages: bool,
) -> Markup {
    html! {
        @if deliveries.is_empty() {
            p { "Nenhuma entrega com estes filtros." }
        } @else {
            (scroll_box("Entregas", html! {
                table {
                    caption { "Entregas, da mais recente à mais antiga" }
                    thead {
                        tr {
                            th scope="col" { "Evento" }
                            th scope="col" { "Status" }
                            th scope="col" { "Criada em" }
                            th scope="col" { "Próxima tentativa" }
                            th scope="col" { "Tentativas" }
                            th scope="col" { "Corpo enviado" }
                            th scope="col" { "Ações" }
                        }
                    }
                    tbody {
                        @for d in deliveries {
                            tr {
                                td { (event_label(&d.event_type)) }
                                td { (delivery_badge(&d.status)) }
                                td { (when(d.created_at)) }
                                td {
                                    @if d.status == "pendente" { (when_or_dash(d.next_attempt_at)) }
                                    @else { "—" }
                                }
                                td {
                                    ul {
                                        @for a in &d.attempts {
                                            li { (attempt_view(a)) }
                                        }
                                    }
                                }
                                td { (request_body(&d.request_body)) }
                                td {
                                    @if manages {
                                        (post_form(
                                            &format!(
                                                "/console/webhooks/{url_id}/entregas/{}/reenviar",
                                                d.id
                                            ),
                                            &signed.csrf,
                                            html! {},
                                            "Reenviar",
                                        ))
                                    }
                                }
                            }
                        }
                    }
                }
            }))
        }
    }
}
