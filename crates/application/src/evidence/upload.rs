//! One upload as it arrives: hashed, counted and cut into parts of the store's size
//! ([`ports::EVIDENCE_PART_BYTES`] in PostgreSQL, S3's 5 MiB minimum in a bucket) for the store,
//! with no I/O of its own (the caller writes each part it hands out), so memory is one part
//! whatever the file's size.

use domain::CompanyId;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::upload_slots::UploadSlot;
use super::EvidenceError;

/// An upload under way (from [`super::EvidenceFiles::begin`]).
#[derive(Debug)]
pub struct Upload {
    pub(super) company: CompanyId,
    pub(super) object: Uuid,
    pub(super) media_type: &'static str,
    /// The hash the caller named (`PUT .../arquivos/{sha256}`), checked at the end.
    pub(super) expected: Option<String>,
    /// The company already has these bytes (the hash was named): hashed, not stored again.
    pub(super) keep_parts: bool,
    pub(super) max_bytes: u64,
    /// The store's part size ([`ports::EvidenceStore::upload_part_bytes`]).
    pub(super) part_bytes: usize,
    pub(super) hasher: Sha256,
    pub(super) size: u64,
    pub(super) part: Vec<u8>,
    pub(super) next_index: u32,
    pub(super) written: bool,
    pub(super) _slot: UploadSlot,
}

impl Upload {
    pub fn company(&self) -> CompanyId {
        self.company
    }

    /// The object the parts go to.
    pub fn object(&self) -> Uuid {
        self.object
    }

    /// Whether some part was handed out to be written (then a failed upload deletes them).
    pub fn wrote_parts(&self) -> bool {
        self.written
    }

    /// Takes `bytes`; returns the parts they completed (index and bytes), to write in order.
    /// Past `max_bytes`: [`EvidenceError::TooLarge`] (the caller deletes what was written).
    pub fn push(&mut self, mut bytes: &[u8]) -> Result<Vec<(u32, Vec<u8>)>, EvidenceError> {
        self.size += bytes.len() as u64;
        if self.size > self.max_bytes {
            return Err(EvidenceError::TooLarge {
                limit: self.max_bytes,
            });
        }
        self.hasher.update(bytes);
        let mut full = Vec::new();
        if !self.keep_parts {
            return Ok(full);
        }
        while !bytes.is_empty() {
            let room = self.part_bytes - self.part.len();
            let n = room.min(bytes.len());
            self.part.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if self.part.len() == self.part_bytes {
                full.push(self.take_part());
            }
        }
        Ok(full)
    }

    fn take_part(&mut self) -> (u32, Vec<u8>) {
        let index = self.next_index;
        self.next_index += 1;
        self.written = true;
        let part = std::mem::take(&mut self.part);
        (index, part)
    }

    /// The last part (possibly short; none for an empty file past its first part, or when
    /// parts are not kept), and the SHA-256 of everything taken, lower-case hex.
    pub(super) fn end(&mut self) -> (Option<(u32, Vec<u8>)>, String) {
        let last = if self.keep_parts && (!self.part.is_empty() || self.next_index == 0) {
            Some(self.take_part())
        } else {
            None
        };
        let digest = std::mem::take(&mut self.hasher).finalize();
        (last, hex::encode(digest))
    }
}
