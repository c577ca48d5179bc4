use chrono::{DateTime, Utc};
use diesel::prelude::*;
use uuid::Uuid;

use crate::schema::chaves_idempotencia;

/// The states of a key (column `estado`).
pub const ESTADO_EM_ANDAMENTO: &str = "em_andamento";
pub const ESTADO_CONCLUIDA: &str = "concluida";

/// A row of `chaves_idempotencia`. The kept body may carry a consent's id or a field in error:
/// `Debug` shows its size only.
#[derive(Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = chaves_idempotencia, check_for_backend(diesel::pg::Pg))]
pub struct ChaveIdempotenciaRow {
    pub empresa_id: Uuid,
    pub chave: String,
    pub impressao: String,
    pub estado: String,
    pub recurso_id: Uuid,
    pub dono: Uuid,
    pub bloqueada_ate: Option<DateTime<Utc>>,
    pub status_http: Option<i32>,
    pub corpo: Option<Vec<u8>>,
    pub criado_em: DateTime<Utc>,
    pub concluida_em: Option<DateTime<Utc>>,
}

impl std::fmt::Debug for ChaveIdempotenciaRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChaveIdempotenciaRow")
            .field("empresa_id", &self.empresa_id)
            .field("chave", &self.chave)
            .field("impressao", &self.impressao)
            .field("estado", &self.estado)
            .field("recurso_id", &self.recurso_id)
            .field("dono", &self.dono)
            .field("bloqueada_ate", &self.bloqueada_ate)
            .field("status_http", &self.status_http)
            .field("corpo_len", &self.corpo.as_ref().map(Vec::len))
            .field("criado_em", &self.criado_em)
            .field("concluida_em", &self.concluida_em)
            .finish()
    }
}

/// A new key: `em_andamento`, held by `dono` until `bloqueada_ate`.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = chaves_idempotencia, check_for_backend(diesel::pg::Pg))]
pub struct NewChaveIdempotencia<'a> {
    pub empresa_id: Uuid,
    pub chave: &'a str,
    pub impressao: &'a str,
    pub estado: &'static str,
    pub recurso_id: Uuid,
    pub dono: Uuid,
    pub bloqueada_ate: Option<DateTime<Utc>>,
    pub criado_em: DateTime<Utc>,
}
