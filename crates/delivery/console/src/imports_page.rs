//! The imports' pages (issue 37, part 4; docs/imports.md, "The console's page"): the company's
//! imports with their progress, one import's progress and its errors by line and field (never a
//! value of the line: the errors name the line and the field), the download of every error, and
//! the cancellation. `integracao` imports and cancels (the upload form: `import_form`);
//! `auditor` reads, as the API's `GET /api/importacoes/{id}` and `.../erros` grant it.

use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use application::{ImportConsents, ImportError, ImportLimits};
use delivery_http::dto::import::Importacao;
use delivery_http::error::Resource;
use delivery_http::import_upload::status_of;
use delivery_http::routes::imports::{ErrorPages, ERRORS_PAGE};
use delivery_http::ApiError;
use domain::{Import, ImportLineError, ImportStatus, Scope};
use maud::{html, Markup};
use serde::Deserialize;
use uuid::Uuid;

use crate::home::thousands;
use crate::human::{badge, when, when_or_dash};
use crate::layout::{self, post_form, scroll_box};
use crate::visit::{csrf_of, log_action, see_other, SignedIn, Visit};

/// Imports per page of the list.
const PAGE_SIZE: u32 = 20;
/// Errors shown on an import's page (the rest in the download).
const ERRORS_SHOWN: u32 = 100;
const TITLE: &str = "Importações";

/// Who reads the imports' pages: who imports, and the DPO.
pub(crate) const READERS: &[Scope] = &[Scope::Integration, Scope::Auditor];
/// Who imports and cancels.
pub(crate) const IMPORTERS: &[Scope] = &[Scope::Integration];

fn parse_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::NotFound(Resource::Import))
}

/// An import's status as a badge (`registrando` → "Registrando", ...).
fn status_badge(status: ImportStatus) -> Markup {
    let label = match status {
        ImportStatus::Validando => "Lendo o arquivo",
        ImportStatus::Registrando => "Registrando no PGCC",
        ImportStatus::Concluida => "Concluída",
        ImportStatus::Cancelada => "Cancelada",
    };
    badge(status.as_str(), Some(label))
}

/// The list's query: `antes`, the id of the last import of the previous page.
#[derive(Deserialize, Default)]
pub struct ListQuery {
    #[serde(default)]
    antes: String,
}

/// `GET /console/importacoes?antes=<id>`: the upload form (`integracao`) and the company's
/// imports, newest first, [`PAGE_SIZE`] a page; the next page starts after the last one shown.
pub async fn list(visit: Visit, query: web::Query<ListQuery>) -> HttpResponse {
    let before = Some(query.antes.trim().to_owned()).filter(|a| !a.is_empty());
    let outcome = visit
        .signed_in("/console/importacoes", READERS, None, move |s, call| {
            let before = before.as_deref().map(parse_id).transpose()?;
            let imports = s.imports.list(call.company().id, before, PAGE_SIZE + 1)?;
            let rows = imports
                .iter()
                .take(PAGE_SIZE as usize)
                .map(|i| status_of(&s.imports, i).map(|st| (i.created_at, st)))
                .collect::<Result<Vec<_>, _>>()?;
            let more = imports.len() > PAGE_SIZE as usize;
            Ok((rows, more, s.imports.limits()))
        })
        .await;
    match outcome {
        Ok((signed, (rows, more, limits))) => layout::page(
            StatusCode::OK,
            TITLE,
            Some(&signed),
            list_view(&signed, &rows, more, limits),
        ),
        Err(refusal) => refusal.page(false),
    }
}

/// The list page: the form for who imports, then the imports.
fn list_view(
    signed: &SignedIn,
    rows: &[(chrono::DateTime<chrono::Utc>, Importacao)],
    more: bool,
    limits: ImportLimits,
) -> Markup {
    let imports = signed.scopes().intersects(domain::Scopes::of(IMPORTERS));
    html! {
        @if imports { (upload_form(signed, limits)) }
        section aria-labelledby="importacoes-empresa" {
            h2 id="importacoes-empresa" { "Importações da empresa" }
            @if rows.is_empty() {
                p { "Nenhuma importação." }
            } @else {
                (imports_table(rows))
                @if more {
                    @if let Some((_, last)) = rows.last() {
                        p { a href={ "/console/importacoes?antes=" (last.id) } { "Próximas " (PAGE_SIZE) } }
                    }
                }
            }
        }
    }
}

