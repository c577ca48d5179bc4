//! The chain of a request's entries (issue 36, part 2; docs/auditoria.md, "A lawful chain"): one
//! checker, used by `audit verify` over the whole log and by the checkpoint job over the entries
//! it is about to sign (each held against its request's previous entry, read by key).
//!
//! Each entry must follow the one before it of the same request: its `statusAnterior` is that
//! entry's `status`, and the move is one the domain's state machine allows
//! ([`ConsentStatus::allows_move`], never a copy of it). A request's first entry is its creation
//! (`statusAnterior` null), except for a request created before the log began (the cut-off the
//! migration recorded: its first entry may be any move the machine allows) and for the retention
//! purge's blanking of a creation that was never confirmed (no PGCC id). The blanking itself
//! is a non-move: the same status before and after, cause `retencao`. And a request's row must
//! be what its last entry says ([`row_matches`]).

use domain::{ConsentRequest, ConsentStatus};
use ports::RepoError;
use sha2::{Digest, Sha256};

use super::entry::{EntryFields, CAUSE_EVIDENCE, CAUSE_RETENTION};
use crate::consent_requests::hash::consent_hash;

/// How an entry fails to follow the one before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkBreak {
    /// The request's first entry is not its creation, and the request is not older than the log.
    NoCreation {
        status_before: String,
        status: String,
    },
    /// `statusAnterior` is not the previous entry's `status`.
    NotFollowing {
        expected: String,
        found: Option<String>,
    },
    /// A move the state machine does not allow (`revogado` to `ativo`).
    IllegalMove { from: Option<String>, to: String },
    /// A retention entry that changes the status.
    RetentionMoves { from: Option<String>, to: String },
    /// An evidence file's entry that changes the status, names no file, or comes first.
    EvidenceMoves { from: Option<String>, to: String },
    /// A status the domain does not know.
    UnknownStatus(String),
}

impl std::fmt::Display for LinkBreak {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let or_null = |s: &Option<String>| s.clone().unwrap_or_else(|| "null".to_owned());
        match self {
            LinkBreak::NoCreation {
                status_before,
                status,
            } => write!(
                f,
                "its first entry ({status_before} -> {status}) is not a creation, and the request is not older than the log"
            ),
            LinkBreak::NotFollowing { expected, found } => write!(
                f,
                "statusAnterior {} is not the previous entry's status {expected}",
                or_null(found)
            ),
            LinkBreak::IllegalMove { from, to } => write!(
                f,
                "illegal move {} -> {to}: the state machine does not allow it",
                or_null(from)
            ),
            LinkBreak::RetentionMoves { from, to } => write!(
                f,
                "a retention entry changes the status ({} -> {to})",
                or_null(from)
            ),
            LinkBreak::EvidenceMoves { from, to } => write!(
                f,
                "an evidence file's entry is not a non-move naming its file after the request's creation ({} -> {to})",
                or_null(from)
            ),
            LinkBreak::UnknownStatus(status) => write!(f, "unknown status {status:?}"),
        }
    }
}

/// The first entry of a chain that does not follow its previous one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainBreak {
    /// The request (its id as the entry names it).
    pub request: String,
    /// The entry's `em`.
    pub at: String,
    pub what: LinkBreak,
}

impl std::fmt::Display for ChainBreak {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "request {}: entry at {}: {}",
            self.request, self.at, self.what
        )
    }
}

fn status(raw: &str) -> Result<ConsentStatus, LinkBreak> {
    ConsentStatus::parse(raw).ok_or_else(|| LinkBreak::UnknownStatus(raw.to_owned()))
}

