//! `GET /console` signed in: the home page that informs (issue 38, part 6). For everyone, the
//! PGCC's open incident; for the DPO (`auditor`), the company's requests by status, the consents
//! expiring in 30 days, the revocations of the last 7 days and the integrity incidents; for the
//! operator (`webhooks`, and the DPO who reads their pages), the disabled webhook URLs with why.
//!
//! Bounded and charged as the chart is (docs/console.md, "The home page's reads"): each figure
//! is a capped count over one index range (at most [`application::SUMMARY_CAP`] + 1 entries), a
//! company's figures are kept [`SUMMARY_SECONDS`] in this process (a view in between reads
//! nothing), and a refresh takes, besides the page's one request, one request of the company's
//! quota per [`crate::chart::ROWS_PER_REQUEST`] entries its previous refresh read, before reading.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use chrono::{DateTime, Utc};
use delivery_http::blocking::check_rate;
use domain::{CompanyId, PgccHealth, PgccHealthCode, Scope, WebhookUrl};
use maud::{html, Markup};
use ports::RequestSummary;

use crate::human::{disabled_reason_label, health_label, status_badge, when};
use crate::layout::{self, scroll_box};
use crate::refusal::Refusal;
use crate::visit::{SignedIn, Visit};

/// How long a company's figures are kept before they are read again, in seconds.
pub const SUMMARY_SECONDS: u64 = 60;
/// Companies whose figures are kept (then all are forgotten: each is read again).
const REMEMBERED: usize = 10_000;

/// A company's figures: when they were read (the process's clock, and the instant shown), and
/// the figures.
type Kept = (Instant, DateTime<Utc>, RequestSummary);

/// Each company's latest figures and when they were read, in this process.
#[derive(Default)]
pub struct Summaries {
    kept: Mutex<HashMap<CompanyId, Kept>>,
}

impl Summaries {
    /// The company's figures when read less than [`SUMMARY_SECONDS`] ago.
    fn fresh(&self, company: CompanyId) -> Option<(DateTime<Utc>, RequestSummary)> {
        let kept = self.lock();
        let (read, at, summary) = kept.get(&company)?;
        (read.elapsed() < Duration::from_secs(SUMMARY_SECONDS)).then(|| (*at, summary.clone()))
    }

    fn keep(&self, company: CompanyId, at: DateTime<Utc>, summary: RequestSummary) {
        let mut kept = self.lock();
        if kept.len() >= REMEMBERED && !kept.contains_key(&company) {
            kept.clear();
        }
        kept.insert(company, (Instant::now(), at, summary));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<CompanyId, Kept>> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// What the home page shows, each part read only for the scopes that see it.
struct Home {
    pgcc: PgccHealth,
    /// The figures and when they were read (`auditor`).
    summary: Option<(DateTime<Utc>, RequestSummary)>,
    /// The company's disabled URLs (`webhooks`, `auditor`).
    disabled: Option<Vec<WebhookUrl>>,
}

/// The signed-in home page; [`Refusal::NoSession`] when there is no session (the caller shows
/// the sign-in form).
pub async fn page(visit: &Visit) -> Result<HttpResponse, Refusal> {
    // a task-local: taken here, not on the blocking thread
    let limiter = delivery_http::rate_limit::current_limiter();
    let summaries = visit.console.summaries.clone();
    let rows = visit.console.home_rows.clone();
    let (signed, home) = visit
        .signed_in("/console", &[], None, move |s, call| {
            let scopes = call.caller.scopes;
            let dpo = scopes.contains(Scope::Auditor);
            let company = call.company().id;
            let summary = if !dpo {
                None
            } else if let Some(kept) = summaries.fresh(company) {
                Some(kept)
            } else {
                let weight = rows.weight(company);
                if weight > 0 {
                    check_rate(limiter.as_deref(), call.caller.quota_of, weight)?;
                }
                let now = Utc::now();
                let summary = s.count_consent_requests.summary(call.company(), now)?;
                rows.read(company, summary.rows_read);
                summaries.keep(company, now, summary.clone());
                Some((now, summary))
            };
            // a company has at most `webhooks.max_urls_per_company` URLs: a bounded list
            let disabled = if dpo || scopes.contains(Scope::Webhooks) {
                let urls = s.webhook_urls.list(call.company())?;
                Some(
                    urls.into_iter()
                        .filter(|u| u.disabled_at.is_some())
                        .collect(),
                )
            } else {
                None
            };
            Ok(Home {
                pgcc: s.pgcc_status.execute()?,
                summary,
                disabled,
            })
        })
        .await?;
    let main = view(&signed, &home);
    Ok(layout::page(StatusCode::OK, "Início", Some(&signed), main))
}

fn view(signed: &SignedIn, home: &Home) -> Markup {
    let scopes = signed.scopes();
    let dpo = scopes.contains(Scope::Auditor);
    let operator = scopes.contains(Scope::Webhooks) || dpo;
    // issue 37, part 4: who imports has the imports' page (docs/imports.md)
    let importer = scopes.contains(Scope::Integration);
    let names = scopes.names();
    let scope_names: Vec<&str> = names.iter().map(|s| crate::human::scope_label(s)).collect();
    html! {
        @if let Some(person) = signed.person() {
            p {
                "Empresa: " strong { (signed.call.caller.company.name) } ". "
                "Você: " strong { (person.email.as_deref().unwrap_or(&person.sub)) } ". "
                "Acesso dado pelos seus papéis: "
                @if scope_names.is_empty() { "leitura" } @else { (scope_names.join(", ")) } "."
            }
        } @else {
            p {
                "Empresa: " strong { (signed.call.caller.company.name) } ". "
                "Escopos da chave: " (scope_names.join(", ")) "."
            }
        }
        @if let Some((at, summary)) = &home.summary { (summary_view(*at, summary)) }
        (pgcc_view(&home.pgcc))
        @if let Some(disabled) = &home.disabled { (disabled_view(disabled)) }
        @if dpo {
            section aria-labelledby="dpo" {
                h2 id="dpo" { "Encarregado de dados" }
                p {
                    a href="/console/titulares" { "Solicitações de um titular" }
                    ": busca pelo CPF; cada solicitação abre com status, histórico, caso de uso e \
                     prova de coleta (cada busca e cada abertura ficam no registro de acessos)."
                }
                p {
                    a href="/console/acessos" { "Registro de acessos" }
                    ": quem leu dados pessoais, por chave e período."
                }
                p {
                    a href="/console/painel" { "Painel" }
                    ": solicitações criadas por dia, por status e caso de uso."
                }
            }
        }
        @if operator {
            section aria-labelledby="op" {
                h2 id="op" { "Operação" }
                p { a href="/console/webhooks" { "Webhook URLs da empresa" } }
            }
        }
        @if importer || dpo {
            section aria-labelledby="importacoes" {
                h2 id="importacoes" { "Importações" }
                p {
                    a href="/console/importacoes" { "Importações de consentimentos" }
                    @if importer {
                        ": envie um arquivo CSV ou JSON Lines e acompanhe o registro no PGCC e os \
                         erros por linha."
                    } @else {
                        ": o andamento e os erros por linha das importações da empresa."
                    }
                }
            }
        }
        @if !dpo && !operator && !importer {
            p { "A chave desta sessão não dá acesso a nenhuma página do console." }
        }
    }
}

/// A figure as people write it (`12.345`), or "mais de 10.000" past the cap.
pub fn figure(n: u64) -> String {
    let cap = u64::from(application::SUMMARY_CAP);
    if n > cap {
        return format!("mais de {}", thousands(cap));
    }
    thousands(n)
}

/// `n` with a dot between each group of three digits (Portuguese).
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('.');
        }
        out.push(c);
    }
    out
}

