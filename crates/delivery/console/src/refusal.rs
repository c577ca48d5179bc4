//! Why a console request is not answered with its page, and the page it gets instead.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use delivery_http::ApiError;
use domain::Scopes;
use maud::{html, Markup};

use crate::human::scope_label;
use crate::layout;
use crate::visit::see_other;

/// Why a console request is not answered with its page.
pub enum Refusal {
    /// No live session: to the sign-in page (a GET) or 401 (a form).
    NoSession,
    /// A session cookie that opens no session (made up, expired, or its key revoked): answered
    /// as [`Refusal::NoSession`], and counted as a failed authentication of the client.
    UnknownSession,
    /// The form's CSRF token is missing or wrong: nothing changed.
    BadCsrf,
    /// The session's key lacks every scope that grants the page.
    Forbidden(Scopes),
    /// What the API would have answered.
    Api(ApiError),
}

impl From<ApiError> for Refusal {
    fn from(e: ApiError) -> Self {
        match e {
            ApiError::Unauthorized => Refusal::NoSession,
            e => Refusal::Api(e),
        }
    }
}

/// The link back home that ends every refusal's page.
fn home_link() -> Markup {
    html! { p { a href="/console" { "Início" } } }
}

impl Refusal {
    /// The page of the refusal; `is_form`: the request was a POST.
    pub fn page(self, is_form: bool) -> HttpResponse {
        let signed_out = |status, title, main| layout::page(status, title, None, main);
        match self {
            Refusal::NoSession | Refusal::UnknownSession if !is_form => see_other("/console"),
            Refusal::NoSession | Refusal::UnknownSession => signed_out(
                StatusCode::UNAUTHORIZED,
                "Sessão encerrada",
                html! {
                    p { "Sua sessão terminou ou não existe. Nada foi alterado." }
                    p { a href="/console" { "Entrar novamente" } }
                },
            ),
            Refusal::BadCsrf => signed_out(
                StatusCode::FORBIDDEN,
                "Formulário recusado",
                html! {
                    p {
                        "O formulário não trazia o código de segurança desta sessão. Nada foi \
                         alterado. Volte à página e envie o formulário de novo."
                    }
                    (home_link())
                },
            ),
            Refusal::Forbidden(granted_to) => {
                let names = granted_to.names();
                let scopes: Vec<&str> = names.iter().map(|s| scope_label(s)).collect();
                signed_out(
                    StatusCode::FORBIDDEN,
                    "Sem permissão",
                    html! {
                        p {
                            "A chave desta sessão não tem o escopo que esta página exige ("
                            (scopes.join(", ")) ")."
                        }
                        (home_link())
                    },
                )
            }
            Refusal::Api(ApiError::NotFound(_)) => signed_out(
                StatusCode::NOT_FOUND,
                "Não encontrado",
                html! {
                    p { "Nada com este identificador para a sua empresa." }
                    (home_link())
                },
            ),
            Refusal::Api(ApiError::RateLimited(status)) => {
                let mut res = signed_out(
                    StatusCode::TOO_MANY_REQUESTS,
                    "Muitas requisições",
                    html! {
                        p {
                            "A empresa passou do seu limite de requisições por segundo (o mesmo \
                             da API). Nada foi feito. Tente de novo em instantes."
                        }
                        (home_link())
                    },
                );
                for (name, value) in status.headers() {
                    res.headers_mut().insert(name, value);
                }
                res
            }
            // a conflict's message is the API's, written for the caller: no row in it
            Refusal::Api(ApiError::Conflict(why)) => signed_out(
                StatusCode::CONFLICT,
                "Não foi possível fazer isto agora",
                html! {
                    p { (why) }
                    (home_link())
                },
            ),
            Refusal::Api(e) => {
                let status = e.status_code();
                if status.is_server_error() {
                    tracing::warn!(status = status.as_u16(), "console page failed: {e}");
                }
                signed_out(
                    status,
                    "Não foi possível atender",
                    html! {
                        p { "O serviço não conseguiu atender agora. Tente de novo em instantes." }
                        (home_link())
                    },
                )
            }
        }
    }
}