/// Whether `entry` follows `previous` (the request's entry before it, `None` for its first);
/// `created_before_log`: the request's row is older than the log (then its first entry need not
/// be its creation). Plain values: no database.
pub fn check_link(
    previous: Option<&EntryFields>,
    entry: &EntryFields,
    created_before_log: bool,
) -> Result<(), LinkBreak> {
    let to = status(&entry.status)?;
    let from = entry.from.as_deref().map(status).transpose()?;
    if let Some(previous) = previous {
        if entry.from.as_deref() != Some(previous.status.as_str()) {
            return Err(LinkBreak::NotFollowing {
                expected: previous.status.clone(),
                found: entry.from.clone(),
            });
        }
    }
    if entry.cause == CAUSE_EVIDENCE {
        // a file linked to a request: the status stays, the file is named, and something came
        // before it (the creation, or for a request older than the log, its row)
        let names_file = entry.file_sha256.is_some()
            && entry.file_size.is_some()
            && entry.file_media_type.is_some();
        if from != Some(to) || !names_file || (previous.is_none() && !created_before_log) {
            if previous.is_none() && !created_before_log && from == Some(to) && names_file {
                return Err(LinkBreak::NoCreation {
                    status_before: entry.status.clone(),
                    status: entry.status.clone(),
                });
            }
            return Err(LinkBreak::EvidenceMoves {
                from: entry.from.clone(),
                to: entry.status.clone(),
            });
        }
        return Ok(());
    }
    if entry.file_sha256.is_some() || entry.file_size.is_some() || entry.file_media_type.is_some() {
        // only an evidence file's entry names a file
        return Err(LinkBreak::EvidenceMoves {
            from: entry.from.clone(),
            to: entry.status.clone(),
        });
    }
    if entry.cause == CAUSE_RETENTION {
        if from != Some(to) {
            return Err(LinkBreak::RetentionMoves {
                from: entry.from.clone(),
                to: entry.status.clone(),
            });
        }
        // the blanking of a creation never confirmed is its request's only entry
        if previous.is_none() && entry.pgcc_id.is_some() && !created_before_log {
            return Err(LinkBreak::NoCreation {
                status_before: entry.status.clone(),
                status: entry.status.clone(),
            });
        }
        return Ok(());
    }
    if previous.is_none() && from.is_some() && !created_before_log {
        return Err(LinkBreak::NoCreation {
            status_before: entry.from.clone().unwrap_or_default(),
            status: entry.status.clone(),
        });
    }
    if !ConsentStatus::allows_move(from, to) {
        return Err(LinkBreak::IllegalMove {
            from: entry.from.clone(),
            to: entry.status.clone(),
        });
    }
    Ok(())
}

/// One entry to check, with the entry before it of the same request.
#[derive(Debug, Clone, Copy)]
pub struct Link<'a> {
    pub previous: Option<&'a EntryFields>,
    pub entry: &'a EntryFields,
}

/// The first of `links` that does not follow its previous entry ([`check_link`]), in the order
/// given. `created_before_log` is asked only about a request whose first entry is not its
/// creation (one read by key, rare: rows from before the log).
pub fn check_chain<'a>(
    links: impl IntoIterator<Item = Link<'a>>,
    mut created_before_log: impl FnMut(&str) -> Result<bool, RepoError>,
) -> Result<Option<ChainBreak>, RepoError> {
    for link in links {
        let found = match check_link(link.previous, link.entry, false) {
            Err(LinkBreak::NoCreation { .. }) if created_before_log(&link.entry.id)? => {
                check_link(link.previous, link.entry, true)
            }
            other => other,
        };
        if let Err(what) = found {
            return Ok(Some(ChainBreak {
                request: link.entry.id.clone(),
                at: link.entry.at.clone(),
                what,
            }));
        }
    }
    Ok(None)
}