fn summary_view(at: DateTime<Utc>, s: &RequestSummary) -> Markup {
    html! {
        section aria-labelledby="resumo" {
            h2 id="resumo" { "Resumo" }
            (scroll_box("Solicitações por status", html! {
                table {
                    caption { "Solicitações confirmadas por status atual" }
                    thead { tr { th scope="col" { "Status" } th scope="col" { "Solicitações" } } }
                    tbody {
                        @for (status, n) in &s.by_status {
                            tr { th scope="row" { (status_badge(status.as_str())) } td { (figure(*n)) } }
                        }
                    }
                }
            }))
            dl {
                dt { "Consentimentos que expiram nos próximos 30 dias" }
                dd { (figure(s.expiring_in_30_days)) }
                dt { "Revogações nos últimos 7 dias" }
                dd { (figure(s.revoked_in_7_days)) }
                dt { "Incidentes de integridade (solicitações que a PGCC não conhece)" }
                dd { (figure(s.integrity_incidents)) }
            }
            p {
                "Contagens de " (when(at)) ", refeitas no máximo uma vez por minuto; cada uma \
                 para em 10.000."
            }
        }
    }
}

fn pgcc_view(h: &PgccHealth) -> Markup {
    html! {
        section aria-labelledby="pgcc" {
            h2 id="pgcc" { "Incidentes da PGCC" }
            @if h.code == PgccHealthCode::Ok {
                // since when: after an incident, the instant it ended
                p {
                    "Nenhum incidente aberto: a PGCC está disponível desde "
                    (when(h.detection_time)) "."
                }
            } @else {
                p {
                    "1 incidente aberto: " strong { (health_label(h.code.as_str())) }
                    ", desde " (when(h.detection_time)) ". "
                    a href="/console/pgcc" { "Detalhes da saúde da PGCC" }
                }
            }
        }
    }
}

fn disabled_view(disabled: &[WebhookUrl]) -> Markup {
    html! {
        section aria-labelledby="desativadas" {
            h2 id="desativadas" { "Webhook URLs desativadas" }
            @if disabled.is_empty() {
                p { "Nenhuma webhook URL desativada." }
            } @else {
                ul {
                    @for w in disabled {
                        li {
                            (w.url) ": desativada em "
                            @if let Some(at) = w.disabled_at { (when(at)) }
                            " (motivo: "
                            (w.disabled_reason.as_deref().map_or("—", disabled_reason_label))
                            "). "
                            a href={ "/console/webhooks/" (w.id) "/entregas" } { "Saúde e entregas" }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_written_with_dots_and_capped() {
        assert_eq!(figure(0), "0");
        assert_eq!(figure(999), "999");
        assert_eq!(figure(1000), "1.000");
        assert_eq!(figure(10_000), "10.000");
        assert_eq!(figure(10_001), "mais de 10.000");
        assert_eq!(thousands(1_234_567), "1.234.567");
    }
}
