use anyhow::anyhow;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use domain::{ConsentStatus, Reason, StatusChange, TransitionCause};
use uuid::Uuid;

use crate::schema::solicitacoes_historico;

/// A row of `solicitacoes_historico`: one status change of a request. `id` (an identity) orders
/// the changes written at the same instant.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = solicitacoes_historico, check_for_backend(diesel::pg::Pg))]
pub struct SolicitacaoHistoricoRow {
    pub id: i64,
    pub solicitacao_id: Uuid,
    pub de: Option<String>,
    pub para: String,
    pub em: DateTime<Utc>,
    pub causa: String,
    pub motivo: Option<String>,
}

impl SolicitacaoHistoricoRow {
    /// The status change; fails only on a name the domain does not know (error texts name the
    /// column).
    pub fn try_into_domain(self) -> anyhow::Result<StatusChange> {
        let status = |raw: &str, column: &str| {
            ConsentStatus::parse(raw)
                .ok_or_else(|| anyhow!("a stored history entry has an unknown {column}"))
        };
        let de = self.de.as_deref().map(|de| status(de, "de")).transpose()?;
        let para = status(&self.para, "para")?;
        let causa = TransitionCause::parse(&self.causa)
            .ok_or_else(|| anyhow!("a stored history entry has an unknown causa"))?;
        Ok(StatusChange {
            from: de,
            to: para,
            at: self.em,
            cause: causa,
            reason: self.motivo.map(Reason::stored),
        })
    }
}

/// A new row of `solicitacoes_historico` (the id is generated).
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = solicitacoes_historico, check_for_backend(diesel::pg::Pg))]
pub struct NewSolicitacaoHistorico {
    /// The request's company (issue 23: every tenant row carries it).
    pub empresa_id: Uuid,
    pub solicitacao_id: Uuid,
    pub de: Option<&'static str>,
    pub para: &'static str,
    pub em: DateTime<Utc>,
    pub causa: &'static str,
    pub motivo: Option<String>,
}

impl NewSolicitacaoHistorico {
    /// The entry with the reason given for the change.
    pub fn with_reason(mut self, motivo: Option<&Reason>) -> Self {
        self.motivo = motivo.map(|m| m.as_str().to_owned());
        self
    }

    /// Request `solicitacao_id` of company `empresa_id` moved from `de` to `para` at `em`,
    /// because of `causa`.
    pub fn new(
        empresa_id: Uuid,
        solicitacao_id: Uuid,
        de: Option<ConsentStatus>,
        para: ConsentStatus,
        em: DateTime<Utc>,
        causa: TransitionCause,
    ) -> Self {
        NewSolicitacaoHistorico {
            empresa_id,
            solicitacao_id,
            de: de.map(ConsentStatus::as_str),
            para: para.as_str(),
            em,
            causa: causa.as_str(),
            motivo: None,
        }
    }
}
