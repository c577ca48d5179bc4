//! What the simulator holds while it runs: the seed, the requests received, the fault rule and
//! the expected token.
//!
//! Every lookup a request makes is a hash-map read (the company by CNPJ, a request by PGCC id or
//! by company and external reference), so the simulator answers at the same speed after a
//! million creations as after one: a benchmark measures the service, not the simulator's store.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::errors::SimError;
use crate::faults::Faults;
use crate::seed::{normalize_cnpj, Seed, SeedEmpresa};
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
            store: Mutex::new(Store::new(seed)),
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
    /// ativo -> revogado (the subject revokes, on the admin route)
    Revogar,
    /// pendente or ativo -> revogado: the company's revocation (the contract route), which also
    /// withdraws a request still waiting for the subject's answer
    RevogarPelaEmpresa,
}

impl Move {
    fn target(self, from: SolicitacaoStatus) -> Option<SolicitacaoStatus> {
        use SolicitacaoStatus::*;
        match (self, from) {
            (Move::Aceitar, Pendente) => Some(Ativo),
            (Move::Recusar, Pendente) => Some(Recusado),
            (Move::Revogar, Ativo) => Some(Revogado),
            (Move::RevogarPelaEmpresa, Pendente | Ativo) => Some(Revogado),
            _ => None,
        }
    }
}

pub struct Store {
    seed: Seed,
    /// The seed's companies by normalized CNPJ (the first one when the seed repeats a CNPJ, as
    /// [`Seed::empresa`] finds it).
    empresas: HashMap<String, usize>,
    /// Every request created, in arrival order.
    solicitacoes: Vec<Solicitacao>,
    /// Index into `solicitacoes` by PGCC id.
    por_id: HashMap<String, usize>,
    /// Index into `solicitacoes` by (normalized CNPJ of the company, external reference).
    por_referencia: HashMap<(String, Uuid), usize>,
    /// How many calls of the batch status route asked about each PGCC id (known or not). Kept
    /// when the seed is replaced; cleared by `DELETE /_sim/status-consultas`.
    pub status_consultas: BTreeMap<String, u64>,
    /// How many calls of the use-case list asked about each CNPJ (as it came in the path). Kept
    /// when the seed is replaced; cleared by `DELETE /_sim/casos-de-uso-consultas`.
    pub casos_de_uso_consultas: BTreeMap<String, u64>,
}

impl Store {
    pub fn new(seed: Seed) -> Self {
        let mut store = Store {
            seed: Seed::default(),
            empresas: HashMap::new(),
            solicitacoes: Vec::new(),
            por_id: HashMap::new(),
            por_referencia: HashMap::new(),
            status_consultas: BTreeMap::new(),
            casos_de_uso_consultas: BTreeMap::new(),
        };
        store.set_seed(seed);
        store
    }

    /// Replaces the seed; the requests received are kept.
    pub fn set_seed(&mut self, seed: Seed) {
        let mut empresas = HashMap::with_capacity(seed.empresas.len());
        for (i, empresa) in seed.empresas.iter().enumerate() {
            empresas.entry(normalize_cnpj(&empresa.cnpj)).or_insert(i);
        }
        self.seed = seed;
        self.empresas = empresas;
    }

    /// The company with this CNPJ, masked or not (one hash lookup).
    pub fn empresa(&self, cnpj: &str) -> Option<&SeedEmpresa> {
        self.empresas
            .get(&normalize_cnpj(cnpj))
            .map(|&i| &self.seed.empresas[i])
    }

    /// Every request created, in arrival order.
    pub fn solicitacoes(&self) -> &[Solicitacao] {
        &self.solicitacoes
    }

    /// Creates a request, or returns the one already created with the same external reference
    /// for the same company. The body must already be valid.
    pub fn criar(&mut self, nova: NovaSolicitacao) -> Result<Created, SimError> {
        let cnpj = normalize_cnpj(&nova.cnpj_empresa);
        let empresa = self
            .empresas
            .get(&cnpj)
            .map(|&i| &self.seed.empresas[i])
            .ok_or_else(|| SimError::not_found("empresa não encontrada"))?;
        let chave = (cnpj, nova.referencia_externa);
        if let Some(&i) = self.por_referencia.get(&chave) {
            return Ok(Created::Existing(self.solicitacoes[i].clone()));
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
            status_bruto: None,
            motivo: None,
        };
        let i = self.solicitacoes.len();
        self.por_id.insert(solicitacao.id.clone(), i);
        self.por_referencia.insert(chave, i);
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
        if !self.empresas.contains_key(&cnpj) {
            return Err(SimError::not_found("empresa não encontrada"));
        }
        Ok(self
            .por_referencia
            .get(&(cnpj, referencia))
            .map(|&i| &self.solicitacoes[i]))
    }

    pub fn get(&self, id: &str) -> Option<&Solicitacao> {
        self.por_id.get(id).map(|&i| &self.solicitacoes[i])
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
        distintos
            .into_iter()
            .filter_map(|id| self.get(id))
            .map(|s| s.status_view_em(agora))
            .collect()
    }

