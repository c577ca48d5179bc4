//! The subject's evidence bundle (issue 38, part 2; `auditor` scope):
//! `GET /console/titulares/<token>/pacote`, one ZIP holding, for every request of the subject in
//! this company, its signed receipt, its ISO/IEC TS 27560 record and its inclusion proofs, with
//! the checkpoint they prove against (cosigned by the witnesses), the witnesses' verifier keys,
//! the JWKS and a README in Portuguese on checking it offline
//! (`python3 scripts/verify_audit.py --pacote <dir>`).
//!
//! Every file is what the API answers for the same request, made by the same application
//! services (`AuditLog::receipt`, `ConsentRecords::execute`, `AuditLog::proofs`) and the same
//! DTOs: no second implementation. A read that fails for one request (a record missing a
//! mandatory field, a request without a receipt) puts the API's error envelope in its place
//! (`<name>.erro.json`), and the README says so. Recorded in the access log, every request of
//! the bundle in one row.

use std::io::{Cursor, Write};

use actix_web::http::header::{self, HeaderValue};
use actix_web::{web, HttpResponse};
use application::SubjectExportQuery;
use delivery_http::access_log::record_read;
use delivery_http::blocking::check_rate;
use delivery_http::dto::audit::{Jwk, Jwks, ProvasSolicitacao};
use delivery_http::dto::consent_read::Solicitacao;
use delivery_http::dto::record::{consent_record, context_url};
use delivery_http::routes::audit::audit_log;
use delivery_http::ApiError;
use domain::{Envelope, Scope};
use maud::html;
use serde_json::{json, Value};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use crate::layout;
use crate::session::SESSION_COOKIE;
use crate::subject_page::titles_of;
use crate::subjects::{form, TITLE};
use crate::visit::Visit;

/// The template the access log records.
pub const ROUTE: &str = "/console/titulares/{token}/pacote";
/// The subject's requests one bundle holds at most (5 pages of the export); past it the README
/// says the bundle is cut and how many it holds.
pub const MAX_REQUESTS: usize = 500;
const EXPORT_PAGE: u32 = 100;

/// One request's files.
struct Evidence {
    item: Solicitacao,
    /// The compact JWS, or the error envelope.
    receipt: Result<String, Value>,
    /// The JSON-LD record, or the error envelope.
    record: Result<Value, Value>,
    /// `{"data": {"checkpoint", "entradas"}}` as the API's `.../provas`, or the error envelope.
    proofs: Result<Value, Value>,
}

/// What the bundle holds besides the requests.
struct Bundle {
    evidence: Vec<Evidence>,
    titles: std::collections::BTreeMap<String, Option<String>>,
    cut: bool,
    checkpoint: Option<String>,
    jwks: Value,
}

enum Lookup {
    Found(Box<Bundle>),
    Unknown,
}

fn envelope(e: ApiError) -> Value {
    e.envelope_json()
}

