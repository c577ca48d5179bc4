//! The lookup of a request by (company, external reference): an open-addressing table of record
//! indexes (4 bytes a slot, at most 70% full), comparing the key against the records
//! themselves, so that it holds no copy of a key: 8 MB for a million requests where a
//! `HashMap<(String, Uuid), usize>` held about 100 MB.

use uuid::Uuid;

use crate::registro::Registro;

const VAZIO: u32 = u32::MAX;

#[derive(Default)]
pub struct Referencias {
    /// Record indexes; `VAZIO` where none. Length: 0 or a power of two.
    slots: Vec<u32>,
    len: usize,
}

fn hash(cnpj: u32, referencia: Uuid) -> u64 {
    // multiply-xorshift over both halves: v4 UUIDs are random already, v7 ones are not
    let (a, b) = referencia.as_u64_pair();
    let mut h = a ^ b.rotate_left(29) ^ (u64::from(cnpj) << 17);
    h = (h ^ (h >> 32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^ (h >> 29)
}

impl Referencias {
    /// The index of the record of `cnpj` with `referencia`, if any.
    pub fn buscar(&self, registros: &[Registro], cnpj: u32, referencia: Uuid) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = hash(cnpj, referencia) as usize & mask;
        loop {
            let slot = self.slots[i];
            if slot == VAZIO {
                return None;
            }
            let r = &registros[slot as usize];
            if r.cnpj() == cnpj && r.referencia == referencia {
                return Some(slot as usize);
            }
            i = (i + 1) & mask;
        }
    }

    /// Indexes record `index` (of `registros`), which no other record's key equals.
    pub fn inserir(&mut self, registros: &[Registro], index: usize) {
        // at most 70% full: a probe stays short, and a million fit in 2^21 slots (8 MB) up to
        // 1.46 million
        if (self.len + 1) * 10 > self.slots.len() * 7 {
            self.crescer(registros);
        }
        self.colocar(&registros[index], index);
        self.len += 1;
    }

    fn colocar(&mut self, registro: &Registro, index: usize) {
        let mask = self.slots.len() - 1;
        let mut i = hash(registro.cnpj(), registro.referencia) as usize & mask;
        while self.slots[i] != VAZIO {
            i = (i + 1) & mask;
        }
        self.slots[i] = u32::try_from(index).expect("fewer than 4 billion requests");
    }

    fn crescer(&mut self, registros: &[Registro]) {
        let tamanho = (self.slots.len() * 2).max(1024);
        let antigos = std::mem::replace(&mut self.slots, vec![VAZIO; tamanho]);
        for slot in antigos.into_iter().filter(|&s| s != VAZIO) {
            self.colocar(&registros[slot as usize], slot as usize);
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<u32>()
    }
}
