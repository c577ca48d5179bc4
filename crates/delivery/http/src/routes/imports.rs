//! `/api/importacoes` (tag Importacoes; docs/imports.md): a file of consents received as it
//! arrives, its status, its errors by line and field, its cancellation.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::{web, HttpRequest, HttpResponse};
use application::{ImportConsents, ImportError};
use domain::{CompanyId, Envelope, ImportLineError, ImportStatus};
use futures_core::Stream;
use uuid::Uuid;

use crate::api_key::ApiKeyHeader;
use crate::blocking::as_company;
use crate::dto::envelope::{Envelope as EnvelopeDoc, Erro};
use crate::dto::import::{ArquivoCsv, Importacao, LinhaImportacao};
use crate::error::{ApiError, Resource};
use crate::import_file::Format;
use crate::import_upload::{status_of, Upload};
use crate::state::ApiState;

/// Errors per page of `GET .../erros` (one query each, streamed).
pub const ERRORS_PAGE: u32 = 5_000;

fn parse_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::NotFound(Resource::Import))
}

/// Receives a file of consents (JSON Lines or CSV) and validates every line; its valid lines
/// are then registered on the PGCC in the background.
#[utoipa::path(
    post,
    path = "/api/importacoes",
    operation_id = "criarImportacao",
    tag = "Importacoes",
    request_body(
        description = "The file, streamed: JSON Lines (one `LinhaImportacao` object a line) or CSV per RFC 4180 with a header of `LinhaImportacao`'s field names, comma or semicolon separated, with or without a UTF-8 BOM. At most `importacao.max_bytes` bytes and `importacao.max_linhas` lines.",
        content(
            (LinhaImportacao = "application/x-ndjson"),
            (ArquivoCsv = "text/csv"),
        )
    ),
    responses(
        (status = 202, description = "Read and validated: the import's status (`registrando`, or `concluida` when no line was valid); its errors at `GET /api/importacoes/{id}/erros`.", body = EnvelopeDoc<Importacao>,
            headers(("Location" = String, description = "`/api/importacoes/{id}`"))),
        (status = 400, description = "The CSV header names an unknown column, or the body is unreadable; nothing was created.", body = EnvelopeDoc<Erro>),
        (status = 413, description = "Over `importacao.max_bytes` bytes or `importacao.max_linhas` lines; nothing was created.", body = EnvelopeDoc<Erro>),
        (status = 415, description = "Neither `text/csv` nor `application/x-ndjson`.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn create(
    req: HttpRequest,
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    mut payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let format = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(Format::of_content_type)
        .ok_or(ApiError::UnsupportedImportType)?;
    // the key, its scopes and the rate limit, in one hop; the file is read outside it, so no
    // pooled connection is held while it arrives (each batch checks one out)
    let company = as_company(&state, key, |_, company| Ok(company.id)).await?;
    let imports = &state.services.imports;
    let limit = usize::try_from(imports.limits().max_bytes).unwrap_or(usize::MAX);
    let upload = Upload::start(imports, company, format);
    let payload_error = forward(&mut payload, &upload, limit).await;
    let outcome = upload.finish(payload_error.is_some()).await;
    let status = match (outcome, payload_error) {
        (Ok(status), _) => status,
        // the body broke its bound or stopped: the import was dropped
        (Err(_), Some(e)) => return Err(e),
        (Err(e), None) => return Err(e),
    };
    Ok(HttpResponse::Accepted()
        .insert_header((header::LOCATION, format!("/api/importacoes/{}", status.id)))
        .json(Envelope::ok(status)))
}

/// Hands the body's chunks to the reading thread, waiting while it is behind (memory stays a
/// few chunks whatever the file's size). The body's own failure (over its bound, timed out) is
/// returned, and tells the reader to stop.
async fn forward(payload: &mut web::Payload, upload: &Upload, limit: usize) -> Option<ApiError> {
    loop {
        let next = std::future::poll_fn(|cx| Pin::new(&mut *payload).poll_next(cx)).await;
        match next {
            None => return None,
            Some(Ok(chunk)) => {
                // the reader stopped (a limit, a bad header): the rest is not read
                if !upload.send(chunk).await {
                    return None;
                }
            }
            Some(Err(e)) => return Some(ApiError::from_payload_error(&e, limit)),
        }
    }
}

/// An import and where it stands.
#[utoipa::path(
    get,
    path = "/api/importacoes/{id}",
    operation_id = "obterImportacao",
    tag = "Importacoes",
    params(("id" = Uuid, Path, description = "The import's id.")),
    responses(
        (status = 200, description = "Its status and counts.", body = EnvelopeDoc<Importacao>),
        (status = 404, description = "No such import for the company.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn get(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = parse_id(&path)?;
    let data = as_company(&state, key, move |s, company| {
        let import = s.imports.get(company.id, id)?;
        status_of(&s.imports, &import)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok(data)))
}

/// Cancels an import: no further line is registered (lines registered stay).
#[utoipa::path(
    post,
    path = "/api/importacoes/{id}/cancelar",
    operation_id = "cancelarImportacao",
    tag = "Importacoes",
    params(("id" = Uuid, Path, description = "The import's id.")),
    responses(
        (status = 200, description = "Cancelled (or already cancelled): its status and counts.", body = EnvelopeDoc<Importacao>),
        (status = 404, description = "No such import for the company.", body = EnvelopeDoc<Erro>),
        (status = 409, description = "The import had already ended (`concluida`).", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn cancel(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = parse_id(&path)?;
    let data = as_company(&state, key, move |s, company| {
        let import = s.imports.cancel(company.id, id)?;
        if import.status == ImportStatus::Concluida {
            return Err(ApiError::Conflict(
                "A importação já terminou (concluida); não há o que cancelar.".to_owned(),
            ));
        }
        status_of(&s.imports, &import)
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok(data)))
}

/// `formato` of `GET .../erros`.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FormatoErros {
    /// `jsonl` (default: one `{"linha", "campo", "mensagem"}` a line) or `csv` (header
    /// `linha,campo,mensagem`). Without it, `Accept: text/csv` chooses CSV.
    #[param(max_length = 5, pattern = "^(csv|jsonl)$")]
    pub formato: Option<String>,
}

/// Every broken rule of the import's lines, by line number and field, in line order (never a
/// value of the line).
#[utoipa::path(
    get,
    path = "/api/importacoes/{id}/erros",
    operation_id = "errosImportacao",
    tag = "Importacoes",
    params(("id" = Uuid, Path, description = "The import's id."), FormatoErros),
    responses(
        (status = 200, description = "The errors, streamed: JSON Lines or CSV.", content(
            (String = "application/x-ndjson"),
            (String = "text/csv"),
        )),
        (status = 400, description = "`formato` is neither `csv` nor `jsonl`.", body = EnvelopeDoc<Erro>),
        (status = 404, description = "No such import for the company.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn errors(
    req: HttpRequest,
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
    query: crate::query::Query<FormatoErros>,
) -> Result<HttpResponse, ApiError> {
    let id = parse_id(&path)?;
    let csv = match query.formato.as_deref() {
        Some("csv") => true,
        Some("jsonl") => false,
        Some(_) => {
            return Err(ApiError::BadRequest(
                "formato deve ser csv ou jsonl".to_owned(),
            ))
        }
        None => req
            .headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/csv")),
    };
    // the first page in the authenticated hop: another company's import is a 404 here
    let (company, first) = as_company(&state, key, move |s, company| {
        let page = s.imports.errors(company.id, id, None, ERRORS_PAGE)?;
        Ok((company.id, page))
    })
    .await?;
    let pages = ErrorPages::new(state.services.imports.clone(), company, id, csv, first);
    let content_type = if csv {
        "text/csv; charset=utf-8"
    } else {
        "application/x-ndjson"
    };
    Ok(HttpResponse::Ok()
        .content_type(content_type)
        .streaming(pages))
}

type Page = Result<Vec<(u64, ImportLineError)>, ImportError>;

/// A page being read on the blocking pool.
type PendingPage = Pin<Box<dyn Future<Output = Result<Page, actix_web::error::BlockingError>>>>;

/// The errors page by page, each read in its own blocking hop while the previous is sent: JSON
/// Lines (`{"linha", "campo", "mensagem"}`) or CSV with its header.
pub struct ErrorPages {
    imports: ImportConsents,
    company: CompanyId,
    id: Uuid,
    csv: bool,
    header: bool,
    ready: Option<Vec<(u64, ImportLineError)>>,
    pending: Option<PendingPage>,
    after: Option<(u64, u64)>,
    done: bool,
}

fn csv_field(text: &str) -> String {
    if text.contains([',', ';', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

impl ErrorPages {
    /// The import's errors from `first`, its first page of at most [`ERRORS_PAGE`] (read by the
    /// caller in its authenticated hop, so another company's import was a 404 there).
    pub fn new(
        imports: ImportConsents,
        company: CompanyId,
        id: Uuid,
        csv: bool,
        first: Vec<(u64, ImportLineError)>,
    ) -> Self {
        ErrorPages {
            imports,
            company,
            id,
            csv,
            header: csv,
            ready: Some(first),
            pending: None,
            after: None,
            done: false,
        }
    }

    fn render(&mut self, page: &[(u64, ImportLineError)]) -> Bytes {
        let mut out = String::new();
        if std::mem::take(&mut self.header) {
            out.push_str("linha,campo,mensagem\r\n");
        }
        for (_, e) in page {
            if self.csv {
                out.push_str(&format!(
                    "{},{},{}\r\n",
                    e.line,
                    csv_field(&e.field),
                    csv_field(&e.message)
                ));
            } else {
                out.push_str(&serde_json::to_string(e).unwrap_or_default());
                out.push('\n');
            }
        }
        Bytes::from(out)
    }
}

impl Stream for ErrorPages {
    type Item = Result<Bytes, actix_web::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(page) = this.ready.take() {
                if (page.len() as u64) < u64::from(ERRORS_PAGE) {
                    this.done = true;
                }
                this.after = page.last().map(|(order, e)| (e.line, *order));
                let bytes = this.render(&page);
                return Poll::Ready(Some(Ok(bytes)));
            }
            if this.done {
                return Poll::Ready(None);
            }
            if this.pending.is_none() {
                let (imports, company, id, after) =
                    (this.imports.clone(), this.company, this.id, this.after);
                this.pending = Some(Box::pin(web::block(move || {
                    imports.errors(company, id, after, ERRORS_PAGE)
                })));
            }
            let Some(pending) = this.pending.as_mut() else {
                return Poll::Ready(None);
            };
            match pending.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(result) => {
                    this.pending = None;
                    match result {
                        Ok(Ok(page)) => this.ready = Some(page),
                        Ok(Err(e)) => {
                            this.done = true;
                            let e = ApiError::from(e);
                            return Poll::Ready(Some(Err(
                                actix_web::error::ErrorInternalServerError(e),
                            )));
                        }
                        Err(e) => {
                            this.done = true;
                            return Poll::Ready(Some(Err(
                                actix_web::error::ErrorInternalServerError(e),
                            )));
                        }
                    }
                }
            }
        }
    }
}
