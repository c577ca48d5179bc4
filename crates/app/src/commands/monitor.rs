//! `consent-api audit monitor` (docs/auditoria.md, "Monitoring from the company's side"): what a
//! company runs against the API with an `auditor` key and no database access. It keeps the last
//! checkpoint it saw in a file and fails when the service shows one that does not extend it, or
//! that lacks a cosignature of a witness it was told to expect.

use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use application::audit::note::{self, ParsedNote};
use application::audit::signer::{key_hash, verifies};
use application::audit::witness::consistency::verify_consistency;
use application::audit::witness::keys::{cosignature_time, VerifierKey};
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;

/// The environment variable holding the company's API key (scope `auditor`).
pub const KEY_VAR: &str = "CONSENT_API_KEY";

struct Api {
    url: String,
    key: String,
    agent: ureq::Agent,
}

impl Api {
    fn get(&self, path: &str) -> anyhow::Result<(u16, String)> {
        let url = format!("{}{path}", self.url);
        let mut response = self
            .agent
            .get(&url)
            .header("Api-Key", &self.key)
            .call()
            .with_context(|| format!("GET {url}"))?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(4 * 1024 * 1024)
            .read_to_string()
            .with_context(|| format!("reading GET {url}"))?;
        Ok((status, body))
    }
}

/// Checks the latest checkpoint and keeps it; `Err` names what is wrong.
pub fn run(url: &str, state: &Path, witness_keys: &[String], sandbox: bool) -> anyhow::Result<()> {
    let key = std::env::var(KEY_VAR)
        .ok()
        .filter(|k| !k.trim().is_empty())
        .with_context(|| format!("{KEY_VAR} must hold the company's API key (scope auditor)"))?;
    let witnesses = witness_keys
        .iter()
        .map(|k| {
            VerifierKey::parse(k)
                .with_context(|| format!("--testemunha {k} is not a witness verifier key"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(30)))
        .http_status_as_error(false)
        .build();
    let api = Api {
        url: url.trim_end_matches('/').to_owned(),
        key: key.trim().to_owned(),
        agent: ureq::Agent::new_with_config(config),
    };

    let kept = match std::fs::read_to_string(state) {
        Ok(text) => Some(
            note::parse(&text)
                .with_context(|| format!("{} does not hold a checkpoint", state.display()))?,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", state.display())),
    };

    let (status, text) = api.get("/api/auditoria/checkpoint")?;
    if status == 404 {
        if let Some(kept) = kept {
            anyhow::bail!(
                "the service shows no checkpoint of {}, but the checkpoint of size {} was kept: the log was removed",
                kept.origin,
                kept.size
            );
        }
        println!("no checkpoint yet");
        return Ok(());
    }
    anyhow::ensure!(
        status == 200,
        "GET /api/auditoria/checkpoint answered {status}"
    );
    let latest = note::parse(&text).context("the checkpoint is not a signed note")?;
    check_log_signature(&api, &latest, sandbox)?;
    if let Some(kept) = &kept {
        anyhow::ensure!(
            kept.origin == latest.origin,
            "the checkpoint is of {}, the one kept of {}",
            latest.origin,
            kept.origin
        );
        let not_consistent = || {
            anyhow::anyhow!(
                "the checkpoint of size {} is not consistent with the kept checkpoint of size {} ({}): the log was rewritten or rolled back",
                latest.size,
                kept.size,
                latest.origin
            )
        };
        if latest.size < kept.size || (latest.size == kept.size && latest.root != kept.root) {
            return Err(not_consistent());
        }
        if latest.size > kept.size {
            let (status, body) = api.get(&format!(
                "/api/auditoria/consistencia?de={}&para={}",
                kept.size, latest.size
            ))?;
            if status != 200 {
                return Err(
                    not_consistent().context(format!("no consistency proof (HTTP {status})"))
                );
            }
            let json: serde_json::Value =
                serde_json::from_str(&body).context("the consistency proof is not JSON")?;
            let proof = json["data"]["prova"]
                .as_array()
                .context("the consistency answer has no proof")?
                .iter()
                .map(|h| {
                    h.as_str()
                        .and_then(|h| STANDARD.decode(h).ok())
                        .and_then(|h| <[u8; 32]>::try_from(h).ok())
                })
                .collect::<Option<Vec<_>>>()
                .context("a proof hash is not base64 of 32 bytes")?;
            if !verify_consistency(kept.size, latest.size, &kept.root, &latest.root, &proof) {
                return Err(not_consistent());
            }
        }
    }
    for witness in &witnesses {
        let cosigned = latest.signatures.iter().any(|(name, hash, signature)| {
            let mut blob = hash.to_vec();
            blob.extend_from_slice(signature);
            cosignature_time(witness, &latest.text, name, &blob).is_some()
        });
        anyhow::ensure!(
            cosigned,
            "the checkpoint of size {} of {} lacks a cosignature of witness {}",
            latest.size,
            latest.origin,
            witness.name
        );
    }

    keep(state, &text)?;
    match kept {
        Some(kept) => println!(
            "checkpoint of size {} consistent with the kept one of size {}; {} witness cosignature(s) checked",
            latest.size,
            kept.size,
            witnesses.len()
        ),
        None => println!(
            "first checkpoint kept: size {}; {} witness cosignature(s) checked",
            latest.size,
            witnesses.len()
        ),
    }
    Ok(())
}

/// The note must carry a valid signature by a key of the service's JWKS (matched by the C2SP
/// key hash, whose hex is the `kid`) for the company's kind: a production key (`ambiente`
/// `producao`, or absent) for a real company, the sandbox key for a sandbox (`sandbox`): the
/// sandbox key never vouches for a real company's log (docs/auditoria.md, "The sandbox's key").
fn check_log_signature(api: &Api, latest: &ParsedNote, sandbox: bool) -> anyhow::Result<()> {
    let wanted = if sandbox { "sandbox" } else { "producao" };
    let (status, body) = api.get("/.well-known/jwks.json")?;
    anyhow::ensure!(
        status == 200,
        "GET /.well-known/jwks.json answered {status}"
    );
    let jwks: serde_json::Value = serde_json::from_str(&body).context("the JWKS is not JSON")?;
    let keys: Vec<[u8; 32]> = jwks["keys"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|k| k["ambiente"].as_str().unwrap_or("producao") == wanted)
        .filter_map(|k| {
            let x = URL_SAFE_NO_PAD.decode(k["x"].as_str()?).ok()?;
            x.try_into().ok()
        })
        .collect();
    let signed = latest.signatures.iter().any(|(name, hash, signature)| {
        keys.iter().any(|key| {
            key_hash(name, key) == *hash && verifies(key, latest.text.as_bytes(), signature)
        })
    });
    anyhow::ensure!(
        signed,
        "the checkpoint of size {} of {} has no valid signature by a {wanted} key of the service's JWKS",
        latest.size,
        latest.origin
    );
    Ok(())
}

/// Replaces the kept checkpoint atomically.
fn keep(state: &Path, note: &str) -> anyhow::Result<()> {
    let aside = state.with_extension("tmp");
    let mut file =
        std::fs::File::create(&aside).with_context(|| format!("writing {}", aside.display()))?;
    file.write_all(note.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&aside, state).with_context(|| format!("replacing {}", state.display()))
}
