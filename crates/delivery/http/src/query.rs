//! The query-string extractor of every route: like actix-web's `web::Query`, but a value that
//! does not fit is answered 400 naming the parameter that failed (`criadoDe`, `limite`, ...), never
//! echoing the value (a query string may carry a CPF).

use std::future::{ready, Ready};
use std::ops::Deref;

use actix_web::{dev::Payload, FromRequest, HttpRequest};
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// The decoded query string of a request.
#[derive(Debug)]
pub struct Query<T>(pub T);

impl<T> Query<T> {
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> Deref for Query<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: DeserializeOwned> FromRequest for Query<T> {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(parse(req.query_string()).map(Query))
    }
}

/// Decodes `query` into `T`; the error names the parameter, not its value.
pub fn parse<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    let pairs = serde_urlencoded::Deserializer::new(form_urlencoded_pairs(query));
    serde_path_to_error::deserialize(pairs).map_err(|e| {
        let parameter = e.path().to_string();
        ApiError::BadRequest(if parameter.is_empty() || parameter == "." {
            "parâmetro de consulta inválido ou desconhecido".to_owned()
        } else {
            format!("o parâmetro de consulta {parameter} é inválido")
        })
    })
}

fn form_urlencoded_pairs(query: &str) -> form_urlencoded::Parse<'_> {
    form_urlencoded::parse(query.as_bytes())
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Filtro {
        criado_de: Option<DateTime<Utc>>,
        limite: Option<u32>,
        cpf_titular: Option<String>,
    }

    fn message(query: &str) -> String {
        match parse::<Filtro>(query) {
            Err(ApiError::BadRequest(detail)) => detail,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_parameter_that_failed_is_named_and_its_value_is_not_echoed() {
        assert_eq!(
            message("criadoDe=ontem&limite=10"),
            "o parâmetro de consulta criadoDe é inválido"
        );
        assert_eq!(
            message("limite=muitos&cpfTitular=52998224725"),
            "o parâmetro de consulta limite é inválido"
        );
        assert!(!message("limite=52998224725x").contains("52998224725"));
    }

    #[test]
    fn a_valid_query_decodes() {
        let f: Filtro = parse("criadoDe=2026-01-01T00:00:00Z&limite=5").unwrap();
        assert_eq!(f.limite, Some(5));
        assert!(f.criado_de.is_some());
    }
}
