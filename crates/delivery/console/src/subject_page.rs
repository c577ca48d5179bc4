//! The subject's page (issue 38, part 2; `auditor` scope), `GET /console/titulares/<token>`:
//! from one CPF search, every use case of the subject in this company by title with its current
//! status, the timeline of every request (created, answered, revoked, expired; by whom; the
//! access modality and the consenting company), who read the subject's data (the access log),
//! and the evidence bundle to download (`evidence_bundle`).
//!
//! Bounded per view: 100 requests a page (the API's subject export, with their histories) and 50
//! access-log rows a page, found by the index of the rows' request ids (never the company's reads
//! of a period). Charged as the chart is: besides the page's one request, one request of the
//! company's quota per 1,000 rows its previous view read. The view is recorded in the access log.

use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use application::SubjectExportQuery;
use chrono::{DateTime, Utc};
use delivery_http::access_log::record_read;
use delivery_http::blocking::check_rate;
use delivery_http::dto::access_log::Acesso;
use delivery_http::dto::consent_read::Solicitacao;
use delivery_http::ApiError;
use domain::Scope;
use maud::{html, Markup};
use ports::ListCursor;
use serde::Deserialize;
use uuid::Uuid;

use crate::human::{access_mode_label, cause_label, route_label, status_badge, when};
use crate::layout::{self, scroll_box};
use crate::session::SESSION_COOKIE;
use crate::subjects::{form, TITLE};
use crate::visit::Visit;

/// The subject's requests a page shows (oldest first).
const PAGE_SIZE: u32 = 100;
/// The access-log rows a page shows (newest first).
const ACCESS_PAGE: u32 = 50;
/// The page's template, what the access log records.
pub const ROUTE: &str = "/console/titulares/{token}";
const EXPIRED: &str =
    "Esta busca expirou ou não é desta sessão: busque o CPF de novo (o endereço da busca vale 15 minutos, só para quem a fez).";

#[derive(Deserialize, Default)]
pub struct Position {
    /// The requests' page after this one (the export's cursor; empty: the first).
    #[serde(default)]
    cursor: String,
    /// The access log's page: rows strictly older than this instant and id.
    #[serde(default)]
    acessos_antes_em: String,
    #[serde(default)]
    acessos_antes_id: String,
}

/// What a view read.
pub(crate) struct Subject {
    pub items: Vec<Solicitacao>,
    pub titles: BTreeMap<String, Option<String>>,
    pub next_cursor: Option<String>,
    reads: Vec<Acesso>,
    older: Option<ListCursor>,
}

enum Lookup {
    Found(Subject),
    /// A made-up, expired, another session's or another company's token.
    Unknown,
    /// A cursor that is not one the page wrote.
    BadPosition,
}

/// The access log's position from the query: `Err` when it was given and is not one.
fn access_position(p: &Position) -> Result<Option<ListCursor>, ()> {
    if p.acessos_antes_em.is_empty() && p.acessos_antes_id.is_empty() {
        return Ok(None);
    }
    let at = DateTime::parse_from_rfc3339(&p.acessos_antes_em).map_err(|_| ())?;
    let id = Uuid::parse_str(&p.acessos_antes_id).map_err(|_| ())?;
    Ok(Some(ListCursor {
        created_at: at.with_timezone(&Utc),
        id,
    }))
}

/// The titles of the use cases of `templates`: one read per distinct template (at most a page's
/// worth of reads, whatever the subject's history).
pub(crate) fn titles_of<'a>(
    s: &application::Services,
    company: &domain::Company,
    templates: impl IntoIterator<Item = &'a str>,
) -> Result<BTreeMap<String, Option<String>>, ApiError> {
    let mut titles = BTreeMap::new();
    for template in templates {
        if !titles.contains_key(template) {
            let title = s.list_use_cases.title_of(company, template)?;
            titles.insert(template.to_owned(), title);
        }
    }
    Ok(titles)
}