/// `GET /console/titulares/{token}/pacote`: the ZIP (`attachment`).
pub async fn download(visit: Visit, path: web::Path<String>) -> HttpResponse {
    let token = path.into_inner();
    let cookie = visit.cookie(SESSION_COOKIE).unwrap_or_default();
    let searches = visit.console.searches.clone();
    let rows = visit.console.subject_rows.clone();
    let limiter = delivery_http::rate_limit::current_limiter();
    let context = context_url(&visit.req);
    let outcome = visit
        .signed_in(ROUTE, &[Scope::Auditor], None, move |s, call| {
            let company = call.company();
            let Some(cpf) = searches.find(company.id, &cookie, &token)? else {
                return Ok(Lookup::Unknown);
            };
            let weight = rows.weight(company.id);
            if weight > 0 {
                check_rate(limiter.as_deref(), call.caller.quota_of, weight)?;
            }
            let log = audit_log(s)?;
            // the subject's requests, oldest first, at most MAX_REQUESTS
            let mut items = Vec::new();
            let mut cursor = None;
            let mut cut = false;
            loop {
                let page = s.export_subject.execute(
                    company,
                    SubjectExportQuery {
                        subject_cpf: Some(cpf.clone()),
                        cursor: cursor.take(),
                        limit: Some(EXPORT_PAGE),
                    },
                )?;
                items.extend(
                    page.items
                        .into_iter()
                        .map(|r| Solicitacao::from_domain(r.request, false, None)),
                );
                match page.next_cursor {
                    Some(next) if items.len() < MAX_REQUESTS => cursor = Some(next),
                    Some(_) => {
                        cut = true;
                        break;
                    }
                    None => break,
                }
            }
            if items.len() > MAX_REQUESTS {
                items.truncate(MAX_REQUESTS);
                cut = true;
            }
            let mut evidence = Vec::with_capacity(items.len());
            let mut checkpoint = None;
            for item in items {
                let id = item.id;
                let receipt = log
                    .receipt(company, id)
                    .map(|r| r.jws)
                    .map_err(|e| envelope(e.into()));
                let record = match s.consent_records.execute(company, id) {
                    Ok(source) => Ok(consent_record(&source, &context)),
                    Err(e) => Err(envelope(e.into())),
                };
                let proofs = match log.proofs(company, id) {
                    Ok(proofs) => {
                        let proofs = ProvasSolicitacao::from(proofs);
                        if checkpoint.is_none() {
                            checkpoint.clone_from(&proofs.checkpoint);
                        }
                        Ok(json!(Envelope::ok(proofs)))
                    }
                    Err(e) => Err(envelope(e.into())),
                };
                evidence.push(Evidence {
                    item,
                    receipt,
                    record,
                    proofs,
                });
            }
            if checkpoint.is_none() {
                checkpoint = log.checkpoint(company).ok();
            }
            let jwks = json!(Jwks {
                keys: log
                    .published_keys()
                    .iter()
                    .cloned()
                    .map(Jwk::from)
                    .collect(),
            });
            let titles = titles_of(
                s,
                company,
                evidence.iter().map(|e| e.item.template_id.as_str()),
            )?;
            record_read(
                s,
                call,
                evidence.iter().map(|e| (e.item.id, e.item.hash.as_str())),
            )?;
            rows.read(company.id, evidence.len() as u64 * 3);
            Ok(Lookup::Found(Box::new(Bundle {
                evidence,
                titles,
                cut,
                checkpoint,
                jwks,
            })))
        })
        .await;
    let bundle = match outcome {
        Ok((_, Lookup::Found(bundle))) => bundle,
        Ok((signed, Lookup::Unknown)) => {
            return layout::page(
                actix_web::http::StatusCode::NOT_FOUND,
                TITLE,
                Some(&signed),
                html! {
                    (form(&signed, Some("Esta busca expirou ou não é desta sessão: busque o CPF de novo.")))
                },
            )
        }
        Err(refusal) => return refusal.page(false),
    };
    let witnesses = visit.console.witness_keys.clone();
    let zip = match web::block(move || zip_of(&bundle, &witnesses)).await {
        Ok(Ok(bytes)) => bytes,
        _ => {
            return layout::page(
                actix_web::http::StatusCode::INTERNAL_SERVER_ERROR,
                "Erro",
                None,
                html! { p role="alert" { "Não foi possível montar o pacote; tente de novo." } },
            );
        }
    };
    let mut res = HttpResponse::Ok().body(zip);
    layout::secure_headers(&mut res, "application/zip");
    let name = format!(
        "attachment; filename=\"pacote-evidencias-{}.zip\"",
        chrono::Utc::now().format("%Y%m%d-%H%M%S")
    );
    if let Ok(value) = HeaderValue::from_str(&name) {
        res.headers_mut().insert(header::CONTENT_DISPOSITION, value);
    }
    res
}

/// The ZIP's bytes: stored, not compressed (a few kilobytes a request; no compression code to
/// build or to trust).
fn zip_of(bundle: &Bundle, witnesses: &[String]) -> zip::result::ZipResult<Vec<u8>> {
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
    let file = |zip: &mut ZipWriter<Cursor<Vec<u8>>>, name: &str, bytes: &[u8]| {
        zip.start_file(name, options)?;
        zip.write_all(bytes)?;
        Ok::<(), zip::result::ZipError>(())
    };
    let pretty = |v: &Value| serde_json::to_vec_pretty(v).unwrap_or_default();
    file(&mut zip, "LEIAME.md", readme(bundle, witnesses).as_bytes())?;
    file(&mut zip, "jwks.json", &pretty(&bundle.jwks))?;
    let mut vkeys = witnesses.join("\n");
    if !vkeys.is_empty() {
        vkeys.push('\n');
    }
    file(&mut zip, "testemunhas.txt", vkeys.as_bytes())?;
    if let Some(note) = &bundle.checkpoint {
        file(&mut zip, "checkpoint.txt", note.as_bytes())?;
    }
    let mut index = Vec::new();
    for e in &bundle.evidence {
        let dir = format!("solicitacoes/{}", e.item.id);
        match &e.receipt {
            Ok(jws) => file(&mut zip, &format!("{dir}/recibo.jws"), jws.as_bytes())?,
            Err(env) => file(&mut zip, &format!("{dir}/recibo.erro.json"), &pretty(env))?,
        }
        match &e.record {
            Ok(record) => file(&mut zip, &format!("{dir}/registro.jsonld"), &pretty(record))?,
            Err(env) => file(&mut zip, &format!("{dir}/registro.erro.json"), &pretty(env))?,
        }
        match &e.proofs {
            Ok(proofs) => file(&mut zip, &format!("{dir}/provas.json"), &pretty(proofs))?,
            Err(env) => file(&mut zip, &format!("{dir}/provas.erro.json"), &pretty(env))?,
        }
        index.push(json!({
            "id": e.item.id,
            "casoDeUsoIdTemplate": e.item.template_id,
            "casoDeUso": bundle.titles.get(&e.item.template_id).cloned().flatten(),
            "status": e.item.status,
            "criadoEm": e.item.created_at,
            "recibo": e.receipt.is_ok(),
            "registro": e.record.is_ok(),
            "provas": e.proofs.is_ok(),
        }));
    }
    file(
        &mut zip,
        "solicitacoes.json",
        &pretty(&json!({ "solicitacoes": index, "cortado": bundle.cut })),
    )?;
    Ok(zip.finish()?.into_inner())
}

