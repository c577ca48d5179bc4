//! Evidence files (issue 37, part 5; docs/evidencias.md): a request's files uploaded
//! (`PUT .../arquivos`, `PUT .../arquivos/{sha256}`), listed and downloaded, and the company's
//! files uploaded before an import names them (`PUT /api/arquivos/{sha256}`). An upload is
//! hashed and written part by part as it arrives; a download is read part by part as it is sent.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::{web, HttpRequest, HttpResponse};
use application::{Download, EvidenceError, EvidenceFiles, Upload};
use domain::{is_sha256_hex, CompanyId, Envelope, ValidationErrors};
use futures_core::Stream;
use ports::RepoError;
use uuid::Uuid;

use crate::access_log::record_read;
use crate::api_key::ApiKeyHeader;
use crate::blocking::{as_caller, as_company, in_blocking_hop};
use crate::dto::envelope::{Envelope as EnvelopeDoc, Erro};
use crate::dto::evidence_file::{ArquivoBinario, ArquivoEvidencia, ArquivosEvidencia};
use crate::error::{ApiError, Resource};
use crate::state::ApiState;

impl From<EvidenceError> for ApiError {
    fn from(e: EvidenceError) -> Self {
        match e {
            EvidenceError::NotFound => ApiError::NotFound(Resource::EvidenceFile),
            EvidenceError::UnsupportedType => ApiError::UnsupportedEvidenceType,
            EvidenceError::TooLarge { limit } => ApiError::PayloadTooLarge {
                limit: usize::try_from(limit).unwrap_or(usize::MAX),
            },
            EvidenceError::HashMismatch => {
                let mut errors = ValidationErrors::default();
                errors.push(
                    "sha256",
                    "Os bytes enviados não têm o SHA-256 do caminho; nada foi guardado.",
                );
                ApiError::Validation(errors)
            }
            EvidenceError::BytesDeleted => ApiError::EvidenceGone,
            EvidenceError::Busy => ApiError::TooManyUploads,
            EvidenceError::Repo(e) => e.into(),
        }
    }
}

fn request_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::NotFound(Resource::ConsentRequest))
}

/// A hash in a path: 64 hex digits (upper case accepted, named in lower case), else a 404 (no
/// file has that name).
fn sha256_of(raw: &str) -> Result<String, ApiError> {
    let lower = raw.to_ascii_lowercase();
    if is_sha256_hex(&lower) {
        Ok(lower)
    } else {
        Err(ApiError::NotFound(Resource::EvidenceFile))
    }
}