/// The upload form. The CSRF token is the form's first field and the file its second and last:
/// the server reads them in that order and refuses anything else (`import_form`).
fn upload_form(signed: &SignedIn, limits: ImportLimits) -> Markup {
    html! {
        section aria-labelledby="enviar-arquivo" {
            h2 id="enviar-arquivo" { "Enviar um arquivo" }
            p {
                "Um arquivo CSV (cabeçalho com os nomes dos campos, separado por vírgula ou \
                 ponto e vírgula) ou JSON Lines (um objeto por linha), com os campos da criação \
                 de uma solicitação mais idExterno e origem. Até "
                (bytes_label(limits.max_bytes)) " e " (thousands(limits.max_lines)) " linhas. \
                 Cada linha é validada antes de qualquer registro; as válidas são registradas \
                 no PGCC aos poucos, e os erros são mostrados por linha e campo."
            }
            form method="post" action="/console/importacoes" enctype="multipart/form-data" {
                input type="hidden" name="csrf" value=(signed.csrf);
                label for="arquivo" { "Arquivo (.csv ou .jsonl)" }
                input id="arquivo" name="arquivo" type="file" required
                    accept=".csv,.jsonl,.ndjson,.json,text/csv,application/x-ndjson";
                button type="submit" { "Enviar" }
            }
        }
    }
}

/// `2 GiB`, `512 MiB`, or bytes with their dots.
fn bytes_label(n: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    const GIB: u64 = 1024 * MIB;
    if n >= GIB && n.is_multiple_of(GIB) {
        format!("{} GiB", thousands(n / GIB))
    } else if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", thousands(n / MIB))
    } else {
        format!("{} bytes", thousands(n))
    }
}

fn imports_table(rows: &[(chrono::DateTime<chrono::Utc>, Importacao)]) -> Markup {
    scroll_box(
        "Importações da empresa",
        html! {
            table {
                caption { "Importações da empresa, da mais recente à mais antiga" }
                thead {
                    tr {
                        th scope="col" { "Importação" }
                        th scope="col" { "Recebida em" }
                        th scope="col" { "Situação" }
                        th scope="col" { "Linhas" }
                        th scope="col" { "Válidas" }
                        th scope="col" { "Registradas" }
                        th scope="col" { "Falhas" }
                        th scope="col" { "Fim estimado" }
                    }
                }
                tbody {
                    @for (received, i) in rows {
                        tr {
                            td { a href={ "/console/importacoes/" (i.id) } { (i.id) } }
                            td { (when(*received)) }
                            td { (status_badge(i.status)) }
                            td { (thousands(i.linhas)) }
                            td { (thousands(i.validas)) }
                            td { (thousands(i.registradas)) }
                            td { (thousands(i.falhas)) }
                            td { (when_or_dash(i.fim_estimado)) }
                        }
                    }
                }
            }
        },
    )
}

/// `GET /console/importacoes/{id}`: the import's progress, its first [`ERRORS_SHOWN`] errors,
/// the download of all of them, and (for who imports, while it runs) the cancel button.
/// Another company's import, an unknown id or one that is not a UUID: 404.
pub async fn page(visit: Visit, path: web::Path<String>) -> HttpResponse {
    let id = parse_id(&path);
    let outcome = visit
        .signed_in(
            "/console/importacoes/{id}",
            READERS,
            None,
            move |s, call| {
                let id = id?;
                let import = s.imports.get(call.company().id, id)?;
                let status = status_of(&s.imports, &import)?;
                let errors = s
                    .imports
                    .errors(call.company().id, id, None, ERRORS_SHOWN)?;
                Ok((import, status, errors))
            },
        )
        .await;
    match outcome {
        Ok((signed, (import, status, errors))) => layout::page(
            StatusCode::OK,
            "Importação",
            Some(&signed),
            import_view(&signed, &import, &status, &errors),
        ),
        Err(refusal) => refusal.page(false),
    }
}

