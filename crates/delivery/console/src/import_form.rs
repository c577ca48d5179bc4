//! `POST /console/importacoes` (`integracao`, CSRF; issue 37, part 4): a file of consents
//! uploaded from the imports' page, a `multipart/form-data` body read as it arrives by
//! `actix-multipart`. The form is exactly two fields, in the page's order: the CSRF token (at
//! most [`MAX_CSRF_BYTES`]), then the file (`arquivo`). The token is read and checked with the
//! session, its scope and the rate limit before a byte of the file is read; the file is then
//! streamed into the API's own reader and staging (`delivery_http::import_upload`: the same
//! line rules, `importacao.max_bytes` and `max_linhas`, bounded memory). Anything else (no
//! token first, another field, a second file after the first) refuses the whole form, and
//! nothing of the import stays: its lines are registered only once the whole file was read.

use std::pin::Pin;

use actix_multipart::{Field, Multipart, MultipartError};
use actix_web::error::PayloadError;
use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use delivery_http::import_file::Format;
use delivery_http::import_upload::Upload;
use delivery_http::ApiError;
use futures_core::Stream;
use maud::html;

use crate::home::thousands;
use crate::imports_page::IMPORTERS;
use crate::layout;
use crate::visit::{log_action, see_other, Visit};

const ROUTE: &str = "/console/importacoes";
/// The form's fields, in order.
const CSRF_FIELD: &str = "csrf";
const FILE_FIELD: &str = "arquivo";
/// A session's CSRF token is 43 characters; anything much longer is not one.
const MAX_CSRF_BYTES: usize = 256;

/// Why the form was refused before anything was imported: its status and the sentence shown.
struct Refused(StatusCode, String);

impl Refused {
    fn bad(why: &str) -> Self {
        Refused(StatusCode::BAD_REQUEST, why.to_owned())
    }
}

/// The next item of a stream (`Multipart`, a `Field`).
async fn next<S: Stream + Unpin>(stream: &mut S) -> Option<S::Item> {
    std::future::poll_fn(|cx| Pin::new(&mut *stream).poll_next(cx)).await
}

pub async fn upload(visit: Visit, payload: web::Payload) -> HttpResponse {
    let mut form = Multipart::new(visit.req.headers(), payload);
    let csrf = match csrf_field(&mut form).await {
        Ok(csrf) => csrf,
        Err(Refused(status, why)) => return refused_page(status, &why),
    };
    // the session, the token, the scope and the rate limit, before the file is read
    let outcome = visit
        .signed_in(ROUTE, IMPORTERS, Some(&csrf), |_, call| {
            Ok(call.company().id)
        })
        .await;
    let (signed, company) = match outcome {
        Ok(done) => done,
        Err(refusal) => return refusal.page(true),
    };
    let mut file = match next(&mut form).await {
        Some(Ok(field)) if field.name() == Some(FILE_FIELD) => field,
        Some(Ok(_)) => {
            return refused_page(
                StatusCode::BAD_REQUEST,
                "O formulário traz um campo que não é o arquivo. Nada foi importado.",
            )
        }
        Some(Err(e)) => return refused_page(status_of_form_error(&e), FORM_UNREADABLE),
        None => return refused_page(StatusCode::BAD_REQUEST, "Escolha um arquivo."),
    };
    let Some(format) = format_of(&file) else {
        return refused_page(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Envie um arquivo CSV (.csv) ou JSON Lines (.jsonl). Nada foi importado.",
        );
    };
    let imports = &visit.state.services.imports;
    let limits = imports.limits();
    let upload = Upload::start(imports, company, format);
    let mut broken: Option<Refused> = None;
    let mut stopped = false;
    while let Some(chunk) = next(&mut file).await {
        match chunk {
            Ok(chunk) => {
                // the reader stopped (a limit, a bad CSV header): its answer says why
                if !upload.send(chunk).await {
                    stopped = true;
                    break;
                }
            }
            Err(e) => {
                broken = Some(Refused(
                    status_of_form_error(&e),
                    FORM_UNREADABLE.to_owned(),
                ));
                break;
            }
        }
    }
    drop(file);
    // nothing may follow the file: a second file (or any field) refuses the whole form
    if broken.is_none() && !stopped {
        match next(&mut form).await {
            None => {}
            Some(Ok(_)) => {
                broken = Some(Refused::bad(
                    "O formulário deve trazer um só arquivo. Nada foi importado.",
                ))
            }
            Some(Err(e)) => {
                broken = Some(Refused(
                    status_of_form_error(&e),
                    FORM_UNREADABLE.to_owned(),
                ))
            }
        }
    }
    let outcome = upload.finish(broken.is_some()).await;
    match (outcome, broken) {
        (Ok(status), None) => {
            log_action(&signed.call, ROUTE, status.id);
            see_other(&format!("/console/importacoes/{}", status.id))
        }
        // broken: the reader was told so, and nothing of the import stays
        (_, Some(Refused(status, why))) => refused_page(status, &why),
        (Err(e), None) => match file_refusal(&e, limits) {
            Some(Refused(status, why)) => refused_page(status, &why),
            None => crate::refusal::Refusal::from(e).page(true),
        },
    }
}

