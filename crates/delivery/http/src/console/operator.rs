//! The operator's pages (`webhooks` scope; `auditor` reads them): the company's webhook URLs,
//! their delivery logs, and the forms that act on them (the test event, re-enabling a disabled
//! URL, rotating its secret, replaying a delivery).

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use application::Services;
use domain::{Company, Scope};
use serde::Deserialize;
use uuid::Uuid;

use super::html::{self, esc};
use super::human::{delivery_badge, disabled_reason_label, event_label, when};
use super::{nav, see_other, signed_in, Refusal, SignedIn};
use crate::dto::webhook_url::{Entrega, TesteWebhookUrl};
use crate::error::ApiError;
use crate::state::ApiState;

/// `GET /console/webhooks`: each URL with its state and the event types it receives; a
/// `webhooks` key gets a re-enable button on the disabled ones.
pub async fn webhooks(state: web::Data<ApiState>, req: HttpRequest) -> HttpResponse {
    let outcome = signed_in(
        &state,
        &req,
        "/console/webhooks",
        &[Scope::Webhooks, Scope::Auditor],
        None,
        |s, call| Ok(s.webhook_urls.list(call.company())?),
    )
    .await;
    let (signed, urls) = match outcome {
        Ok(done) => done,
        Err(refusal) => return refusal.page(false),
    };
    let manages = signed.scopes().contains(Scope::Webhooks);
    let rows: String = urls
        .iter()
        .map(|w| {
            // why a URL is (or is about to be) disabled: since when every attempt failed
            let since = w.failing_since.map(when).unwrap_or_else(|| "?".to_owned());
            let state = match (w.disabled_at, w.failing_since) {
                (Some(at), _) => format!(
                    "Desativada em {}: todas as tentativas de entrega falharam, sem nenhum \
                     sucesso, desde {since} (motivo: {})",
                    when(at),
                    w.disabled_reason
                        .as_deref()
                        .map_or("—".to_owned(), disabled_reason_label)
                ),
                (None, Some(_)) => format!("Ativa; falhando desde {since}"),
                (None, None) => "Ativa".to_owned(),
            };
            let events = match w.events.types() {
                Some(types) => types
                    .iter()
                    .map(|t| event_label(t.as_str()))
                    .collect::<Vec<_>>()
                    .join(", "),
                None => "Todos".to_owned(),
            };
            let mut action = format!(
                "<a href=\"/console/webhooks/{}/entregas\">Entregas</a>",
                w.id
            );
            if manages {
                action.push_str(&html::post_form(
                    &format!("/console/webhooks/{}/testar", w.id),
                    &signed.csrf,
                    "",
                    "Enviar evento de teste",
                ));
            }
            if manages {
                action.push_str(&html::post_form(
                    &format!("/console/webhooks/{}/segredo", w.id),
                    &signed.csrf,
                    "",
                    "Trocar o segredo",
                ));
            }
            if manages && w.disabled_at.is_some() {
                action.push_str(&html::post_form(
                    &format!("/console/webhooks/{}/reativar", w.id),
                    &signed.csrf,
                    "",
                    "Reativar",
                ));
            }
            format!(
                "<tr><td>{}</td><td>{state}</td><td>{events}</td><td>{action}</td></tr>",
                esc(&w.url)
            )
        })
        .collect();
    let main = if urls.is_empty() {
        "<p>Nenhuma webhook URL registrada.</p>".to_owned()
    } else {
        html::scroll_box(
            "Webhook URLs da empresa",
            &format!(
                "<table><caption>Webhook URLs da empresa</caption><thead><tr>\
                 <th scope=\"col\">URL</th><th scope=\"col\">Estado</th>\
                 <th scope=\"col\">Eventos</th><th scope=\"col\">Ações</th></tr></thead>\
                 <tbody>{rows}</tbody></table>"
            ),
        )
    };
    html::page(StatusCode::OK, "Webhooks", &nav(&signed), &main)
}

#[derive(Deserialize)]
struct CsrfForm {
    #[serde(default)]
    csrf: String,
}

