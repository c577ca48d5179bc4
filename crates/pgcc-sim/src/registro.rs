//! What the simulator keeps of every request it ever created: 40 bytes, enough for the status
//! routes, the lookup by external reference, a repeated creation and the moves, so that a
//! million creations hold 40 MB (issue 15: at most 100 MB; the full bodies are kept only for the
//! last creations, see `state.rs`).
//!
//! The PGCC id encodes where the record is: `pgcc-<tag, 8 hex><index, 24 hex>`, the same shape
//! as before (`pgcc-` and 32 hex digits). The index finds the record without a map; the random
//! tag, checked against the record, keeps an id of another run (or a made-up one) unknown.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::solicitacao::{
    lido_em, SolicitacaoStatus, SolicitacaoStatusView, SolicitacaoView, StatusInformado,
};

/// One created request, compact. `Copy`: no heap memory of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registro {
    /// The random part of the PGCC id.
    pub tag: u32,
    /// `dataExpiracaoConsentimento` in microseconds since the epoch; `i64::MAX`: none readable.
    pub expira_us: i64,
    /// When the status last changed (or was set raw), microseconds since the epoch.
    pub atualizado_us: i64,
    pub referencia: Uuid,
    /// The company's normalized CNPJ, interned (`Store::cnpjs`), shifted left 3 bits, and the
    /// stored status (from which moves start) in those 3 bits: 8 bytes a record saved.
    empresa_e_status: u32,
}

const STATUS: [SolicitacaoStatus; 5] = [
    SolicitacaoStatus::Pendente,
    SolicitacaoStatus::Ativo,
    SolicitacaoStatus::Recusado,
    SolicitacaoStatus::Expirado,
    SolicitacaoStatus::Revogado,
];

/// The most companies the records can name (29 bits).
pub const MAX_EMPRESAS: u32 = 1 << 29;

/// The PGCC id of record `index` with `tag`.
pub fn id_de(tag: u32, index: usize) -> String {
    format!("pgcc-{tag:08x}{index:024x}")
}

/// The (tag, index) an id names, if it has the shape of one; the caller checks the tag.
pub fn ler_id(id: &str) -> Option<(u32, usize)> {
    let hex = id.strip_prefix("pgcc-")?;
    if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let tag = u32::from_str_radix(&hex[..8], 16).ok()?;
    let index = usize::try_from(u128::from_str_radix(&hex[8..], 16).ok()?).ok()?;
    Some((tag, index))
}

pub fn micros(instante: DateTime<Utc>) -> i64 {
    instante.timestamp_micros()
}

fn instante(us: i64) -> Option<DateTime<Utc>> {
    (us != i64::MAX)
        .then(|| DateTime::from_timestamp_micros(us))
        .flatten()
}

impl Registro {
    /// `cnpj`: below [`MAX_EMPRESAS`].
    pub fn new(
        tag: u32,
        expira_us: i64,
        atualizado_us: i64,
        referencia: Uuid,
        cnpj: u32,
        status: SolicitacaoStatus,
    ) -> Self {
        assert!(cnpj < MAX_EMPRESAS, "fewer than 2^29 companies");
        let mut r = Registro {
            tag,
            expira_us,
            atualizado_us,
            referencia,
            empresa_e_status: cnpj << 3,
        };
        r.set_status(status);
        r
    }

    /// The company (interned CNPJ).
    pub fn cnpj(&self) -> u32 {
        self.empresa_e_status >> 3
    }

    /// The stored status.
    pub fn status(&self) -> SolicitacaoStatus {
        STATUS[(self.empresa_e_status & 7) as usize]
    }

    pub fn set_status(&mut self, status: SolicitacaoStatus) {
        let code = STATUS.iter().position(|s| *s == status).expect("a status") as u32;
        self.empresa_e_status = (self.empresa_e_status & !7) | code;
    }

    pub fn atualizado_em(&self) -> DateTime<Utc> {
        instante(self.atualizado_us).unwrap_or_default()
    }

    pub fn expira_em(&self) -> Option<DateTime<Utc>> {
        instante(self.expira_us)
    }

    /// The status as read at `agora` and when it last changed (an expired one: expirado).
    pub fn lido_em(&self, agora: DateTime<Utc>) -> (SolicitacaoStatus, DateTime<Utc>) {
        lido_em(self.status(), self.expira_em(), self.atualizado_em(), agora)
    }

    fn informado(status: SolicitacaoStatus, bruto: Option<&String>) -> StatusInformado {
        match bruto {
            Some(b) => StatusInformado::Bruto(b.clone()),
            None => StatusInformado::Conhecido(status),
        }
    }

    /// The contract view of record `index`; `bruto`: its raw status, when a test set one.
    pub fn view_em(
        &self,
        index: usize,
        bruto: Option<&String>,
        agora: DateTime<Utc>,
    ) -> SolicitacaoView {
        let (status, atualizado_em) = self.lido_em(agora);
        SolicitacaoView {
            id: id_de(self.tag, index),
            status: Self::informado(status, bruto),
            referencia_externa: self.referencia,
            atualizado_em,
            motivo: None,
        }
    }

    /// The batch status view of record `index`; `cnpj`: its company's, as created.
    pub fn status_view_em(
        &self,
        index: usize,
        bruto: Option<&String>,
        cnpj: &str,
        agora: DateTime<Utc>,
    ) -> SolicitacaoStatusView {
        let (status, atualizado_em) = self.lido_em(agora);
        SolicitacaoStatusView {
            id: id_de(self.tag, index),
            status: Self::informado(status, bruto),
            atualizado_em,
            cnpj_empresa: cnpj.to_owned(),
            motivo: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_40_bytes_without_heap() {
        assert!(std::mem::size_of::<Registro>() <= 40);
    }

    #[test]
    fn company_and_status_share_a_word_without_mixing() {
        let mut r = Registro::new(
            1,
            0,
            0,
            Uuid::nil(),
            MAX_EMPRESAS - 1,
            SolicitacaoStatus::Revogado,
        );
        assert_eq!(r.cnpj(), MAX_EMPRESAS - 1);
        assert_eq!(r.status(), SolicitacaoStatus::Revogado);
        for status in STATUS {
            r.set_status(status);
            assert_eq!(r.status(), status);
            assert_eq!(r.cnpj(), MAX_EMPRESAS - 1);
        }
    }

    #[test]
    fn an_id_names_its_tag_and_index_and_nothing_else_reads_as_one() {
        let id = id_de(0xdead_beef, 1_000_000);
        assert_eq!(id.len(), "pgcc-".len() + 32);
        assert_eq!(
            ler_id(&id_de(u32::MAX, usize::MAX)),
            Some((u32::MAX, usize::MAX))
        );
        assert_eq!(ler_id(&id), Some((0xdead_beef, 1_000_000)));
        assert_eq!(ler_id("pgcc-nenhuma"), None);
        assert_eq!(ler_id(&id.replace("pgcc-", "pgcx-")), None);
        assert_eq!(ler_id(&format!("{id}0")), None);
        assert_eq!(ler_id("pgcc-zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"), None);
    }
}
