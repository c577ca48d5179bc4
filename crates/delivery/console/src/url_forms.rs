//! The operator's forms on webhook URLs (issue 38, part 5; `webhooks` scope, CSRF): add a URL,
//! change the event types a URL receives, resend every failed delivery since a time. Each runs the
//! application service the API runs (`WebhookUrls::register_choosing`, `choose_events`,
//! `WebhookDeliveries::replay_failed_since`, which log the action as the API's calls do): no
//! second path.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use application::{ChooseEventsError, DeliveryLogError, RegisterWebhookError};
use chrono::{NaiveDateTime, TimeZone, Utc};
use chrono_tz::America::Sao_Paulo;
use delivery_http::ApiError;
use domain::{EventType, Scope, WebhookUrl};
use maud::{html, Markup};

use crate::home::thousands;
use crate::human::event_label;
use crate::layout::{self, alert, post_form};
use crate::operator::{back_to_urls, url_form};
use crate::visit::{csrf_of, see_other, SignedIn, Visit};

/// A form's fields, in order (a field may repeat: the event types' checkboxes).
type Fields = Vec<(String, String)>;

fn fields(body: &[u8]) -> Fields {
    serde_urlencoded::from_bytes(body).unwrap_or_default()
}

fn field<'a>(fields: &'a Fields, name: &str) -> &'a str {
    fields
        .iter()
        .find(|(n, _)| n == name)
        .map_or("", |(_, v)| v.as_str())
}

/// The selection a form sent: `None` (every type, ones added later too) when `selecao` is
/// `todos`; otherwise the checked `eventos` (none checked: the service's message).
fn selection(fields: &Fields) -> Option<Vec<String>> {
    if field(fields, "selecao") == "todos" {
        return None;
    }
    Some(
        fields
            .iter()
            .filter(|(n, _)| n == "eventos")
            .map(|(_, v)| v.clone())
            .collect(),
    )
}

/// The radio buttons "every type" / "only these" and a checkbox per subscribable type,
/// checked as `url` receives them (every type: none checked).
fn events_fields(url: Option<&WebhookUrl>) -> Markup {
    let chosen = url.and_then(|u| u.events.types());
    html! {
        fieldset {
            legend { "Eventos" }
            label.opcao {
                input type="radio" name="selecao" value="todos" checked[chosen.is_none()];
                "Todos os tipos (também os criados depois)"
            }
            label.opcao {
                input type="radio" name="selecao" value="escolhidos" checked[chosen.is_some()];
                "Só os tipos marcados:"
            }
            @for t in EventType::SUBSCRIBABLE {
                label.opcao {
                    input type="checkbox" name="eventos" value=(t.as_str())
                        checked[chosen.is_some_and(|c| c.contains(&t))];
                    (event_label(t.as_str()))
                }
            }
        }
    }
}

/// The URL page's forms for a `webhooks` key: the event types, the resend of failed deliveries.
pub fn forms(signed: &SignedIn, url: &WebhookUrl) -> Markup {
    html! {
        details {
            summary { "Mudar os eventos recebidos" }
            (post_form(
                &format!("/console/webhooks/{}/eventos", url.id),
                &signed.csrf,
                events_fields(Some(url)),
                "Salvar os eventos",
            ))
        }
        h2 { "Reenviar as entregas com falha" }
        (post_form(
            &format!("/console/webhooks/{}/reenviar-falhas", url.id),
            &signed.csrf,
            html! {
                label for="desde" { "Criadas desde (horário de Brasília)" }
                input id="desde" name="desde" type="datetime-local" required;
                p {
                    "Cada entrega com falha criada desde então volta a ser enviada, com o mesmo \
                     evento; no máximo "
                    (thousands(u64::from(application::REPLAY_FAILED_MAX)))
                    " por vez (repita para as demais)."
                }
            },
            "Reenviar as entregas com falha",
        ))
    }
}

