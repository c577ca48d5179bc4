//! The DPO's pages (`auditor` scope): a request with its status, history, use case and proof.

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use domain::Scope;
use uuid::Uuid;

use super::html::{self, esc};
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
            let id = id.ok_or(ApiError::NotFound("Solicitação"))?;
            let record = s.get_consent_request.execute(call.company(), id)?;
            let data = Solicitacao::from_domain(record.request, false, Some(record.history));
            record_read(s, call, [(data.id, data.hash.as_str())])?;
            Ok(data)
        },
    )
    .await;
    let (signed, data) = match outcome {
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
                esc(&h.at.to_rfc3339()),
                esc(h.from.as_deref().unwrap_or("—")),
                esc(&h.to),
                esc(&h.cause),
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
         <dt>Caso de uso</dt><dd>{} (versão {})</dd>\
         <dt>Titular (CPF)</dt><dd>{}</dd>\
         <dt>Criada em</dt><dd>{}</dd>\
         <dt>Expira em</dt><dd>{}</dd>\
         </dl>\
         <h2>Histórico</h2>\
         <table><caption>Mudanças de status, da mais antiga à mais recente</caption>\
         <thead><tr><th scope=\"col\">Quando</th><th scope=\"col\">De</th>\
         <th scope=\"col\">Para</th><th scope=\"col\">Causa</th><th scope=\"col\">Motivo</th>\
         </tr></thead><tbody>{history}</tbody></table>\
         <h2>Prova de coleta</h2>{proof}\
         <h2>Recibo</h2>\
         <p>O recibo assinado desta solicitação (JWS, sem o CPF), para guardar ou entregar a \
         um auditor: <a href=\"/console/solicitacoes/{id}/recibo\" download>baixar o recibo</a>.</p>\
         <p><button type=\"button\" id=\"verificar-recibo\" data-solicitacao=\"{id}\">\
         Verificar o recibo neste navegador</button></p>\
         <p id=\"resultado-recibo\" role=\"status\" aria-live=\"polite\"></p>\
         <script src=\"/console/recibo.js\" defer></script>",
        esc(&data.id.to_string()),
        esc(&data.status),
        esc(&data.template_id),
        data.use_case_version,
        esc(&data.subject_cpf),
        esc(&data.created_at.to_rfc3339()),
        esc(&data.consent_expires_at.to_rfc3339()),
        id = data.id,
    );
    html::page(StatusCode::OK, "Solicitação", &nav(&signed), &main)
}
