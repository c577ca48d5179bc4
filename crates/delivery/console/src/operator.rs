//! The operator's pages (`webhooks` scope; `auditor` reads them): the company's webhook URLs,
//! their delivery logs, and the forms that act on them (the test event, re-enabling a disabled
//! URL, rotating its secret, replaying a delivery).

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use application::Services;
use delivery_http::dto::webhook_url::TesteWebhookUrl;
use delivery_http::error::Resource;
use delivery_http::ApiError;
use domain::{Company, Scope, WebhookUrl};
use maud::{html, Markup};
use uuid::Uuid;

use crate::human::{disabled_reason_label, event_label, when};
use crate::layout::{self, post_form, scroll_box};
use crate::refusal::Refusal;
use crate::visit::{csrf_of, log_action, see_other, SignedIn, Visit};

/// `GET /console/webhooks`: each URL with its state and the event types it receives; a
/// `webhooks` key gets a re-enable button on the disabled ones.
pub async fn webhooks(visit: Visit) -> HttpResponse {
    let outcome = visit
        .signed_in(
            "/console/webhooks",
            &[Scope::Webhooks, Scope::Auditor],
            None,
            |s, call| Ok(s.webhook_urls.list(call.company())?),
        )
        .await;
    match outcome {
        Ok((signed, urls)) => layout::page(
            StatusCode::OK,
            "Webhooks",
            Some(&signed),
            urls_view(&signed, &urls),
        ),
        Err(refusal) => refusal.page(false),
    }
}

fn urls_view(signed: &SignedIn, urls: &[WebhookUrl]) -> Markup {
    let manages = signed.scopes().contains(Scope::Webhooks);
    html! {
        @if manages { p { a href="/console/webhooks/nova" { "Adicionar uma URL" } } }
        @if urls.is_empty() {
            p { "Nenhuma webhook URL registrada." }
        } @else {
            (urls_table(signed, urls, manages))
        }
    }
}

fn urls_table(signed: &SignedIn, urls: &[WebhookUrl], manages: bool) -> Markup {
    scroll_box(
        "Webhook URLs da empresa",
        html! {
            table {
                caption { "Webhook URLs da empresa" }
                thead {
                    tr {
                        th scope="col" { "URL" }
                        th scope="col" { "Estado" }
                        th scope="col" { "Eventos" }
                        th scope="col" { "Ações" }
                    }
                }
                tbody {
                    @for w in urls {
                        tr {
                            td { (w.url) }
                            td { (url_state(w)) }
                            td { (url_events(w)) }
                            td {
                                a href={ "/console/webhooks/" (w.id) "/entregas" } { "Saúde e entregas" }
                                @if manages {
                                    (url_button(signed, w, "testar", "Enviar evento de teste"))
                                    (url_button(signed, w, "segredo", "Trocar o segredo"))
                                    @if w.disabled_at.is_some() {
                                        (url_button(signed, w, "reativar", "Reativar"))
                                    }
                                }
                            }
                        }
                    }
                }
            }
        },
    )
}

/// Active, failing since when, or disabled: when, why, and since when every attempt failed.
pub(crate) fn url_state(w: &WebhookUrl) -> Markup {
    let since = html! {
        @match w.failing_since {
            Some(at) => (when(at)),
            None => "?",
        }
    };
    html! {
        @match (w.disabled_at, w.failing_since) {
            (Some(at), _) => {
                "Desativada em " (when(at)) ": todas as tentativas de entrega falharam, sem \
                 nenhum sucesso, desde " (since) " (motivo: "
                (w.disabled_reason.as_deref().map_or("—", disabled_reason_label)) ")"
            }
            (None, Some(_)) => { "Ativa; falhando desde " (since) }
            (None, None) => "Ativa",
        }
    }
}

/// The event types the URL receives, by their labels.
pub(crate) fn url_events(w: &WebhookUrl) -> String {
    match w.events.types() {
        Some(types) => types
            .iter()
            .map(|t| event_label(t.as_str()))
            .collect::<Vec<_>>()
            .join(", "),
        None => "Todos".to_owned(),
    }
}

/// A button posting to `/console/webhooks/{id}/<action>`.
fn url_button(signed: &SignedIn, w: &WebhookUrl, action: &str, label: &str) -> Markup {
    post_form(
        &format!("/console/webhooks/{}/{action}", w.id),
        &signed.csrf,
        html! {},
        label,
    )
}

/// `POST /console/webhooks/{id}/reativar` (CSRF): re-enables the URL, back to the list.
pub async fn reenable(visit: Visit, path: web::Path<String>, body: web::Bytes) -> HttpResponse {
    let route = "/console/webhooks/{id}/reativar";
    match url_form(&visit, &path, &body, route, |s, company, id| {
        Ok(s.webhook_urls.reenable(company, id)?)
    })
    .await
    {
        Ok(_) => see_other("/console/webhooks"),
        Err(refusal) => refusal.page(true),
    }
}