/// `POST /console/webhooks/{id}/eventos`: the URL receives the types chosen, back to its page;
/// a wrong choice (none checked) is the service's message, 422.
pub async fn choose_events(
    visit: Visit,
    path: web::Path<String>,
    body: web::Bytes,
) -> HttpResponse {
    let chosen = selection(&fields(&body));
    let route = "/console/webhooks/{id}/eventos";
    let outcome = url_form(&visit, &path, &body, route, move |s, company, id| {
        match s.webhook_urls.choose_events(company, id, chosen.as_deref()) {
            Ok(_) => Ok(Ok(())),
            Err(ChooseEventsError::Invalid(errors)) => Ok(Err(errors)),
            Err(e) => Err(ApiError::from(e)),
        }
    })
    .await;
    match outcome {
        Ok((_, Ok(()))) => see_other(&format!("/console/webhooks/{}/entregas", path.as_str())),
        Ok((signed, Err(errors))) => {
            let messages: Vec<String> = errors.0.into_iter().map(|e| e.message).collect();
            let main = html! {
                (alert(Some(&messages.join(" "))))
                p { a href={ "/console/webhooks/" (path.as_str()) "/entregas" } { "Voltar à URL" } }
            };
            layout::page(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Eventos não alterados",
                Some(&signed),
                main,
            )
        }
        Err(refusal) => refusal.page(true),
    }
}

/// `desde` (`AAAA-MM-DDTHH:MM`, Brasília time, as a `datetime-local` field sends it) as an
/// instant.
fn since(raw: &str) -> Option<chrono::DateTime<Utc>> {
    let local = NaiveDateTime::parse_from_str(raw.trim(), "%Y-%m-%dT%H:%M")
        .or_else(|_| NaiveDateTime::parse_from_str(raw.trim(), "%Y-%m-%dT%H:%M:%S"))
        .ok()?;
    // a time skipped by a clock change has no instant; one repeated, the earlier
    Sao_Paulo
        .from_local_datetime(&local)
        .earliest()
        .map(|at| at.with_timezone(&Utc))
}

/// `POST /console/webhooks/{id}/reenviar-falhas`: the URL's failed deliveries created since
/// `desde` replayed (at most `application::REPLAY_FAILED_MAX`), back to its page saying how
/// many. A disabled URL: 409 naming the Reativar button, nothing replayed.
pub async fn resend_failed(
    visit: Visit,
    path: web::Path<String>,
    body: web::Bytes,
) -> HttpResponse {
    let from = since(field(&fields(&body), "desde"));
    let route = "/console/webhooks/{id}/reenviar-falhas";
    let outcome = url_form(&visit, &path, &body, route, move |s, company, id| {
        let Some(from) = from else {
            return Ok(None);
        };
        match s.webhook_deliveries.replay_failed_since(company, id, from) {
            Ok(n) => Ok(Some(n)),
            // the API's message names its route; the page names its button
            Err(DeliveryLogError::UrlDisabled) => Err(ApiError::Conflict(
                "A webhook URL está desativada; reative-a (botão Reativar, na lista de \
                 webhooks) antes de reenviar."
                    .to_owned(),
            )),
            Err(e) => Err(ApiError::from(e)),
        }
    })
    .await;
    match outcome {
        Ok((_, Some(n))) => see_other(&format!(
            "/console/webhooks/{}/entregas?reenviadas={n}",
            path.as_str()
        )),
        Ok((signed, None)) => {
            let main = html! {
                (alert(Some("Data e hora inválidas (dd/mm/aaaa HH:mm).")))
                p { a href={ "/console/webhooks/" (path.as_str()) "/entregas" } { "Voltar à URL" } }
            };
            layout::page(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Nada reenviado",
                Some(&signed),
                main,
            )
        }
        Err(refusal) => refusal.page(true),
    }
}

/// The form of a new URL, with what was typed and what was wrong.
fn new_url_form(signed: &SignedIn, typed: &str, errors: &[String]) -> Markup {
    html! {
        @if !errors.is_empty() { (alert(Some(&errors.join(" ")))) }
        p {
            "A URL recebe os eventos da empresa por HTTPS, assinados com um segredo mostrado uma \
             única vez, na resposta."
        }
        (post_form(
            "/console/webhooks/nova",
            &signed.csrf,
            html! {
                label for="url" { "URL (https://...)" }
                input id="url" name="url" type="url" value=(typed) required size="60";
                (events_fields(None))
            },
            "Adicionar a URL",
        ))
        (back_to_urls())
    }
}

