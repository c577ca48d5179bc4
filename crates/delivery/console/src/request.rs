//! The DPO's page of a request (`auditor` scope): its status, history, use case and proof.

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use delivery_http::access_log::record_read;
use delivery_http::dto::consent_read::Solicitacao;
use delivery_http::error::Resource;
use delivery_http::ApiError;
use domain::Scope;
use maud::{html, Markup};
use uuid::Uuid;

use crate::human::{access_mode_label, cause_label, status_badge, when, when_or_dash};
use crate::layout::{self, scroll_box};
use crate::visit::Visit;

/// `GET /console/solicitacoes/{id}`: the request of the session's company (another company's is
/// 404, as in the API). The page carries the proof (behind a disclosure), so every answer is
/// recorded in the access log first (503 when it cannot be).
pub async fn page(visit: Visit, path: web::Path<String>) -> HttpResponse {
    let id = Uuid::parse_str(&path).ok();
    let outcome = visit
        .signed_in(
            "/console/solicitacoes/{id}",
            &[Scope::Auditor],
            None,
            move |s, call| {
                let id = id.ok_or(ApiError::NotFound(Resource::ConsentRequest))?;
                let record = s.get_consent_request.execute(call.company(), id)?;
                let data = Solicitacao::from_domain(record.request, false, Some(record.history));
                record_read(s, call, [(data.id, data.hash.as_str())])?;
                // the use case's title: one row, by the company and the template id
                let title = s
                    .list_use_cases
                    .title_of(call.company(), &data.template_id)?;
                Ok((data, title))
            },
        )
        .await;
    match outcome {
        Ok((signed, (data, title))) => layout::page(
            StatusCode::OK,
            "Solicitação",
            Some(&signed),
            view(&data, title.as_deref()),
        ),
        Err(refusal) => refusal.page(false),
    }
}

fn view(data: &Solicitacao, title: Option<&str>) -> Markup {
    html! {
        dl {
            dt { "Identificador" } dd { (data.id) }
            dt { "Status" } dd { (status_badge(&data.status)) }
            dt { "Caso de uso" }
            dd {
                @match title {
                    Some(title) => { (title) " " small { "(" (data.template_id) ")" } }
                    None => { (data.template_id) }
                }
                " (versão " (data.use_case_version) ")"
            }
            dt { "Titular (CPF)" } dd { (data.subject_cpf) }
            dt { "Modalidade de acesso" }
            dd {
                (access_mode_label(&data.access_mode))
                @if let Some(cnpj) = &data.consenting_cnpj { " (CNPJ anuente " (cnpj) ")" }
            }
            dt { "Criada em" } dd { (when(data.created_at)) }
            dt { "Respondida pelo titular em" } dd { (when_or_dash(data.subject_answered_at)) }
            dt { "Expira em" } dd { (when(data.consent_expires_at)) }
        }
        h2 { "Histórico" }
        (scroll_box("Histórico", html! {
            table {
                caption { "Mudanças de status, da mais antiga à mais recente" }
                thead {
                    tr {
                        th scope="col" { "Quando" }
                        th scope="col" { "De" }
                        th scope="col" { "Para" }
                        th scope="col" { "Causa" }
                        th scope="col" { "Motivo" }
                    }
                }
                tbody {
                    @for h in data.history.iter().flatten() {
                        tr {
                            td { (when(h.at)) }
                            td {
                                @match &h.from {
                                    Some(from) => (status_badge(from)),
                                    None => "—",
                                }
                            }
                            td { (status_badge(&h.to)) }
                            td { (cause_label(&h.cause)) }
                            td { (h.reason.as_deref().unwrap_or("—")) }
                        }
                    }
                }
            }
        }))
        h2 { "Prova de coleta" }
        @match &data.proof_of_collection {
            Some(proof) => details { summary { "Mostrar a prova de coleta" } pre { (proof) } },
            None => p { "Sem prova de coleta registrada." },
        }
        h2 { "Recibo" }
        p {
            "O recibo assinado desta solicitação (JWS, sem o CPF), para guardar ou entregar a um \
             auditor: "
            a href={ "/console/solicitacoes/" (data.id) "/recibo" } download { "baixar o recibo" }
            "."
        }
        p {
            button type="button" id="verificar-recibo" data-solicitacao=(data.id) {
                "Verificar o recibo neste navegador"
            }
        }
        p id="resultado-recibo" role="status" aria-live="polite" {}
        script src="/console/recibo.js" defer {}
    }
}
