use diesel::prelude::*;
use domain::ConsentRequest;
use ports::{ConsentRequestRepository, RepoError};

use crate::conn::with_conn;
use crate::models::NewSolicitacaoConsentimento;
use crate::schema::solicitacoes_consentimento;
use crate::PgPool;

/// [`ConsentRequestRepository`] on `solicitacoes_consentimento`.
#[derive(Clone)]
pub struct PgConsentRequestRepository {
    pool: PgPool,
}

impl PgConsentRequestRepository {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

impl ConsentRequestRepository for PgConsentRequestRepository {
    fn insert(&self, request: &ConsentRequest) -> Result<(), RepoError> {
        with_conn(&self.pool, "inserting a consent request", |conn| {
            diesel::insert_into(solicitacoes_consentimento::table)
                .values(NewSolicitacaoConsentimento::from(request))
                .execute(conn)
        })?;
        Ok(())
    }
}