/// Uploads a file of evidence (a signed PDF, an image, a recording) and links it to the request,
/// with a log entry naming its SHA-256, size and media type.
#[utoipa::path(
    put,
    path = "/api/solicitacao-consentimento/{id}/arquivos",
    operation_id = "enviarArquivoSolicitacao",
    tag = "Evidencias",
    params(("id" = Uuid, Path, description = "Our id of the request.")),
    request_body(
        description = "The file's bytes, streamed, at most `evidencias.max_bytes` (20 MiB by default). Its `Content-Type` is kept as its media type: `application/pdf`, `image/png`, `image/jpeg`, `audio/mpeg`, `audio/ogg`, `audio/wav` or `video/mp4`.",
        content(
            (ArquivoBinario = "application/pdf"),
            (ArquivoBinario = "image/png"),
            (ArquivoBinario = "image/jpeg"),
            (ArquivoBinario = "audio/mpeg"),
            (ArquivoBinario = "audio/ogg"),
            (ArquivoBinario = "audio/wav"),
            (ArquivoBinario = "video/mp4"),
        )
    ),
    responses(
        (status = 201, description = "Stored (or the company had these bytes already) and linked to the request now, with its log entry.", body = EnvelopeDoc<ArquivoEvidencia>),
        (status = 200, description = "The request already had this file: nothing written.", body = EnvelopeDoc<ArquivoEvidencia>),
        (status = 404, description = "No such request for the company.", body = EnvelopeDoc<Erro>),
        (status = 413, description = "Over `evidencias.max_bytes`; nothing was stored.", body = EnvelopeDoc<Erro>),
        (status = 415, description = "A media type not in the list; nothing was read.", body = EnvelopeDoc<Erro>),
        (status = 429, description = "The company has its uploads under way (`evidencias.uploads_por_empresa`); `Retry-After` says when to try again.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn upload(
    req: HttpRequest,
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let id = request_id(&path)?;
    receive(&req, &state, key, payload, Some(id), None).await
}

/// The idempotent form of the upload: the server checks that the bytes have the SHA-256 of the
/// path (422, nothing stored, when not); sent again, it changes nothing.
#[utoipa::path(
    put,
    path = "/api/solicitacao-consentimento/{id}/arquivos/{sha256}",
    operation_id = "enviarArquivoSolicitacaoPorHash",
    tag = "Evidencias",
    params(
        ("id" = Uuid, Path, description = "Our id of the request."),
        ("sha256" = String, Path, description = "The SHA-256 of the file's bytes, 64 hex digits.", max_length = 64, min_length = 64, pattern = "^[0-9a-fA-F]{64}$"),
    ),
    request_body(
        description = "The file's bytes, as `PUT .../arquivos` takes them.",
        content(
            (ArquivoBinario = "application/pdf"),
            (ArquivoBinario = "image/png"),
            (ArquivoBinario = "image/jpeg"),
            (ArquivoBinario = "audio/mpeg"),
            (ArquivoBinario = "audio/ogg"),
            (ArquivoBinario = "audio/wav"),
            (ArquivoBinario = "video/mp4"),
        )
    ),
    responses(
        (status = 201, description = "Stored (or the company had these bytes already) and linked to the request now, with its log entry.", body = EnvelopeDoc<ArquivoEvidencia>),
        (status = 200, description = "The request already had this file: nothing written.", body = EnvelopeDoc<ArquivoEvidencia>),
        (status = 404, description = "No such request for the company.", body = EnvelopeDoc<Erro>),
        (status = 413, description = "Over `evidencias.max_bytes`; nothing was stored.", body = EnvelopeDoc<Erro>),
        (status = 415, description = "A media type not in the list; nothing was read.", body = EnvelopeDoc<Erro>),
        (status = 422, description = "The bytes do not have the path's SHA-256 (`sha256` in `data.erros`); nothing was stored.", body = EnvelopeDoc<Erro>),
        (status = 429, description = "The company has its uploads under way; `Retry-After` says when to try again.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn upload_named(
    req: HttpRequest,
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<(String, String)>,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let (id, sha256) = path.into_inner();
    let id = request_id(&id)?;
    let sha256 = sha256_of(&sha256).map_err(|_| hash_rule())?;
    receive(&req, &state, key, payload, Some(id), Some(sha256)).await
}

/// Uploads a file to the company's store, linked to no request yet: an import's line names it by
/// its hash (`arquivosSha256`, docs/imports.md). Idempotent, the hash checked as in
/// `PUT .../arquivos/{sha256}`.
#[utoipa::path(
    put,
    path = "/api/arquivos/{sha256}",
    operation_id = "enviarArquivo",
    tag = "Evidencias",
    params(
        ("sha256" = String, Path, description = "The SHA-256 of the file's bytes, 64 hex digits.", max_length = 64, min_length = 64, pattern = "^[0-9a-fA-F]{64}$"),
    ),
    request_body(
        description = "The file's bytes, as `PUT .../arquivos` takes them.",
        content(
            (ArquivoBinario = "application/pdf"),
            (ArquivoBinario = "image/png"),
            (ArquivoBinario = "image/jpeg"),
            (ArquivoBinario = "audio/mpeg"),
            (ArquivoBinario = "audio/ogg"),
            (ArquivoBinario = "audio/wav"),
            (ArquivoBinario = "video/mp4"),
        )
    ),
    responses(
        (status = 201, description = "Stored: a new file of the company.", body = EnvelopeDoc<ArquivoEvidencia>),
        (status = 200, description = "The company had these bytes already: nothing written.", body = EnvelopeDoc<ArquivoEvidencia>),
        (status = 413, description = "Over `evidencias.max_bytes`; nothing was stored.", body = EnvelopeDoc<Erro>),
        (status = 415, description = "A media type not in the list; nothing was read.", body = EnvelopeDoc<Erro>),
        (status = 422, description = "The bytes do not have the path's SHA-256, or the path is not one (`sha256` in `data.erros`); nothing was stored.", body = EnvelopeDoc<Erro>),
        (status = 429, description = "The company has its uploads under way; `Retry-After` says when to try again.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn upload_to_company(
    req: HttpRequest,
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let sha256 = sha256_of(&path).map_err(|_| hash_rule())?;
    receive(&req, &state, key, payload, None, Some(sha256)).await
}

fn hash_rule() -> ApiError {
    let mut errors = ValidationErrors::default();
    errors.push(
        "sha256",
        "Informe o SHA-256 do arquivo: 64 dígitos hexadecimais.",
    );
    ApiError::Validation(errors)
}

/// The upload: the key, its scope, the request and the media type checked before a byte is
/// read; then each part written as it fills (one connection checked out per part, none held
/// while the body arrives); at the end the hash checked, the file recorded and linked. Any
/// failure deletes what was written: a refused upload stores nothing.
async fn receive(
    req: &HttpRequest,
    state: &web::Data<ApiState>,
    key: ApiKeyHeader,
    mut payload: web::Payload,
    request: Option<Uuid>,
    expected: Option<String>,
) -> Result<HttpResponse, ApiError> {
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let mut upload = as_company(state, key, move |s, company| {
        let upload = s
            .evidence_files
            .begin(company.id, request, &content_type, expected)?;
        Ok(upload)
    })
    .await?;
    let limit = state.services.evidence_files.limits().max_bytes;
    if declared.is_some_and(|n| n > limit) {
        return Err(EvidenceError::TooLarge { limit }.into());
    }
    if let Err(e) = take_body(state, &mut payload, &mut upload, limit).await {
        discard(state, upload).await;
        return Err(e);
    }
    let uploaded = in_blocking_hop(state, move |s| {
        s.evidence_files
            .finish(upload, request)
            .map_err(ApiError::from)
    })
    .await?;
    let mut res = if uploaded.created {
        HttpResponse::Created()
    } else {
        HttpResponse::Ok()
    };
    Ok(res.json(Envelope::ok(ArquivoEvidencia::from(uploaded.file))))
}

/// Reads the body into the upload, writing each part it completes.
async fn take_body(
    state: &web::Data<ApiState>,
    payload: &mut web::Payload,
    upload: &mut Upload,
    limit: u64,
) -> Result<(), ApiError> {
    let body_limit = usize::try_from(limit).unwrap_or(usize::MAX);
    loop {
        let next = std::future::poll_fn(|cx| Pin::new(&mut *payload).poll_next(cx)).await;
        let chunk = match next {
            None => return Ok(()),
            Some(Ok(chunk)) => chunk,
            Some(Err(e)) => return Err(ApiError::from_payload_error(&e, body_limit)),
        };
        for (index, bytes) in upload.push(&chunk)? {
            let (company, object) = (upload.company(), upload.object());
            in_blocking_hop(state, move |s| {
                s.evidence_files
                    .write_part(company, object, index, &bytes)
                    .map_err(ApiError::from)
            })
            .await?;
        }
    }
}

/// Deletes what a failed upload wrote; a failure here leaves parts no file names (logged, and
/// the answer stays the upload's own failure).
async fn discard(state: &web::Data<ApiState>, upload: Upload) {
    if !upload.wrote_parts() {
        return;
    }
    let result = in_blocking_hop(state, move |s| {
        s.evidence_files.discard(&upload).map_err(ApiError::from)
    })
    .await;
    if let Err(e) = result {
        tracing::warn!(error = %e, "could not delete the parts of a failed evidence upload");
    }
}

/// The request's evidence files, oldest link first.
#[utoipa::path(
    get,
    path = "/api/solicitacao-consentimento/{id}/arquivos",
    operation_id = "listarArquivosSolicitacao",
    tag = "Evidencias",
    params(("id" = Uuid, Path, description = "Our id of the request.")),
    responses(
        (status = 200, description = "The request's files (those whose bytes retention deleted included, with `bytesApagadosEm`).", body = EnvelopeDoc<ArquivosEvidencia>),
        (status = 404, description = "No such request for the company.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn list(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = request_id(&path)?;
    let files = as_company(&state, key, move |s, company| {
        s.evidence_files.list(company.id, id).map_err(|e| match e {
            EvidenceError::NotFound => ApiError::NotFound(Resource::ConsentRequest),
            other => other.into(),
        })
    })
    .await?;
    Ok(HttpResponse::Ok().json(Envelope::ok(ArquivosEvidencia {
        itens: files.into_iter().map(ArquivoEvidencia::from).collect(),
    })))
}

/// Downloads one of the request's files, as an attachment of its media type (never rendered by
/// a browser: `X-Content-Type-Options: nosniff`). Recorded in the access log.
#[utoipa::path(
    get,
    path = "/api/solicitacao-consentimento/{id}/arquivos/{sha256}",
    operation_id = "baixarArquivoSolicitacao",
    tag = "Evidencias",
    params(
        ("id" = Uuid, Path, description = "Our id of the request."),
        ("sha256" = String, Path, description = "The file's SHA-256, 64 hex digits.", max_length = 64, min_length = 64, pattern = "^[0-9a-fA-F]{64}$"),
    ),
    responses(
        (status = 200, description = "The file's bytes, streamed, with its media type.", content(
            (ArquivoBinario = "application/pdf"),
            (ArquivoBinario = "image/png"),
            (ArquivoBinario = "image/jpeg"),
            (ArquivoBinario = "audio/mpeg"),
            (ArquivoBinario = "audio/ogg"),
            (ArquivoBinario = "audio/wav"),
            (ArquivoBinario = "video/mp4"),
        ),
            headers(
                ("Content-Disposition" = String, description = "`attachment; filename=\"<sha256>.<extension>\"`."),
                ("X-Content-Type-Options" = String, description = "`nosniff`."),
            )),
        (status = 404, description = "No such request for the company, or the request has no such file (another company's file is not found either).", body = EnvelopeDoc<Erro>),
        (status = 410, description = "Retention deleted the file's bytes; its row and its log entry remain.", body = EnvelopeDoc<Erro>),
    )
)]
pub async fn download(
    state: web::Data<ApiState>,
    key: ApiKeyHeader,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (id, sha256) = path.into_inner();
    let id = request_id(&id)?;
    let sha256 = sha256_of(&sha256)?;
    // the first part in the authenticated hop, with the record of the read
    let (company, download, first) = as_caller(&state, key, move |s, call| {
        let company = call.company().id;
        let download = s.evidence_files.download(company, Some(id), &sha256)?;
        let first = s.evidence_files.read_part(company, &download, 0)?;
        if let Some((request, hash)) = &download.request {
            record_read(s, call, [(*request, hash.as_str())])?;
        }
        Ok((company, download, first))
    })
    .await?;
    let disposition = format!(
        "attachment; filename=\"{}.{}\"",
        download.file.sha256,
        extension(&download.file.media_type)
    );
    let media_type = download.file.media_type.clone();
    let size = download.file.size;
    let parts = Parts {
        evidence: state.services.evidence_files.clone(),
        company,
        download,
        ready: Some(first),
        next: 1,
        pending: None,
    };
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, media_type))
        .insert_header((header::CONTENT_DISPOSITION, disposition))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .no_chunking(size)
        .streaming(parts))
}

