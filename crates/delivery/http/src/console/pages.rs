//! The DPO's pages (`auditor` scope): a request with its status, history, use case and proof.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use domain::Scope;
use uuid::Uuid;

use super::html::{self, esc};
use super::human::{access_mode_label, cause_label, status_badge, when};
use super::{nav, signed_in};
use crate::access_log::record_read;
use crate::dto::consent_read::Solicitacao;
use crate::error::ApiError;
use crate::state::ApiState;

/// `GET /console/solicitacoes/{id}`: the request of the session's company (another company's is
/// 404, as in the API). The page carries the proof (behind a disclosure), so every answer is
/// recorded in the access log first (503 when it cannot be).
pub async fn request(
    state: web::Data<ApiState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> HttpResponse {
    let id = Uuid::parse_str(&path).ok();
    let outcome = signed_in(
        &state,
        &req,
        "/console/solicitacoes/{id}",
        &[Scope::Auditor],
        None,
        move |s, call| {
            let id = id.ok_or(ApiError::NotFound(crate::error::Resource::ConsentRequest))?;
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
    let (signed, (data, title)) = match outcome {
        Ok(done) => done,
        Err(refusal) => return refusal.page(false),
    };
    let history: String = data
        .history
        .iter()
        .flatten()
        .map(|h| {
            format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                when(h.at),
                h.from.as_deref().map_or("—".to_owned(), status_badge),
                status_badge(&h.to),
                cause_label(&h.cause),
                esc(h.reason.as_deref().unwrap_or("—"))
            )
        })
        .collect();
    let proof = match &data.proof_of_collection {
        Some(proof) => format!(
            "<details><summary>Mostrar a prova de coleta</summary><pre>{}</pre></details>",
            esc(proof)
        ),
        None => "<p>Sem prova de coleta registrada.</p>".to_owned(),
    };
    let main = format!(
        "<dl>\
         <dt>Identificador</dt><dd>{}</dd>\
         <dt>Status</dt><dd>{}</dd>\
         <dt>Caso de uso</dt><dd>{use_case} (versão {})</dd>\
         <dt>Titular (CPF)</dt><dd>{}</dd>\
         <dt>Modalidade de acesso</dt><dd>{}{}</dd>\
         <dt>Criada em</dt><dd>{}</dd>\
         <dt>Respondida pelo titular em</dt><dd>{}</dd>\
         <dt>Expira em</dt><dd>{}</dd>\
         </dl>\
         <h2>Histórico</h2>\
         <div class=\"rolagem\" tabindex=\"0\" role=\"region\" aria-label=\"Histórico\"><table><caption>Mudanças de status, da mais antiga à mais recente</caption>\
         <thead><tr><th scope=\"col\">Quando</th><th scope=\"col\">De</th>\
         <th scope=\"col\">Para</th><th scope=\"col\">Causa</th><th scope=\"col\">Motivo</th>\
         </tr></thead><tbody>{history}</tbody></table></div>\
         <h2>Prova de coleta</h2>{proof}\
         <h2>Recibo</h2>\
         <p>O recibo assinado desta solicitação (JWS, sem o CPF), para guardar ou entregar a \
         um auditor: <a href=\"/console/solicitacoes/{id}/recibo\" download>baixar o recibo</a>.</p>\
         <p><button type=\"button\" id=\"verificar-recibo\" data-solicitacao=\"{id}\">\
         Verificar o recibo neste navegador</button></p>\
         <p id=\"resultado-recibo\" role=\"status\" aria-live=\"polite\"></p>\
         <script src=\"/console/recibo.js\" defer></script>",
        esc(&data.id.to_string()),
        status_badge(&data.status),
        data.use_case_version,
        esc(&data.subject_cpf),
        access_mode_label(&data.access_mode),
        data.consenting_cnpj
            .as_deref()
            .map_or(String::new(), |cnpj| format!(" (CNPJ anuente {})", esc(cnpj))),
        when(data.created_at),
        data.subject_answered_at.map_or("—".to_owned(), when),
        when(data.consent_expires_at),
        id = data.id,
        use_case = match &title {
            Some(title) => format!("{} <small>({})</small>", esc(title), esc(&data.template_id)),
            None => esc(&data.template_id),
        },
    );
    html::page(StatusCode::OK, "Solicitação", &nav(&signed), &main)
}
