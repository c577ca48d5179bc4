//! What the simulator holds while it runs: the seed, the requests received, the fault rule and
//! the expected token.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::errors::SimError;
use crate::faults::Faults;
use crate::seed::{normalize_cnpj, Seed};
use crate::solicitacao::{NovaSolicitacao, Solicitacao, SolicitacaoStatus, SolicitacaoStatusView};

/// Shared by every worker (behind `web::Data`).
pub struct AppState {
    store: Mutex<Store>,
    pub faults: Faults,
    /// When set, `/pgcc/v1` routes require `Authorization: Bearer <token>`.
    pub token: Option<String>,
}

impl AppState {
    pub fn new(seed: Seed, token: Option<String>) -> Self {
        Self {
            store: Mutex::new(Store {
                seed,
                solicitacoes: Vec::new(),
                status_consultas: BTreeMap::new(),
            }),
            faults: Faults::default(),
            token,
        }
    }

    /// The store, even if a handler panicked while holding it (the data stays usable).
    pub fn store(&self) -> MutexGuard<'_, Store> {
        self.store
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// How a creation ended.
pub enum Created {
    /// A new request (201).
    New(Solicitacao),
    /// The same `referenciaExterna` of the same company was already created (200).
    Existing(Solicitacao),
}

/// A move of a request's status, played by a test on behalf of the subject or the company.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    /// pendente -> ativo
    Aceitar,
    /// pendente -> recusado
    Recusar,
    /// ativo -> revogado
    Revogar,
}

impl Move {
    fn target(self, from: SolicitacaoStatus) -> Option<SolicitacaoStatus> {
        use SolicitacaoStatus::*;
        match (self, from) {
            (Move::Aceitar, Pendente) => Some(Ativo),
            (Move::Recusar, Pendente) => Some(Recusado),
            (Move::Revogar, Ativo) => Some(Revogado),
            _ => None,
        }
    }
}

pub struct Store {
    pub seed: Seed,
    /// Every request created, in arrival order.
    pub solicitacoes: Vec<Solicitacao>,
    /// How many calls of the batch status route asked about each PGCC id (known or not). Kept
    /// when the seed is replaced; cleared by `DELETE /_sim/status-consultas`.
    pub status_consultas: BTreeMap<String, u64>,
}

impl Store {
    /// Creates a request, or returns the one already created with the same external reference
    /// for the same company. The body must already be valid.
    pub fn criar(&mut self, nova: NovaSolicitacao) -> Result<Created, SimError> {
        let cnpj = normalize_cnpj(&nova.cnpj_empresa);
        let empresa = self
            .seed
            .empresa(&cnpj)
            .ok_or_else(|| SimError::not_found("empresa não encontrada"))?;
        if let Some(existing) = self.solicitacoes.iter().find(|s| {
            s.dados.referencia_externa == nova.referencia_externa
                && normalize_cnpj(&s.dados.cnpj_empresa) == cnpj
        }) {
            return Ok(Created::Existing(existing.clone()));
        }
        if empresa
            .vinculo_with_template(&nova.template_id, nova.vinculo_id)
            .is_none()
        {
            return Err(SimError::not_found(
                "caso de uso não encontrado nos vínculos da empresa",
            ));
        }
        let now = Utc::now();
        let solicitacao = Solicitacao {
            id: format!("pgcc-{}", Uuid::new_v4().simple()),
            dados: nova,
            criado_em: now,
            atualizado_em: now,
        };
        self.solicitacoes.push(solicitacao.clone());
        Ok(Created::New(solicitacao))
    }

    /// The company's request with external reference `referencia` (`None` when there is none);
    /// 404 for an unknown company.
    pub fn por_referencia(
        &self,
        cnpj_empresa: &str,
        referencia: Uuid,
    ) -> Result<Option<&Solicitacao>, SimError> {
        let cnpj = normalize_cnpj(cnpj_empresa);
        if self.seed.empresa(&cnpj).is_none() {
            return Err(SimError::not_found("empresa não encontrada"));
        }
        Ok(self.solicitacoes.iter().find(|s| {
            s.dados.referencia_externa == referencia
                && normalize_cnpj(&s.dados.cnpj_empresa) == cnpj
        }))
    }

    pub fn get(&self, id: &str) -> Option<&Solicitacao> {
        self.solicitacoes.iter().find(|s| s.id == id)
    }

    /// The batch status answer for `ids`: the known ones, in the order asked (a repeated id once,
    /// at its first place), with their status as read at `agora`. Counts one query for each
    /// distinct id asked, known or not.
    pub fn consultar_status(
        &mut self,
        ids: &[String],
        agora: DateTime<Utc>,
    ) -> Vec<SolicitacaoStatusView> {
        let mut distintos = Vec::with_capacity(ids.len());
        let mut vistos = HashSet::with_capacity(ids.len());
        for id in ids {
            if vistos.insert(id.as_str()) {
                distintos.push(id.as_str());
            }
        }
        for id in &distintos {
            *self.status_consultas.entry((*id).to_owned()).or_default() += 1;
        }
        // one pass over the store, whatever its size
        let conhecidas: HashMap<&str, &Solicitacao> = self
            .solicitacoes
            .iter()
            .filter(|s| vistos.contains(s.id.as_str()))
            .map(|s| (s.id.as_str(), s))
            .collect();
        distintos
            .into_iter()
            .filter_map(|id| conhecidas.get(id))
            .map(|s| s.status_view_em(agora))
            .collect()
    }

    /// Applies `mv` to request `id`: 404 when unknown, 409 when the move is illegal from its
    /// status as read now (an expired request moves no more).
    pub fn mover(&mut self, id: &str, mv: Move) -> Result<Solicitacao, SimError> {
        let solicitacao = self
            .solicitacoes
            .iter_mut()
            .find(|s| s.id == id)
            .ok_or_else(|| SimError::not_found("solicitação não encontrada"))?;
        let from = solicitacao.status_em(Utc::now());
        let to = mv.target(from).ok_or_else(|| {
            SimError::conflict(format!(
                "transição inválida: {mv:?} a partir de {}",
                status_text(from)
            ))
        })?;
        solicitacao.dados.status = to;
        solicitacao.atualizado_em = Utc::now();
        Ok(solicitacao.clone())
    }
}

fn status_text(status: SolicitacaoStatus) -> &'static str {
    match status {
        SolicitacaoStatus::Pendente => "pendente",
        SolicitacaoStatus::Ativo => "ativo",
        SolicitacaoStatus::Recusado => "recusado",
        SolicitacaoStatus::Expirado => "expirado",
        SolicitacaoStatus::Revogado => "revogado",
    }
}