/// `GET /console/titulares/{token}`: the subject's page.
pub async fn page(
    visit: Visit,
    path: web::Path<String>,
    query: web::Query<Position>,
) -> HttpResponse {
    let token = path.into_inner();
    let position = query.into_inner();
    let cookie = visit.cookie(SESSION_COOKIE).unwrap_or_default();
    let searches = visit.console.searches.clone();
    let rows = visit.console.subject_rows.clone();
    // a task-local: taken here, not on the blocking thread
    let limiter = delivery_http::rate_limit::current_limiter();
    let cursor = Some(position.cursor.trim().to_owned()).filter(|c| !c.is_empty());
    let before = access_position(&position);
    let outcome = visit
        .signed_in(ROUTE, &[Scope::Auditor], None, move |s, call| {
            let company = call.company();
            let Some(cpf) = searches.find(company.id, &cookie, &token)? else {
                return Ok(Lookup::Unknown);
            };
            let Ok(before) = before else {
                return Ok(Lookup::BadPosition);
            };
            let weight = rows.weight(company.id);
            if weight > 0 {
                check_rate(limiter.as_deref(), call.caller.quota_of, weight)?;
            }
            let query = SubjectExportQuery {
                subject_cpf: Some(cpf),
                cursor,
                limit: Some(PAGE_SIZE),
            };
            let page = match s.export_subject.execute(company, query) {
                Ok(page) => page,
                Err(e) => {
                    return match ApiError::from(e) {
                        ApiError::Validation(_) => Ok(Lookup::BadPosition),
                        e => Err(e),
                    }
                }
            };
            let items: Vec<Solicitacao> = page
                .items
                .into_iter()
                .map(|r| Solicitacao::from_domain(r.request, false, Some(r.history)))
                .collect();
            let ids: Vec<Uuid> = items.iter().map(|i| i.id).collect();
            // the reads before this one: the view is recorded after them, as the access log's
            // own page is
            let (reads, older) =
                s.personal_data_accesses
                    .of_requests(company, &ids, before, ACCESS_PAGE)?;
            record_read(s, call, items.iter().map(|i| (i.id, i.hash.as_str())))?;
            let titles = titles_of(s, company, items.iter().map(|i| i.template_id.as_str()))?;
            let history: usize = items
                .iter()
                .map(|i| i.history.iter().flatten().count())
                .sum();
            rows.read(company.id, (items.len() + history + reads.len()) as u64);
            Ok(Lookup::Found(Subject {
                items,
                titles,
                next_cursor: page.next_cursor,
                reads: reads.into_iter().map(Acesso::from).collect(),
                older,
            }))
        })
        .await;
    let token = visit
        .req
        .match_info()
        .get("token")
        .unwrap_or_default()
        .to_owned();
    match outcome {
        Ok((signed, Lookup::Found(subject))) => layout::page(
            StatusCode::OK,
            "Titular",
            Some(&signed),
            view(&token, &position, &subject),
        ),
        Ok((signed, Lookup::Unknown)) => layout::page(
            StatusCode::NOT_FOUND,
            TITLE,
            Some(&signed),
            form(&signed, Some(EXPIRED)),
        ),
        Ok((signed, Lookup::BadPosition)) => layout::page(
            StatusCode::UNPROCESSABLE_ENTITY,
            TITLE,
            Some(&signed),
            form(
                &signed,
                Some("Página inválida: volte à primeira página da busca."),
            ),
        ),
        Err(refusal) => refusal.page(false),
    }
}

/// The use case's title, or its template id when the company no longer has it.
pub(crate) fn title<'a>(subject: &'a Subject, item: &'a Solicitacao) -> &'a str {
    subject
        .titles
        .get(&item.template_id)
        .and_then(Option::as_deref)
        .unwrap_or(&item.template_id)
}

fn view(token: &str, position: &Position, subject: &Subject) -> Markup {
    let base = format!("/console/titulares/{token}");
    if subject.items.is_empty() {
        return html! {
            p role="status" { "Nenhuma solicitação deste titular na sua empresa." }
            p { a href="/console/titulares" { "Nova busca" } }
        };
    }
    html! {
        p { "Titular (CPF): " (subject.items[0].subject_cpf) }
        p {
            a href={ (base) "/pacote" } download {
                "Baixar o pacote de evidências (ZIP: recibos, registros, provas, checkpoint)"
            }
            " · " a href="/console/titulares" { "Nova busca" }
        }
        h2 { "Casos de uso" }
        (use_cases(subject))
        h2 { "Linha do tempo" }
        @for item in &subject.items { (timeline(subject, item)) }
        @if let Some(cursor) = &subject.next_cursor {
            p {
                a href={ (base) "?" (query(&[("cursor", cursor.as_str())])) } {
                    "Próximas " (PAGE_SIZE) " solicitações"
                }
            }
        }
        h2 { "Quem leu os dados deste titular" }
        (accesses(&base, position, subject))
    }
}

fn query(pairs: &[(&str, &str)]) -> String {
    serde_urlencoded::to_string(pairs).unwrap_or_default()
}

/// Each use case once, with the status of its newest request.
fn use_cases(subject: &Subject) -> Markup {
    // oldest first: the last one seen of a template is its newest request
    let mut by_template: BTreeMap<&str, (&Solicitacao, usize)> = BTreeMap::new();
    for item in &subject.items {
        let entry = by_template
            .entry(item.template_id.as_str())
            .or_insert((item, 0));
        entry.0 = item;
        entry.1 += 1;
    }
    html! {
        (scroll_box("Casos de uso do titular", html! {
            table {
                caption { "Cada caso de uso com o status da sua solicitação mais recente" }
                thead {
                    tr {
                        th scope="col" { "Caso de uso" }
                        th scope="col" { "Status atual" }
                        th scope="col" { "Solicitações" }
                        th scope="col" { "Mais recente criada em" }
                    }
                }
                tbody {
                    @for (latest, count) in by_template.values() {
                        tr {
                            td { (title(subject, latest)) }
                            td { (status_badge(&latest.status)) }
                            td { (count) }
                            td { (when(latest.created_at)) }
                        }
                    }
                }
            }
        }))
    }
}