/// Whether the request's row is what its last entry says: status, PGCC id, the stored consent
/// hash and the one recomputed from the row's content (which covers the CPF, expiry, dates, proof
/// and salt), and the proof's SHA-256.
pub fn row_matches(request: &ConsentRequest, last: &EntryFields) -> bool {
    let proof = request
        .content
        .answer
        .as_ref()
        .map(|a| hex::encode(Sha256::digest(a.proof_of_collection.as_bytes())));
    request.status.as_str() == last.status
        && Some(request.pgcc_id.as_str()) == last.pgcc_id.as_deref()
        && request.hash == last.hash
        && consent_hash(request) == last.hash
        && proof == last.proof_sha256
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "00000000-0000-0000-0000-000000000501";

    fn entry(from: Option<&str>, to: &str, cause: &str) -> EntryFields {
        EntryFields {
            file_sha256: None,
            file_size: None,
            file_media_type: None,
            id: ID.to_owned(),
            pgcc_id: Some("pgcc-1".to_owned()),
            company_cnpj: "11222333000181".to_owned(),
            template_id: "tpl".to_owned(),
            from: from.map(str::to_owned),
            status: to.to_owned(),
            cause: cause.to_owned(),
            reason_sha256: None,
            proof_sha256: None,
            hash: "ab".repeat(32),
            at: "2026-01-10T12:00:05.000000Z".to_owned(),
            import_id: None,
            external_id: None,
            origin: None,
            answered_at: None,
        }
    }

    #[test]
    fn a_creation_then_the_moves_the_machine_allows_follow() {
        let created = entry(None, "pendente", "empresa");
        let accepted = entry(Some("pendente"), "ativo", "pgcc");
        let revoked = entry(Some("ativo"), "revogado", "empresa");
        assert_eq!(check_link(None, &created, false), Ok(()));
        assert_eq!(check_link(Some(&created), &accepted, false), Ok(()));
        assert_eq!(check_link(Some(&accepted), &revoked, false), Ok(()));
        let expired = entry(Some("ativo"), "expirado", "expiracao");
        assert_eq!(check_link(Some(&accepted), &expired, false), Ok(()));
    }

    #[test]
    fn a_revoked_consent_brought_back_is_an_illegal_move() {
        let revoked = entry(Some("ativo"), "revogado", "empresa");
        let revived = entry(Some("revogado"), "ativo", "empresa");
        assert_eq!(
            check_link(Some(&revoked), &revived, false),
            Err(LinkBreak::IllegalMove {
                from: Some("revogado".to_owned()),
                to: "ativo".to_owned()
            })
        );
        assert!(check_link(Some(&revoked), &revived, false)
            .unwrap_err()
            .to_string()
            .contains("revogado -> ativo"));
    }

    #[test]
    fn an_entry_whose_status_before_is_not_the_previous_status_is_named() {
        let created = entry(None, "ativo", "empresa");
        // a forged step skips the revocation: pendente was never the status
        let skipped = entry(Some("pendente"), "ativo", "pgcc");
        assert_eq!(
            check_link(Some(&created), &skipped, false),
            Err(LinkBreak::NotFollowing {
                expected: "ativo".to_owned(),
                found: Some("pendente".to_owned())
            })
        );
        // a second creation of the same request does not follow either
        let again = entry(None, "ativo", "empresa");
        assert!(matches!(
            check_link(Some(&created), &again, false),
            Err(LinkBreak::NotFollowing { found: None, .. })
        ));
    }

    #[test]
    fn a_first_entry_that_is_not_a_creation_is_lawful_only_for_a_request_older_than_the_log() {
        let revoked = entry(Some("ativo"), "revogado", "empresa");
        assert!(matches!(
            check_link(None, &revoked, false),
            Err(LinkBreak::NoCreation { .. })
        ));
        assert_eq!(check_link(None, &revoked, true), Ok(()));
        // older than the log, but still a move the machine must allow
        let revived = entry(Some("revogado"), "ativo", "empresa");
        assert!(matches!(
            check_link(None, &revived, true),
            Err(LinkBreak::IllegalMove { .. })
        ));
    }

    #[test]
    fn a_creation_must_be_one_the_machine_allows() {
        let created_revoked = entry(None, "revogado", "empresa");
        assert!(matches!(
            check_link(None, &created_revoked, false),
            Err(LinkBreak::IllegalMove { from: None, .. })
        ));
        let unknown = entry(None, "reativado", "empresa");
        assert_eq!(
            check_link(None, &unknown, false),
            Err(LinkBreak::UnknownStatus("reativado".to_owned()))
        );
    }

    #[test]
    fn a_retention_entry_is_a_non_move_after_its_chain_or_alone_for_a_creation_never_confirmed() {
        let revoked = entry(Some("ativo"), "revogado", "empresa");
        let blanked = entry(Some("revogado"), "revogado", CAUSE_RETENTION);
        assert_eq!(check_link(Some(&revoked), &blanked, false), Ok(()));
        let mut cancelled = entry(Some("pendente"), "pendente", CAUSE_RETENTION);
        cancelled.pgcc_id = None;
        assert_eq!(check_link(None, &cancelled, false), Ok(()));
        // with a PGCC id it was confirmed: its creation is missing
        cancelled.pgcc_id = Some("pgcc-1".to_owned());
        assert!(matches!(
            check_link(None, &cancelled, false),
            Err(LinkBreak::NoCreation { .. })
        ));
        let moving = entry(Some("revogado"), "ativo", CAUSE_RETENTION);
        assert!(matches!(
            check_link(Some(&revoked), &moving, false),
            Err(LinkBreak::RetentionMoves { .. })
        ));
    }

    #[test]
    fn check_chain_names_the_first_break_and_asks_about_the_cut_off_only_when_needed() {
        let created = entry(None, "ativo", "empresa");
        let revoked = entry(Some("ativo"), "revogado", "empresa");
        let revived = entry(Some("revogado"), "ativo", "empresa");
        let mut asked = 0;
        let found = check_chain(
            [
                Link {
                    previous: None,
                    entry: &created,
                },
                Link {
                    previous: Some(&created),
                    entry: &revoked,
                },
                Link {
                    previous: Some(&revoked),
                    entry: &revived,
                },
            ],
            |_| {
                asked += 1;
                Ok(false)
            },
        )
        .unwrap()
        .unwrap();
        assert_eq!(asked, 0);
        assert_eq!(found.request, ID);
        assert!(found.to_string().contains("illegal move revogado -> ativo"));

        let mut asked = Vec::new();
        let older = check_chain(
            [Link {
                previous: None,
                entry: &revoked,
            }],
            |id| {
                asked.push(id.to_owned());
                Ok(true)
            },
        )
        .unwrap();
        assert_eq!((older, asked), (None, vec![ID.to_owned()]));
    }

    fn evidence(status: &str) -> EntryFields {
        EntryFields {
            file_sha256: Some("cd".repeat(32)),
            file_size: Some("1024".to_owned()),
            file_media_type: Some("application/pdf".to_owned()),
            ..entry(Some(status), status, CAUSE_EVIDENCE)
        }
    }

    #[test]
    fn an_evidence_file_entry_is_a_non_move_after_the_creation_and_the_chain_goes_on() {
        let created = entry(None, "ativo", "empresa");
        let file = evidence("ativo");
        assert_eq!(check_link(Some(&created), &file, false), Ok(()));
        let revoked = entry(Some("ativo"), "revogado", "empresa");
        assert_eq!(check_link(Some(&file), &revoked, false), Ok(()));
        // a file entry after a revocation keeps the final status
        assert_eq!(
            check_link(Some(&revoked), &evidence("revogado"), false),
            Ok(())
        );
    }

    #[test]
    fn an_evidence_file_entry_that_moves_names_nothing_or_comes_first_breaks_the_chain() {
        let created = entry(None, "pendente", "empresa");
        let moving = EntryFields {
            status: "ativo".to_owned(),
            ..evidence("pendente")
        };
        assert!(matches!(
            check_link(Some(&created), &moving, false),
            Err(LinkBreak::EvidenceMoves { .. })
        ));
        let unnamed = entry(Some("pendente"), "pendente", CAUSE_EVIDENCE);
        assert!(matches!(
            check_link(Some(&created), &unnamed, false),
            Err(LinkBreak::EvidenceMoves { .. })
        ));
        assert!(matches!(
            check_link(None, &evidence("pendente"), false),
            Err(LinkBreak::NoCreation { .. })
        ));
        assert_eq!(check_link(None, &evidence("pendente"), true), Ok(()));
        // a status move may not smuggle a file in
        let smuggled = EntryFields {
            file_sha256: Some("cd".repeat(32)),
            ..entry(Some("pendente"), "ativo", "pgcc")
        };
        assert!(check_link(Some(&created), &smuggled, false).is_err());
    }
}