/// The README: what the bundle holds and how to check it with no network.
fn readme(bundle: &Bundle, witnesses: &[String]) -> String {
    let missing: Vec<String> = bundle
        .evidence
        .iter()
        .filter(|e| e.record.is_err() || e.receipt.is_err() || e.proofs.is_err())
        .map(|e| {
            let mut what = Vec::new();
            if e.receipt.is_err() {
                what.push("recibo");
            }
            if e.record.is_err() {
                what.push("registro ISO 27560");
            }
            if e.proofs.is_err() {
                what.push("provas");
            }
            format!(
                "- `{}`: sem {} (veja os arquivos `*.erro.json`)",
                e.item.id,
                what.join(", ")
            )
        })
        .collect();
    let mut text = format!(
        "# Pacote de evidências de um titular\n\n\
         Gerado em {} (UTC) pelo console de consentimentos. Contém {} do titular nesta \
         empresa, da mais antiga à mais recente{}.\n\n\
         ## O que há aqui\n\n\
         - `solicitacoes.json`: a lista das solicitações (id, caso de uso, status, criação) e o \
         que há de cada uma.\n\
         - `solicitacoes/<id>/recibo.jws`: o recibo assinado (JWS compacto, EdDSA), igual ao de \
         `GET /api/solicitacao-consentimento/<id>/recibo`. Não contém o CPF.\n\
         - `solicitacoes/<id>/registro.jsonld`: o registro de consentimento ISO/IEC TS 27560 \
         (JSON-LD), igual ao de `GET .../registro`.\n\
         - `solicitacoes/<id>/provas.json`: as entradas da solicitação no log de auditoria com as \
         provas de inclusão (RFC 9162) no checkpoint, igual a `GET .../provas`.\n\
         - `checkpoint.txt`: o checkpoint (nota assinada C2SP) contra o qual as provas valem, com \
         a assinatura do log e as cossinaturas das testemunhas.\n\
         - `testemunhas.txt`: as chaves de verificação (vkey) das testemunhas configuradas, uma \
         por linha.\n\
         - `jwks.json`: as chaves públicas que assinam recibos e checkpoints.\n\n\
         Quando um item não pôde ser gerado, o pacote traz no lugar dele o erro que a API daria \
         (`<nome>.erro.json`, o envelope com `mensagem` e os campos que faltam).\n\n",
        chrono::Utc::now().format("%d/%m/%Y %H:%M"),
        match bundle.evidence.len() {
            1 => "1 solicitação".to_owned(),
            n => format!("{n} solicitações"),
        },
        if bundle.cut {
            format!(
                " (cortado em {MAX_REQUESTS}: o titular tem mais; peça as demais pela API, \
                 `POST /api/titulares/consentimentos`)"
            )
        } else {
            String::new()
        }
    );
    if missing.is_empty() {
        text.push_str("Todos os recibos, registros e provas estão presentes.\n\n");
    } else {
        text.push_str("## Itens ausentes\n\n");
        text.push_str(&missing.join("\n"));
        text.push_str("\n\n");
    }
    text.push_str(
        "## Como verificar sem rede\n\n\
         Extraia o ZIP e rode, com Python 3 e o pacote `cryptography`:\n\n\
         ```\npython3 scripts/verify_audit.py --pacote <pasta extraída>\n```\n\n\
         O script (no repositório do serviço) não acessa a rede. Ele exige:\n\n\
         1. o checkpoint assinado por uma chave do `jwks.json` e com ao menos uma cossinatura \
         válida de uma testemunha de `testemunhas.txt`;\n\
         2. a assinatura de cada recibo válida com a chave do seu `kid` no `jwks.json`;\n\
         3. cada prova de inclusão levando à raiz do checkpoint, e o `indiceLog` de cada recibo \
         entre as entradas provadas.\n\n\
         Falha (código 1) dizendo o que não confere. Confira também, por outro canal, que as \
         chaves do `jwks.json` são as publicadas em `/.well-known/jwks.json` e que as das \
         testemunhas são as de quem as opera: o pacote prova a coerência dos arquivos entre si \
         e com essas chaves.\n",
    );
    if witnesses.is_empty() {
        text.push_str(
            "\nAtenção: nenhuma testemunha está configurada neste serviço; a verificação do \
             checkpoint vai falhar por falta de cossinatura.\n",
        );
    }
    text
}