fn import_view(
    signed: &SignedIn,
    import: &Import,
    status: &Importacao,
    errors: &[(u64, ImportLineError)],
) -> Markup {
    let running = matches!(
        import.status,
        ImportStatus::Validando | ImportStatus::Registrando
    );
    let cancels = running && signed.scopes().intersects(domain::Scopes::of(IMPORTERS));
    let settled = status.registradas + status.falhas;
    html! {
        dl {
            dt { "Identificador" } dd { (status.id) }
            dt { "Situação" } dd { (status_badge(status.status)) }
            dt { "Recebida em" } dd { (when(import.created_at)) }
            dt { "Linhas lidas" } dd { (thousands(status.linhas)) }
            dt { "Válidas" } dd { (thousands(status.validas)) }
            dt { "Registradas no PGCC" } dd { (thousands(status.registradas)) }
            dt { "Falhas" } dd { (thousands(status.falhas)) }
            @if running {
                dt { "Fim estimado" } dd { (when_or_dash(status.fim_estimado)) }
            } @else {
                dt { "Terminada em" } dd { (when_or_dash(import.finished_at)) }
            }
        }
        p {
            (thousands(settled)) " de " (thousands(status.linhas)) " linhas tratadas. "
            @if running {
                "O fim estimado considera o limite de chamadas das importações ao PGCC, \
                 dividido entre as empresas que importam ao mesmo tempo. "
                a href={ "/console/importacoes/" (status.id) } { "Atualizar" }
            }
        }
        @if cancels {
            (post_form(
                &format!("/console/importacoes/{}/cancelar", status.id),
                &signed.csrf,
                html! {},
                "Cancelar a importação",
            ))
            p { "As linhas já registradas permanecem; nenhuma outra é registrada." }
        }
        section aria-labelledby="erros" {
            h2 id="erros" { "Erros por linha" }
            @if errors.is_empty() {
                p { "Nenhum erro até agora." }
            } @else {
                @if errors.len() as u32 >= ERRORS_SHOWN {
                    p { "As primeiras " (ERRORS_SHOWN) " regras quebradas; todas estão no arquivo abaixo." }
                }
                (errors_table(errors))
            }
            p {
                a href={ "/console/importacoes/" (status.id) "/erros" } download {
                    "Baixar todos os erros (CSV)"
                }
            }
        }
        p { a href="/console/importacoes" { "Voltar às importações" } }
    }
}

fn errors_table(errors: &[(u64, ImportLineError)]) -> Markup {
    scroll_box(
        // not the section's own name: two regions of one name are one landmark too many (axe)
        "Tabela dos erros",
        html! {
            table {
                caption { "Cada regra quebrada, pela linha do arquivo e o campo (nunca o valor)" }
                thead {
                    tr {
                        th scope="col" { "Linha" }
                        th scope="col" { "Campo" }
                        th scope="col" { "Erro" }
                    }
                }
                tbody {
                    @for (_, e) in errors {
                        tr {
                            td { (thousands(e.line)) }
                            td { (e.field) }
                            td { (e.message) }
                        }
                    }
                }
            }
        },
    )
}

/// `GET /console/importacoes/{id}/erros`: every error of the import as CSV (`linha,campo,
/// mensagem`), streamed a page at a time as the API's `.../erros?formato=csv` is, as a file
/// (`erros-importacao-<id>.csv`).
pub async fn errors(visit: Visit, path: web::Path<String>) -> HttpResponse {
    let id = parse_id(&path);
    let outcome = visit
        .signed_in(
            "/console/importacoes/{id}/erros",
            READERS,
            None,
            move |s, call| {
                let id = id?;
                let first = s.imports.errors(call.company().id, id, None, ERRORS_PAGE)?;
                Ok((call.company().id, id, first))
            },
        )
        .await;
    let (_, (company, id, first)) = match outcome {
        Ok(done) => done,
        Err(refusal) => return refusal.page(false),
    };
    let imports: ImportConsents = visit.state.services.imports.clone();
    let mut res = HttpResponse::Ok().streaming(ErrorPages::new(imports, company, id, true, first));
    layout::secure_headers(&mut res, "text/csv; charset=utf-8");
    if let Ok(value) = HeaderValue::from_str(&format!(
        "attachment; filename=\"erros-importacao-{id}.csv\""
    )) {
        res.headers_mut().insert(header::CONTENT_DISPOSITION, value);
    }
    res
}

/// `POST /console/importacoes/{id}/cancelar` (`integracao`, CSRF): no further line is
/// registered; back to the import's page. An import that had ended: 409, nothing changed.
pub async fn cancel(visit: Visit, path: web::Path<String>, body: web::Bytes) -> HttpResponse {
    let route = "/console/importacoes/{id}/cancelar";
    let csrf = csrf_of(&body);
    let id = parse_id(&path);
    let outcome = visit
        .signed_in(route, IMPORTERS, Some(&csrf), move |s, call| {
            let id = id?;
            let import = s
                .imports
                .cancel(call.company().id, id)
                .map_err(|e| match e {
                    ImportError::NotFound => ApiError::NotFound(Resource::Import),
                    e => ApiError::from(e),
                })?;
            if import.status == ImportStatus::Concluida {
                return Err(ApiError::Conflict(
                    "A importação já terminou (concluída); não há o que cancelar.".to_owned(),
                ));
            }
            log_action(call, route, id);
            Ok(id)
        })
        .await;
    match outcome {
        Ok((_, id)) => see_other(&format!("/console/importacoes/{id}")),
        Err(refusal) => refusal.page(true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_written_as_people_read_them() {
        assert_eq!(bytes_label(2 * 1024 * 1024 * 1024), "2 GiB");
        assert_eq!(bytes_label(20 * 1024 * 1024), "20 MiB");
        assert_eq!(bytes_label(1_500), "1.500 bytes");
    }
}