/// `POST /console/webhooks/{id}/reativar` (CSRF): re-enables the URL, back to the list.
pub async fn reenable(
    state: web::Data<ApiState>,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> HttpResponse {
    let outcome = url_form(
        &state,
        &req,
        &path,
        &body,
        "/console/webhooks/{id}/reativar",
        |s, company, id| Ok(s.webhook_urls.reenable(company, id)?),
    )
    .await;
    match outcome {
        Ok(_) => see_other("/console/webhooks"),
        Err(refusal) => refusal.page(true),
    }
}

/// `POST /console/webhooks/{id}/segredo` (CSRF): gives the URL a new signing secret and shows
/// it once, on this answer only (`no-store`, as every console page); the previous one keeps
/// signing beside it for the configured overlap, as `POST /api/webhook-urls/{id}/rotacionar-segredo`.
pub async fn rotate_secret(
    state: web::Data<ApiState>,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> HttpResponse {
    let outcome = url_form(
        &state,
        &req,
        &path,
        &body,
        "/console/webhooks/{id}/segredo",
        |s, company, id| Ok(s.webhook_urls.rotate_secret(company, id)?),
    )
    .await;
    let (signed, secret) = match outcome {
        Ok(done) => done,
        Err(refusal) => return refusal.page(true),
    };
    let main = format!(
        "<p role=\"status\">Segredo trocado. Copie-o agora: ele não será mostrado de novo.</p>\
         <p><label for=\"segredo\">Novo segredo</label> \
         <input id=\"segredo\" type=\"text\" readonly value=\"{}\" size=\"60\"></p>\
         <p>O segredo anterior continua assinando as entregas junto com este durante o período \
         de transição configurado.</p>\
         <p><a href=\"/console/webhooks\">Voltar às webhook URLs</a></p>",
        esc(&secret)
    );
    html::page(StatusCode::OK, "Novo segredo", &nav(&signed), &main)
}

/// `POST /console/webhooks/{id}/entregas/{entrega}/reenviar` (CSRF): makes the delivery due
/// now (the same event id and body), as `POST /api/webhook-urls/{id}/entregas/{entrega}/reenviar`;
/// back to the URL's delivery log. A disabled URL is refused (409) and nothing changes.
pub async fn replay(
    state: web::Data<ApiState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    body: web::Bytes,
) -> HttpResponse {
    let csrf = csrf_of(&body);
    let (url, delivery) = path.into_inner();
    let ids = Uuid::parse_str(&url)
        .ok()
        .zip(Uuid::parse_str(&delivery).ok());
    let outcome = signed_in(
        &state,
        &req,
        "/console/webhooks/{id}/entregas/{entrega}/reenviar",
        &[Scope::Webhooks],
        Some(&csrf),
        move |s, call| {
            let (url, delivery) = ids.ok_or(ApiError::NotFound(
                crate::error::Resource::WebhookUrlOrDelivery,
            ))?;
            match s.webhook_deliveries.replay(call.company(), url, delivery) {
                // the API's message names its route; the page names its button
                Err(application::DeliveryLogError::UrlDisabled) => Err(ApiError::Conflict(
                    "A webhook URL está desativada; reative-a (botão Reativar, na lista de \
                     webhooks) antes de reenviar."
                        .to_owned(),
                )),
                other => other.map_err(ApiError::from),
            }?;
            Ok(url)
        },
    )
    .await;
    match outcome {
        Ok((_, url)) => see_other(&format!("/console/webhooks/{url}/entregas")),
        Err(refusal) => refusal.page(true),
    }
}

/// A form about one of the company's webhook URLs (`webhooks` scope, CSRF): the URL's id from
/// the path (not a UUID: not found), then `work` for the session's company.
async fn url_form<T, F>(
    state: &web::Data<ApiState>,
    req: &HttpRequest,
    path: &str,
    body: &[u8],
    route: &'static str,
    work: F,
) -> Result<(SignedIn, T), Refusal>
where
    F: FnOnce(&Services, &Company, Uuid) -> Result<T, ApiError> + Send + 'static,
    T: Send + 'static,
{
    let csrf = csrf_of(body);
    let id = Uuid::parse_str(path).ok();
    signed_in(
        state,
        req,
        route,
        &[Scope::Webhooks],
        Some(&csrf),
        move |s, call| {
            let id = id.ok_or(ApiError::NotFound(crate::error::Resource::WebhookUrl))?;
            work(s, call.company(), id)
        },
    )
    .await
}

/// The `csrf` field of a posted form (missing or unreadable: empty, which no session has).
fn csrf_of(body: &[u8]) -> String {
    serde_urlencoded::from_bytes::<CsrfForm>(body)
        .map(|f| f.csrf)
        .unwrap_or_default()
}

/// `GET /console/webhooks/{id}/entregas`: the URL's latest deliveries, newest first, each with
/// its attempts (when, HTTP status, latency, error); a `webhooks` key gets a replay button on
/// each.
pub async fn deliveries(
    state: web::Data<ApiState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> HttpResponse {
    let id = Uuid::parse_str(&path).ok();
    let outcome = signed_in(
        &state,
        &req,
        "/console/webhooks/{id}/entregas",
        &[Scope::Webhooks, Scope::Auditor],
        None,
        move |s, call| {
            let id = id.ok_or(ApiError::NotFound(crate::error::Resource::WebhookUrl))?;
            Ok(s.webhook_deliveries.list(call.company(), id, None)?)
        },
    )
    .await;
    let (signed, records) = match outcome {
        Ok(done) => done,
        Err(refusal) => return refusal.page(false),
    };
    let manages = signed.scopes().contains(Scope::Webhooks);
    let url_id = path.as_str();
    let rows: String = records
        .into_iter()
        .map(Entrega::from)
        .map(|d| {
            let attempts: String = d
                .attempts
                .iter()
                .map(|a| {
                    format!(
                        "<li>{}: {}, {} ms{}</li>",
                        when(a.at),
                        a.http_status
                            .map_or("sem resposta".to_owned(), |s| format!("HTTP {s}")),
                        a.latency_ms,
                        a.error
                            .as_deref()
                            .map_or(String::new(), |e| format!(" ({})", esc(e)))
                    )
                })
                .collect();
            let action = if manages {
                html::post_form(
                    &format!("/console/webhooks/{url_id}/entregas/{}/reenviar", d.id),
                    &signed.csrf,
                    "",
                    "Reenviar",
                )
            } else {
                String::new()
            };
            format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td><ul>{attempts}</ul></td>\
                 <td>{action}</td></tr>",
                event_label(&d.event_type),
                delivery_badge(&d.status),
                when(d.created_at)
            )
        })
        .collect();
    let main = if rows.is_empty() {
        "<p>Nenhuma entrega para esta URL.</p>".to_owned()
    } else {
        html::scroll_box(
            "Entregas",
            &format!(
                "<table><caption>Entregas, da mais recente à mais antiga</caption><thead><tr>\
                 <th scope=\"col\">Evento</th><th scope=\"col\">Status</th>\
                 <th scope=\"col\">Criada em</th><th scope=\"col\">Tentativas</th>\
                 <th scope=\"col\">Ações</th></tr></thead>\
                 <tbody>{rows}</tbody></table>"
            ),
        )
    };
    let main = format!("{main}<p><a href=\"/console/webhooks\">Voltar às webhook URLs</a></p>");
    html::page(StatusCode::OK, "Entregas", &nav(&signed), &main)
}

/// `POST /console/webhooks/{id}/testar` (CSRF): sends the test event now and shows what the
/// receiver answered.
pub async fn test(
    state: web::Data<ApiState>,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> HttpResponse {
    let outcome = url_form(
        &state,
        &req,
        &path,
        &body,
        "/console/webhooks/{id}/testar",
        |s, company, id| Ok(s.test_webhook_url.execute(company, id)?),
    )
    .await;
    let (signed, result) = match outcome {
        Ok(done) => done,
        Err(refusal) => return refusal.page(true),
    };
    let result = TesteWebhookUrl::from(result);
    let verdict = if result.error.is_none() {
        "Evento de teste entregue."
    } else {
        "Evento de teste não entregue."
    };
    let main = format!(
        "<p role=\"status\">{verdict}</p><dl><dt>Resposta</dt><dd>{}</dd>\
         <dt>Latência</dt><dd>{} ms</dd><dt>Erro</dt><dd>{}</dd></dl>\
         <p><a href=\"/console/webhooks\">Voltar às webhook URLs</a></p>",
        result
            .http_status
            .map_or("sem resposta".to_owned(), |s| format!("HTTP {s}")),
        result.latency_ms,
        esc(result.error.as_deref().unwrap_or("nenhum"))
    );
    html::page(StatusCode::OK, "Evento de teste", &nav(&signed), &main)
}