/// `GET /console/webhooks/nova` (`webhooks`): the form.
pub async fn new_url(visit: Visit) -> HttpResponse {
    match visit
        .signed_in(
            "/console/webhooks/nova",
            &[Scope::Webhooks],
            None,
            |_, _| Ok(()),
        )
        .await
    {
        Ok((signed, ())) => {
            let main = new_url_form(&signed, "", &[]);
            layout::page(StatusCode::OK, "Nova webhook URL", Some(&signed), main)
        }
        Err(refusal) => refusal.page(false),
    }
}

/// `POST /console/webhooks/nova` (`webhooks`, CSRF): registers the URL as
/// `POST /api/webhook-urls` does and shows its signing secret once (`no-store`); a wrong URL or
/// choice of events, or a URL the company already has: the form again (422, 409) with why.
pub async fn add_url(visit: Visit, body: web::Bytes) -> HttpResponse {
    let sent = fields(&body);
    let csrf = csrf_of(&body);
    let typed = field(&sent, "url").trim().to_owned();
    let chosen = selection(&sent);
    let url = typed.clone();
    let outcome = visit
        .signed_in(
            "/console/webhooks/nova",
            &[Scope::Webhooks],
            Some(&csrf),
            move |s, call| match s.webhook_urls.register_choosing(
                call.company(),
                &url,
                chosen.as_deref(),
            ) {
                Ok(registered) => Ok(Ok(registered)),
                Err(RegisterWebhookError::Invalid(errors)) => Ok(Err((
                    StatusCode::UNPROCESSABLE_ENTITY,
                    errors.0.into_iter().map(|e| e.message).collect(),
                ))),
                Err(RegisterWebhookError::Duplicate) => Ok(Err((
                    StatusCode::CONFLICT,
                    vec!["A empresa já tem esta URL de webhook registrada.".to_owned()],
                ))),
                Err(e) => Err(ApiError::from(e)),
            },
        )
        .await;
    let (signed, registered) = match outcome {
        Ok((signed, Ok(registered))) => (signed, registered),
        Ok((signed, Err((status, errors)))) => {
            let errors: Vec<String> = errors;
            let main = new_url_form(&signed, &typed, &errors);
            return layout::page(status, "Nova webhook URL", Some(&signed), main);
        }
        Err(refusal) => return refusal.page(true),
    };
    let main = html! {
        p role="status" {
            "URL adicionada: " strong { (registered.webhook.url) } ". Copie o segredo de \
             assinatura agora: ele não será mostrado de novo."
        }
        p {
            label for="segredo" { "Segredo" } " "
            input id="segredo" type="text" readonly value=(registered.secret) size="60";
        }
        p {
            a href={ "/console/webhooks/" (registered.webhook.id) "/entregas" } {
                "Saúde e entregas da nova URL"
            }
        }
        (back_to_urls())
    };
    layout::page(StatusCode::OK, "URL adicionada", Some(&signed), main)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_typed_in_brasilia_is_its_utc_instant() {
        // Brasília is UTC-3 (no daylight saving since 2019)
        assert_eq!(
            since("2026-12-07T09:30").unwrap().to_rfc3339(),
            "2026-12-07T12:30:00+00:00"
        );
        assert!(since("07/12/2026 09:30").is_none());
        assert!(since("").is_none());
    }

    #[test]
    fn the_selection_is_every_type_or_the_checked_ones() {
        let all = fields(b"selecao=todos&eventos=solicitacao.criada");
        assert_eq!(selection(&all), None);
        let some =
            fields(b"selecao=escolhidos&eventos=solicitacao.criada&eventos=pgcc.indisponivel");
        assert_eq!(
            selection(&some),
            Some(vec![
                "solicitacao.criada".to_owned(),
                "pgcc.indisponivel".to_owned()
            ])
        );
    }
}