/// `POST /console/webhooks/{id}/segredo` (CSRF): gives the URL a new signing secret and shows
/// it once, on this answer only (`no-store`, as every console page); the previous one keeps
/// signing beside it for the configured overlap, as `POST /api/webhook-urls/{id}/rotacionar-segredo`.
pub async fn rotate_secret(
    visit: Visit,
    path: web::Path<String>,
    body: web::Bytes,
) -> HttpResponse {
    let route = "/console/webhooks/{id}/segredo";
    let outcome = url_form(&visit, &path, &body, route, |s, company, id| {
        Ok(s.webhook_urls.rotate_secret(company, id)?)
    })
    .await;
    let (signed, secret) = match outcome {
        Ok(done) => done,
        Err(refusal) => return refusal.page(true),
    };
    let main = html! {
        p role="status" { "Segredo trocado. Copie-o agora: ele não será mostrado de novo." }
        p {
            label for="segredo" { "Novo segredo" } " "
            input id="segredo" type="text" readonly value=(secret) size="60";
        }
        p {
            "O segredo anterior continua assinando as entregas junto com este durante o período \
             de transição configurado."
        }
        (back_to_urls())
    };
    layout::page(StatusCode::OK, "Novo segredo", Some(&signed), main)
}

/// `POST /console/webhooks/{id}/entregas/{entrega}/reenviar` (CSRF): makes the delivery due
/// now (the same event id and body), as `POST /api/webhook-urls/{id}/entregas/{entrega}/reenviar`;
/// back to the URL's delivery log. A disabled URL is refused (409) and nothing changes.
pub async fn replay(
    visit: Visit,
    path: web::Path<(String, String)>,
    body: web::Bytes,
) -> HttpResponse {
    let csrf = csrf_of(&body);
    let (url, delivery) = path.into_inner();
    let ids = Uuid::parse_str(&url)
        .ok()
        .zip(Uuid::parse_str(&delivery).ok());
    let outcome = visit
        .signed_in(
            "/console/webhooks/{id}/entregas/{entrega}/reenviar",
            &[Scope::Webhooks],
            Some(&csrf),
            move |s, call| {
                let (url, delivery) =
                    ids.ok_or(ApiError::NotFound(Resource::WebhookUrlOrDelivery))?;
                match s.webhook_deliveries.replay(call.company(), url, delivery) {
                    // the API's message names its route; the page names its button
                    Err(application::DeliveryLogError::UrlDisabled) => Err(ApiError::Conflict(
                        "A webhook URL está desativada; reative-a (botão Reativar, na lista de \
                         webhooks) antes de reenviar."
                            .to_owned(),
                    )),
                    other => other.map_err(ApiError::from),
                }?;
                log_action(
                    call,
                    "/console/webhooks/{id}/entregas/{entrega}/reenviar",
                    delivery,
                );
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
pub(crate) async fn url_form<T, F>(
    visit: &Visit,
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
    visit
        .signed_in(route, &[Scope::Webhooks], Some(&csrf), move |s, call| {
            let id = id.ok_or(ApiError::NotFound(Resource::WebhookUrl))?;
            let done = work(s, call.company(), id)?;
            log_action(call, route, id);
            Ok(done)
        })
        .await
}

/// `POST /console/webhooks/{id}/testar` (CSRF): sends the test event now and shows what the
/// receiver answered.
pub async fn test(visit: Visit, path: web::Path<String>, body: web::Bytes) -> HttpResponse {
    let route = "/console/webhooks/{id}/testar";
    let outcome = url_form(&visit, &path, &body, route, |s, company, id| {
        Ok(s.test_webhook_url.execute(company, id)?)
    })
    .await;
    let (signed, result) = match outcome {
        Ok((signed, result)) => (signed, TesteWebhookUrl::from(result)),
        Err(refusal) => return refusal.page(true),
    };
    let main = html! {
        p role="status" {
            @if result.error.is_none() { "Evento de teste entregue." }
            @else { "Evento de teste não entregue." }
        }
        dl {
            dt { "Resposta" } dd { (answer(result.http_status)) }
            dt { "Latência" } dd { (result.latency_ms) " ms" }
            dt { "Erro" } dd { (result.error.as_deref().unwrap_or("nenhum")) }
        }
        (back_to_urls())
    };
    layout::page(StatusCode::OK, "Evento de teste", Some(&signed), main)
}

/// A receiver's answer: its HTTP status, or that there was none.
pub(crate) fn answer(status: Option<u16>) -> String {
    status.map_or("sem resposta".to_owned(), |s| format!("HTTP {s}"))
}

pub(crate) fn back_to_urls() -> Markup {
    html! { p { a href="/console/webhooks" { "Voltar às webhook URLs" } } }
}