    /// Applies `mv` to request `id`, with `motivo` (the reason given, if any; reported by the
    /// status routes until the next move): 404 when unknown, 409 when the move is illegal from
    /// its status as read now (an expired request moves no more).
    pub fn mover(
        &mut self,
        id: &str,
        mv: Move,
        motivo: Option<String>,
    ) -> Result<Solicitacao, SimError> {
        let i = *self
            .por_id
            .get(id)
            .ok_or_else(|| SimError::not_found("solicitação não encontrada"))?;
        let solicitacao = &mut self.solicitacoes[i];
        let from = solicitacao.status_em(Utc::now());
        let to = mv.target(from).ok_or_else(|| {
            SimError::conflict(format!(
                "transição inválida: {mv:?} a partir de {}",
                status_text(from)
            ))
        })?;
        solicitacao.dados.status = to;
        solicitacao.motivo = motivo;
        // the move is what the PGCC reports from now on
        solicitacao.status_bruto = None;
        solicitacao.atualizado_em = Utc::now();
        Ok(solicitacao.clone())
    }

    /// Request `id` reports `bruto` as its status on every contract route from now on (until the
    /// next move); its stored status, from which moves start, is kept. 404 when unknown.
    pub fn definir_status_bruto(
        &mut self,
        id: &str,
        bruto: String,
    ) -> Result<Solicitacao, SimError> {
        let i = *self
            .por_id
            .get(id)
            .ok_or_else(|| SimError::not_found("solicitação não encontrada"))?;
        let solicitacao = &mut self.solicitacoes[i];
        solicitacao.status_bruto = Some(bruto);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::{SeedCasoDeUso, SeedVinculo};

    fn seed() -> Seed {
        Seed {
            empresas: vec![SeedEmpresa {
                cnpj: "11.222.333/0001-81".into(),
                vinculos: vec![SeedVinculo {
                    id: Uuid::from_u128(1),
                    casos_de_uso: vec![SeedCasoDeUso {
                        template_id: "tpl".into(),
                        titulo: "t".into(),
                    }],
                }],
            }],
        }
    }

    fn nova(referencia: u128, cnpj: &str) -> NovaSolicitacao {
        NovaSolicitacao {
            referencia_externa: Uuid::from_u128(referencia),
            cnpj_empresa: cnpj.into(),
            vinculo_id: None,
            template_id: "tpl".into(),
            cpf_titular: "52998224725".into(),
            tipo_titular: "PessoaFisica".into(),
            modalidade_acesso: "Direto".into(),
            cnpj_anuente: None,
            data_expiracao_consentimento: "2030-01-01T00:00:00Z".into(),
            status: SolicitacaoStatus::Pendente,
            data_titular_respondeu_consentimento: None,
            prova_coleta: None,
        }
    }

    #[test]
    fn the_indexes_find_what_was_created_masked_or_not_and_keep_arrival_order() {
        let mut store = Store::new(seed());
        let Ok(Created::New(first)) = store.criar(nova(1, "11222333000181")) else {
            panic!("created");
        };
        let Ok(Created::New(second)) = store.criar(nova(2, "11222333000181")) else {
            panic!("created");
        };
        let Ok(Created::Existing(again)) = store.criar(nova(1, "11.222.333/0001-81")) else {
            panic!("the same reference of the same company");
        };
        assert_eq!(again, first);
        assert_eq!(store.get(&second.id), Some(&second));
        assert_eq!(
            store
                .por_referencia("11.222.333/0001-81", Uuid::from_u128(2))
                .unwrap(),
            Some(&second)
        );
        assert_eq!(
            store
                .por_referencia("11222333000181", Uuid::from_u128(3))
                .unwrap(),
            None
        );
        assert_eq!(store.solicitacoes(), [first.clone(), second]);
        let moved = store.mover(&first.id, Move::Aceitar, None).unwrap();
        assert_eq!(store.get(&first.id), Some(&moved));
    }

    #[test]
    fn a_raw_status_is_reported_by_the_batch_route_until_the_next_move() {
        let mut store = Store::new(seed());
        let Ok(Created::New(odd)) = store.criar(nova(1, "11222333000181")) else {
            panic!("created");
        };
        let Ok(Created::New(plain)) = store.criar(nova(2, "11222333000181")) else {
            panic!("created");
        };
        store
            .definir_status_bruto(&odd.id, "em_analise".into())
            .unwrap();
        let statuses = |store: &mut Store| -> Vec<String> {
            store
                .consultar_status(&[odd.id.clone(), plain.id.clone()], Utc::now())
                .into_iter()
                .map(|v| {
                    serde_json::to_value(v).unwrap()["status"]
                        .as_str()
                        .unwrap()
                        .to_owned()
                })
                .collect()
        };
        assert_eq!(statuses(&mut store), ["em_analise", "pendente"]);
        assert!(store
            .definir_status_bruto("pgcc-nenhuma", "x".into())
            .is_err());

        // moves start from the stored status, and report what they did
        store.mover(&odd.id, Move::Aceitar, None).unwrap();
        assert_eq!(statuses(&mut store), ["ativo", "pendente"]);
    }

    #[test]
    fn a_replaced_seed_is_indexed_again_and_the_requests_are_kept() {
        let mut store = Store::new(Seed::default());
        assert!(store.criar(nova(1, "11222333000181")).is_err());
        store.set_seed(seed());
        assert!(store.empresa("11222333000181").is_some());
        assert!(matches!(
            store.criar(nova(1, "11222333000181")),
            Ok(Created::New(_))
        ));
        store.set_seed(Seed::default());
        assert_eq!(store.solicitacoes().len(), 1);
        assert!(store.empresa("11222333000181").is_none());
    }
}