/// What a change to `to` was, in words.
fn event_label(from: Option<&str>, to: &str) -> &'static str {
    match (from, to) {
        (None, _) => "Criada",
        (_, "ativo") => "Consentida",
        (_, "recusado") => "Recusada",
        (_, "revogado") => "Revogada",
        (_, "expirado") => "Expirada",
        (_, "pendente") => "Pendente",
        _ => "Mudança de status",
    }
}

/// A request's timeline: its changes, each with who caused it.
fn timeline(subject: &Subject, item: &Solicitacao) -> Markup {
    let history: Vec<_> = item.history.iter().flatten().collect();
    // expired by its date before the job wrote it: the system's, at the expiry
    let expired_unwritten =
        item.status == "expirado" && !history.iter().any(|h| h.to == "expirado");
    html! {
        section aria-label={ "Solicitação " (item.id) } {
            h3 { (title(subject, item)) " " (status_badge(&item.status)) }
            dl {
                dt { "Solicitação" }
                dd { a href={ "/console/solicitacoes/" (item.id) } { (item.id) } }
                dt { "Modalidade de acesso" }
                dd {
                    (access_mode_label(&item.access_mode))
                    @if let Some(cnpj) = &item.consenting_cnpj { " (CNPJ anuente " (cnpj) ")" }
                }
                dt { "Respondida pelo titular em" }
                dd {
                    @match item.subject_answered_at {
                        Some(at) => (when(at)),
                        None => "—",
                    }
                }
            }
            (scroll_box(&format!("Linha do tempo da solicitação {}", item.id), html! {
                table {
                    caption { "Linha do tempo, da mais antiga à mais recente" }
                    thead {
                        tr {
                            th scope="col" { "Quando" }
                            th scope="col" { "O quê" }
                            th scope="col" { "Por quem" }
                            th scope="col" { "Detalhes" }
                        }
                    }
                    tbody {
                        @for h in &history {
                            tr {
                                td { (when(h.at)) }
                                td { (event_label(h.from.as_deref(), &h.to)) }
                                td { (cause_label(&h.cause)) }
                                td {
                                    @if h.cause == "pgcc" && matches!(h.to.as_str(), "ativo" | "recusado") {
                                        @if let Some(at) = item.subject_answered_at {
                                            "O titular respondeu em " (when(at)) ". "
                                        }
                                    }
                                    @if let Some(reason) = &h.reason { "Motivo: " (reason) }
                                }
                            }
                        }
                        @if expired_unwritten {
                            tr {
                                td { (when(item.consent_expires_at)) }
                                td { "Expirada" }
                                td { (cause_label("expiracao")) }
                                td { "O prazo do consentimento passou." }
                            }
                        }
                    }
                }
            }))
        }
    }
}

/// Who read the subject's data, newest first, with the link to older reads.
fn accesses(base: &str, position: &Position, subject: &Subject) -> Markup {
    let older = subject.older.map(|c| {
        let (at, id) = (c.created_at.to_rfc3339(), c.id.to_string());
        query(&[
            ("cursor", position.cursor.as_str()),
            ("acessos_antes_em", at.as_str()),
            ("acessos_antes_id", id.as_str()),
        ])
    });
    html! {
        @if subject.reads.is_empty() {
            p role="status" { "Nenhuma leitura registrada das solicitações desta página." }
        } @else {
            (scroll_box("Leituras dos dados do titular", html! {
                table {
                    caption {
                        "Leituras dos dados das solicitações desta página, da mais recente à mais antiga"
                    }
                    thead {
                        tr {
                            th scope="col" { "Quando" }
                            th scope="col" { "Chave ou sessão" }
                            th scope="col" { "Pessoa" }
                            th scope="col" { "O que foi lido" }
                        }
                    }
                    tbody {
                        @for a in &subject.reads {
                            tr {
                                td { (when(a.at)) }
                                td { (a.api_key_id) }
                                td {
                                    @if let Some(email) = &a.person_email { (email) " " }
                                    @if let Some(sub) = &a.person_sub { "(" (sub) ")" }
                                    @if a.person_sub.is_none() { "—" }
                                }
                                td { (route_label(&a.route)) }
                            }
                        }
                    }
                }
            }))
        }
        @if let Some(older) = older {
            p { a href={ (base) "?" (older) } { "Leituras mais antigas" } }
        }
    }
}