const FORM_UNREADABLE: &str =
    "O formulário não pôde ser lido até o fim. Nada foi importado. Envie o arquivo de novo.";

/// The form's first field, the session's CSRF token, read whole (it is a few bytes).
async fn csrf_field(form: &mut Multipart) -> Result<String, Refused> {
    let mut field = match next(form).await {
        Some(Ok(field)) if field.name() == Some(CSRF_FIELD) => field,
        Some(Ok(_)) => {
            return Err(Refused::bad(
                "O formulário não começa pelo código de segurança da sessão. Nada foi \
                 importado. Volte à página e envie o arquivo de novo.",
            ))
        }
        Some(Err(e)) => {
            return Err(Refused(
                status_of_form_error(&e),
                FORM_UNREADABLE.to_owned(),
            ))
        }
        None => return Err(Refused::bad("O formulário veio vazio.")),
    };
    let mut token = Vec::new();
    while let Some(chunk) = next(&mut field).await {
        let chunk =
            chunk.map_err(|e| Refused(status_of_form_error(&e), FORM_UNREADABLE.to_owned()))?;
        if token.len() + chunk.len() > MAX_CSRF_BYTES {
            return Err(Refused::bad(
                "O código de segurança do formulário é longo demais. Nada foi importado.",
            ));
        }
        token.extend_from_slice(&chunk);
    }
    String::from_utf8(token).map_err(|_| Refused::bad("O código de segurança não é texto."))
}

/// The file's format: by its name's extension (`.csv`; `.jsonl`, `.ndjson`, `.json`, as the
/// CLI's), else by the media type the browser gave it.
fn format_of(field: &Field) -> Option<Format> {
    let by_name = field
        .content_disposition()
        .and_then(|d| d.get_filename())
        .and_then(|name| name.rsplit_once('.'))
        .and_then(
            |(_, extension)| match extension.to_ascii_lowercase().as_str() {
                "csv" => Some(Format::Csv),
                "jsonl" | "ndjson" | "json" => Some(Format::JsonLines),
                _ => None,
            },
        );
    by_name.or_else(|| {
        field
            .content_type()
            .and_then(|m| Format::of_content_type(m.essence_str()))
    })
}

/// A form that broke off: over the body's bound (413), timed out (408), or malformed (400).
fn status_of_form_error(e: &MultipartError) -> StatusCode {
    match e {
        MultipartError::Payload(PayloadError::Overflow) => StatusCode::PAYLOAD_TOO_LARGE,
        MultipartError::Payload(p) if delivery_http::edge::BodyTimedOut::is(p) => {
            StatusCode::REQUEST_TIMEOUT
        }
        _ => StatusCode::BAD_REQUEST,
    }
}

/// The file as a whole refused by the reader (nothing of it stays): a limit, a bad CSV header.
fn file_refusal(e: &ApiError, limits: application::ImportLimits) -> Option<Refused> {
    Some(match e {
        ApiError::PayloadTooLarge { .. } => Refused(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "O arquivo passa de {} bytes, o limite de uma importação. Nada foi importado.",
                thousands(limits.max_bytes)
            ),
        ),
        ApiError::TooManyLines { .. } => Refused(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "O arquivo passa de {} linhas, o limite de uma importação. Nada foi importado.",
                thousands(limits.max_lines)
            ),
        ),
        // the CSV header's column names (never a line's values), or an unreadable body
        ApiError::BadRequest(why) => Refused(
            StatusCode::BAD_REQUEST,
            format!("O arquivo não pôde ser lido: {why}. Nada foi importado."),
        ),
        _ => return None,
    })
}

/// The refusal's page: why, and the way back to the form.
fn refused_page(status: StatusCode, why: &str) -> HttpResponse {
    layout::page(
        status,
        "Arquivo não importado",
        None,
        html! {
            p role="alert" { (why) }
            p { a href="/console/importacoes" { "Voltar às importações" } }
        },
    )
}