/// The file name's extension for a media type of the list.
fn extension(media_type: &str) -> &'static str {
    match media_type {
        "application/pdf" => "pdf",
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "audio/mpeg" => "mp3",
        "audio/ogg" => "ogg",
        "audio/wav" => "wav",
        "video/mp4" => "mp4",
        _ => "bin",
    }
}

type PendingPart = Pin<
    Box<dyn Future<Output = Result<Result<Vec<u8>, RepoError>, actix_web::error::BlockingError>>>,
>;

/// A download's parts, each read in its own blocking hop while the previous is sent.
struct Parts {
    evidence: EvidenceFiles,
    company: CompanyId,
    download: Download,
    ready: Option<Vec<u8>>,
    next: u32,
    pending: Option<PendingPart>,
}

impl Stream for Parts {
    type Item = Result<Bytes, actix_web::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(part) = this.ready.take() {
            return Poll::Ready(Some(Ok(Bytes::from(part))));
        }
        if this.pending.is_none() {
            if this.next >= this.download.parts {
                return Poll::Ready(None);
            }
            let (evidence, company, download, index) = (
                this.evidence.clone(),
                this.company,
                this.download.clone(),
                this.next,
            );
            this.next += 1;
            this.pending = Some(Box::pin(web::block(move || {
                evidence.read_part(company, &download, index)
            })));
        }
        let Some(pending) = this.pending.as_mut() else {
            return Poll::Ready(None);
        };
        match pending.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(result) => {
                this.pending = None;
                match result {
                    Ok(Ok(part)) => Poll::Ready(Some(Ok(Bytes::from(part)))),
                    Ok(Err(e)) => {
                        // the head is sent: the body ends short, and the cause is logged
                        tracing::error!(
                            error = format!("{e:#}"),
                            "reading an evidence file failed"
                        );
                        Poll::Ready(Some(Err(actix_web::error::ErrorInternalServerError(
                            "evidence file unreadable",
                        ))))
                    }
                    Err(e) => Poll::Ready(Some(Err(actix_web::error::ErrorInternalServerError(e)))),
                }
            }
        }
    }
}
