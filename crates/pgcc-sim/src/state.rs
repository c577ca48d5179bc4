//! What the simulator holds while it runs: the seed, the requests received, the fault rule and
//! the expected token.
//!
//! Every lookup a request makes is a hash-map read or an index (the company by CNPJ, a request by
//! PGCC id or by company and external reference), so the simulator answers at the same speed
//! after a million creations as after one: a benchmark measures the service, not the simulator's
//! store. And what it holds is bounded (issue 15: at most 100 MB after a million creations): see
//! [`Store`].

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Mutex, MutexGuard};

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::errors::SimError;
use crate::faults::Faults;
use crate::referencias::Referencias;
use crate::registro::{id_de, ler_id, micros, Registro, MAX_EMPRESAS};
use crate::seed::{normalize_cnpj, Seed, SeedEmpresa};
use crate::solicitacao::{
    NovaSolicitacao, Solicitacao, SolicitacaoStatus, SolicitacaoStatusView, SolicitacaoView,
};

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

/// How a creation ended: the contract view of the request.
pub enum Created {
    /// A new request (201).
    New(SolicitacaoView),
    /// The same `referenciaExterna` of the same company was already created (200).
    Existing(SolicitacaoView),
}

/// What an admin route answers about a request: every field while its body is still held (the
/// last [`JANELA_DE_DETALHES`] creations), else the contract view.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Registrada {
    Completa(Box<Solicitacao>),
    Resumida(SolicitacaoView),
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
    /// The status `self` moves a request in `from` to; `None` when the move is illegal there.
    pub fn target(self, from: SolicitacaoStatus) -> Option<SolicitacaoStatus> {
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

/// How many of the last creations keep their whole body (what `GET /_sim/solicitacoes` lists):
/// a test creates a handful; a benchmark creates millions, whose bodies would hold 500+ MB.
pub const JANELA_DE_DETALHES: usize = 10_000;

/// How many distinct keys each call counter (`status_consultas`, `casos_de_uso_consultas`) holds;
/// a key first asked about after that is not counted (a test asks about a handful).
pub const MAX_CHAVES_CONTADAS: usize = 100_000;

/// The body of one of the last creations, as received.
struct Detalhe {
    dados: NovaSolicitacao,
    criado_em: DateTime<Utc>,
}

/// Everything the simulator holds, bounded: per request created, a 40-byte `Registro` and 6
/// to 11 bytes of the reference table (4-byte slots, 35-70% full): 56 MB in all for a million
/// with the window (issue 15's bound: 100 MB); the whole bodies of the last
/// [`JANELA_DE_DETALHES`] creations; the raw statuses a test set; the call counters up to
/// [`MAX_CHAVES_CONTADAS`] keys each. Every lookup is an index or a hash probe: as fast after a
/// million creations as after one.
pub struct Store {
    seed: Seed,
    /// The seed's companies by normalized CNPJ (the first one when the seed repeats a CNPJ, as
    /// [`Seed::empresa`] finds it).
    empresas: HashMap<String, usize>,
    /// The normalized CNPJs that created requests (`Registro::cnpj` indexes it), kept when the
    /// seed is replaced.
    cnpjs: Vec<String>,
    cnpj_ids: HashMap<String, u32>,
    /// Every request created, in arrival order; the PGCC id names its index.
    registros: Vec<Registro>,
    /// The bodies of the last `janela` creations, oldest first: `detalhes[0]` is record
    /// `registros.len() - detalhes.len()`.
    detalhes: VecDeque<Detalhe>,
    janela: usize,
    /// Index into `registros` by (company, external reference).
    referencias: Referencias,
    /// The raw status a test set (`POST /_sim/solicitacoes/{id}/status`), by record index.
    status_bruto: HashMap<usize, String>,
    /// The reason given with a record's last move (`{"motivo"}` on the admin routes), by record
    /// index; only the admin routes write it, so it grows only with what a test asks.
    motivos: HashMap<usize, String>,
    /// The records a test made the PGCC forget (`DELETE /_sim/solicitacoes/{id}`): unknown to
    /// every contract route from then on, as if the PGCC never held them.
    esquecidas: HashSet<usize>,
    /// How many calls of the batch status route asked about each PGCC id (known or not), up to
    /// [`MAX_CHAVES_CONTADAS`] ids. Kept when the seed is replaced; cleared by
    /// `DELETE /_sim/status-consultas`.
    pub status_consultas: BTreeMap<String, u64>,
    /// How many calls of the use-case list asked about each CNPJ (as it came in the path), up to
    /// [`MAX_CHAVES_CONTADAS`] CNPJs. Kept when the seed is replaced; cleared by
    /// `DELETE /_sim/casos-de-uso-consultas`.
    pub casos_de_uso_consultas: BTreeMap<String, u64>,
    /// The last `MAX_CHAMADAS_GUARDADAS` calls of the batch status route: when each arrived
    /// and how many ids it carried (a test of the service's call budget reads their pace).
    /// Cleared with `status_consultas`.
    pub status_chamadas: VecDeque<(DateTime<Utc>, usize)>,
}

/// How many calls of the batch status route [`Store::status_chamadas`] keeps.
pub const MAX_CHAMADAS_GUARDADAS: usize = 10_000;

/// Adds one call of `chave` to `contagem`, unless the counter is full and `chave` new.
pub fn contar(contagem: &mut BTreeMap<String, u64>, chave: &str) {
    if let Some(n) = contagem.get_mut(chave) {
        *n += 1;
    } else if contagem.len() < MAX_CHAVES_CONTADAS {
        contagem.insert(chave.to_owned(), 1);
    }
}

impl Store {
    pub fn new(seed: Seed) -> Self {
        Self::with_janela(seed, JANELA_DE_DETALHES)
    }

    /// A store keeping the whole body of the last `janela` creations (tests use a small one).
    pub fn with_janela(seed: Seed, janela: usize) -> Self {
        let mut store = Store {
            seed: Seed::default(),
            empresas: HashMap::new(),
            cnpjs: Vec::new(),
            cnpj_ids: HashMap::new(),
            registros: Vec::new(),
            detalhes: VecDeque::new(),
            janela,
            referencias: Referencias::default(),
            status_bruto: HashMap::new(),
            motivos: HashMap::new(),
            esquecidas: HashSet::new(),
            status_consultas: BTreeMap::new(),
            casos_de_uso_consultas: BTreeMap::new(),
            status_chamadas: VecDeque::new(),
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

    /// How many requests were created.
    pub fn len(&self) -> usize {
        self.registros.len()
    }

    pub fn is_empty(&self) -> bool {
        self.registros.is_empty()
    }

    /// The last creations still held whole (at most the window), in arrival order, every field.
    pub fn solicitacoes(&self) -> Vec<Solicitacao> {
        let primeiro = self.registros.len() - self.detalhes.len();
        (primeiro..self.registros.len())
            .filter_map(|i| self.completa(i))
            .collect()
    }

    /// Record `i` with every field, while its body is held.
    fn completa(&self, i: usize) -> Option<Solicitacao> {
        let primeiro = self.registros.len() - self.detalhes.len();
        let detalhe = self.detalhes.get(i.checked_sub(primeiro)?)?;
        let r = &self.registros[i];
        let mut dados = detalhe.dados.clone();
        dados.status = r.status();
        Some(Solicitacao {
            id: id_de(r.tag, i),
            dados,
            criado_em: detalhe.criado_em,
            atualizado_em: r.atualizado_em(),
            status_bruto: self.status_bruto.get(&i).cloned(),
            motivo: self.motivos.get(&i).cloned(),
        })
    }

    /// What an admin route answers about record `i`.
    pub fn registrada(&self, i: usize) -> Registrada {
        match self.completa(i) {
            Some(s) => Registrada::Completa(Box::new(s)),
            None => Registrada::Resumida(self.view_at(i, Utc::now())),
        }
    }

    /// The contract view of record `i`, its status as read at `agora`.
    pub fn view_at(&self, i: usize, agora: DateTime<Utc>) -> SolicitacaoView {
        let mut view = self.registros[i].view_em(i, self.status_bruto.get(&i), agora);
        view.motivo = self.motivos.get(&i).cloned();
        view
    }

    /// The index of the record `id` names, if it is one of this run's.
    fn index(&self, id: &str) -> Option<usize> {
        let (tag, i) = ler_id(id)?;
        (self.registros.get(i)?.tag == tag && !self.esquecidas.contains(&i)).then_some(i)
    }

    /// Request `id` is forgotten: no route knows it from now on (a request the PGCC does not
    /// hold, for the tests of the integrity incident). 404 when unknown.
    pub fn esquecer(&mut self, id: &str) -> Result<(), SimError> {
        let i = self
            .index(id)
            .ok_or_else(|| SimError::not_found("solicitação não encontrada"))?;
        self.esquecidas.insert(i);
        Ok(())
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
        let agora = Utc::now();
        if let Some(&c) = self.cnpj_ids.get(&cnpj) {
            if let Some(i) = self
                .referencias
                .buscar(&self.registros, c, nova.referencia_externa)
            {
                return Ok(Created::Existing(self.view_at(i, agora)));
            }
        }
        if empresa
            .vinculo_with_template(&nova.template_id, nova.vinculo_id)
            .is_none()
        {
            return Err(SimError::not_found(
                "caso de uso não encontrado nos vínculos da empresa",
            ));
        }
        let c = match self.cnpj_ids.get(&cnpj) {
            Some(&c) => c,
            None => {
                let c = u32::try_from(self.cnpjs.len())
                    .ok()
                    .filter(|&c| c < MAX_EMPRESAS)
                    .expect("fewer than 2^29 companies");
                self.cnpjs.push(cnpj.clone());
                self.cnpj_ids.insert(cnpj, c);
                c
            }
        };
        let expira_us = DateTime::parse_from_rfc3339(&nova.data_expiracao_consentimento)
            .map(|d| micros(d.with_timezone(&Utc)))
            .unwrap_or(i64::MAX);
        let registro = Registro::new(
            Uuid::new_v4().as_u64_pair().0 as u32,
            expira_us,
            micros(agora),
            nova.referencia_externa,
            c,
            nova.status,
        );
        let i = self.registros.len();
        self.registros.push(registro);
        self.referencias.inserir(&self.registros, i);
        if self.janela > 0 {
            if self.detalhes.len() == self.janela {
                self.detalhes.pop_front();
            }
            self.detalhes.push_back(Detalhe {
                dados: nova,
                criado_em: registro.atualizado_em(),
            });
        }
        Ok(Created::New(self.view_at(i, agora)))
    }

    /// The contract view of the company's request with external reference `referencia` (`None`
    /// when there is none); 404 for an unknown company.
    pub fn por_referencia(
        &self,
        cnpj_empresa: &str,
        referencia: Uuid,
    ) -> Result<Option<SolicitacaoView>, SimError> {
        let cnpj = normalize_cnpj(cnpj_empresa);
        if !self.empresas.contains_key(&cnpj) {
            return Err(SimError::not_found("empresa não encontrada"));
        }
        Ok(self
            .cnpj_ids
            .get(&cnpj)
            .and_then(|&c| self.referencias.buscar(&self.registros, c, referencia))
            .map(|i| self.view_at(i, Utc::now())))
    }

    /// The contract view of request `id`, its status as read now.
    pub fn get(&self, id: &str) -> Option<SolicitacaoView> {
        self.index(id).map(|i| self.view_at(i, Utc::now()))
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
            contar(&mut self.status_consultas, id);
        }
        if self.status_chamadas.len() == MAX_CHAMADAS_GUARDADAS {
            self.status_chamadas.pop_front();
        }
        self.status_chamadas.push_back((agora, ids.len()));
        distintos
            .into_iter()
            .filter_map(|id| self.index(id))
            .map(|i| {
                let registro = &self.registros[i];
                let cnpj = &self.cnpjs[registro.cnpj() as usize];
                let mut view = registro.status_view_em(i, self.status_bruto.get(&i), cnpj, agora);
                view.motivo = self.motivos.get(&i).cloned();
                view
            })
            .collect()
    }

    /// Applies `mv` to request `id`, with `motivo` (the reason given, if any; reported by the
    /// status routes until the next move): 404 when unknown, 409 when the move is illegal from
    /// its status as read now (an expired request moves no more). Returns the record's index.
    pub fn mover(&mut self, id: &str, mv: Move, motivo: Option<String>) -> Result<usize, SimError> {
        let i = self
            .index(id)
            .ok_or_else(|| SimError::not_found("solicitação não encontrada"))?;
        let agora = Utc::now();
        let registro = &mut self.registros[i];
        let (from, _) = registro.lido_em(agora);
        let to = mv.target(from).ok_or_else(|| {
            SimError::conflict(format!(
                "transição inválida: {mv:?} a partir de {}",
                status_text(from)
            ))
        })?;
        registro.set_status(to);
        registro.atualizado_us = micros(agora);
        // the move is what the PGCC reports from now on
        self.status_bruto.remove(&i);
        match motivo {
            Some(motivo) => self.motivos.insert(i, motivo),
            None => self.motivos.remove(&i),
        };
        Ok(i)
    }

    /// Request `id` reports `bruto` as its status on every contract route from now on (until the
    /// next move); its stored status, from which moves start, is kept. 404 when unknown.
    pub fn definir_status_bruto(&mut self, id: &str, bruto: String) -> Result<usize, SimError> {
        let i = self
            .index(id)
            .ok_or_else(|| SimError::not_found("solicitação não encontrada"))?;
        self.status_bruto.insert(i, bruto);
        self.registros[i].atualizado_us = micros(Utc::now());
        Ok(i)
    }

    /// The bytes the requests hold, counted from the structures (their capacities and the heap
    /// of each held body), not from the allocator: what the bound of issue 15 is about.
    pub fn bytes_retidos(&self) -> usize {
        use std::mem::size_of;
        let corpo = |d: &Detalhe| {
            let n = &d.dados;
            [
                n.cnpj_empresa.capacity(),
                n.template_id.capacity(),
                n.cpf_titular.capacity(),
                n.tipo_titular.capacity(),
                n.modalidade_acesso.capacity(),
                n.data_expiracao_consentimento.capacity(),
            ]
            .iter()
            .sum::<usize>()
                + [
                    &n.cnpj_anuente,
                    &n.data_titular_respondeu_consentimento,
                    &n.prova_coleta,
                ]
                .iter()
                .map(|o| o.as_ref().map_or(0, String::capacity))
                .sum::<usize>()
        };
        self.registros.capacity() * size_of::<Registro>()
            + self.referencias.bytes()
            + self.detalhes.capacity() * size_of::<Detalhe>()
            + self.detalhes.iter().map(corpo).sum::<usize>()
            + self
                .cnpjs
                .iter()
                .map(|c| 2 * c.capacity() + 48)
                .sum::<usize>()
            + self
                .status_bruto
                .values()
                .map(|b| b.capacity() + 48)
                .sum::<usize>()
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
    use crate::solicitacao::StatusInformado;

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

    fn nueva(store: &mut Store, referencia: u128, cnpj: &str) -> SolicitacaoView {
        match store.criar(nova(referencia, cnpj)) {
            Ok(Created::New(view)) => view,
            _ => panic!("created"),
        }
    }

    #[test]
    fn the_indexes_find_what_was_created_masked_or_not_and_keep_arrival_order() {
        let mut store = Store::new(seed());
        let first = nueva(&mut store, 1, "11222333000181");
        let second = nueva(&mut store, 2, "11222333000181");
        let Ok(Created::Existing(again)) = store.criar(nova(1, "11.222.333/0001-81")) else {
            panic!("the same reference of the same company");
        };
        assert_eq!(again.id, first.id);
        assert_eq!(store.get(&second.id).unwrap().id, second.id);
        assert_eq!(
            store
                .por_referencia("11.222.333/0001-81", Uuid::from_u128(2))
                .unwrap()
                .unwrap()
                .id,
            second.id
        );
        assert!(store
            .por_referencia("11222333000181", Uuid::from_u128(3))
            .unwrap()
            .is_none());
        let ids: Vec<String> = store.solicitacoes().into_iter().map(|s| s.id).collect();
        assert_eq!(ids, [first.id.clone(), second.id]);
        let i = store.mover(&first.id, Move::Aceitar, None).unwrap();
        let moved = store.view_at(i, Utc::now());
        assert!(matches!(
            moved.status,
            StatusInformado::Conhecido(SolicitacaoStatus::Ativo)
        ));
        assert_eq!(
            store.solicitacoes()[0].dados.status,
            SolicitacaoStatus::Ativo
        );
    }

    #[test]
    fn an_id_of_another_run_or_past_the_end_is_unknown() {
        let mut store = Store::new(seed());
        let first = nueva(&mut store, 1, "11222333000181");
        let mut other = Store::new(seed());
        let theirs = nueva(&mut other, 1, "11222333000181");
        assert_ne!(first.id, theirs.id, "a random tag in each id");
        assert!(store.get(&theirs.id).is_none());
        let past = crate::registro::id_de(0, 5);
        assert!(store.get(&past).is_none());
        assert!(store.mover(&past, Move::Aceitar, None).is_err());
    }

    #[test]
    fn past_the_window_a_request_keeps_what_the_contract_routes_answer() {
        let mut store = Store::with_janela(seed(), 2);
        let old = nueva(&mut store, 1, "11222333000181");
        for r in 2..=4 {
            nueva(&mut store, r, "11222333000181");
        }
        // the admin list holds the last two bodies
        let listed: Vec<Uuid> = store
            .solicitacoes()
            .iter()
            .map(|s| s.dados.referencia_externa)
            .collect();
        assert_eq!(listed, [Uuid::from_u128(3), Uuid::from_u128(4)]);
        // the oldest still answers by id, by reference, to a repeated creation, and moves
        assert_eq!(
            store.get(&old.id).unwrap().referencia_externa,
            Uuid::from_u128(1)
        );
        assert!(matches!(
            store.criar(nova(1, "11222333000181")),
            Ok(Created::Existing(v)) if v.id == old.id
        ));
        let i = store.mover(&old.id, Move::Recusar, None).unwrap();
        let Registrada::Resumida(view) = store.registrada(i) else {
            panic!("its body is no longer held");
        };
        assert!(matches!(
            view.status,
            StatusInformado::Conhecido(SolicitacaoStatus::Recusado)
        ));
        let statuses = store.consultar_status(std::slice::from_ref(&old.id), Utc::now());
        assert_eq!(statuses.len(), 1);
    }

    #[test]
    fn the_call_counters_stop_taking_new_keys_when_full() {
        let mut contagem = BTreeMap::new();
        for i in 0..MAX_CHAVES_CONTADAS {
            contar(&mut contagem, &i.to_string());
        }
        contar(&mut contagem, "0");
        contar(&mut contagem, "nova");
        assert_eq!(contagem.len(), MAX_CHAVES_CONTADAS);
        assert_eq!(contagem["0"], 2, "a key already counted still counts");
        assert!(!contagem.contains_key("nova"));
    }

    #[test]
    fn a_raw_status_is_reported_by_the_batch_route_until_the_next_move() {
        let mut store = Store::new(seed());
        let odd = nueva(&mut store, 1, "11222333000181");
        let plain = nueva(&mut store, 2, "11222333000181");
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
