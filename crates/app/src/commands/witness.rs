//! `consent-api witness serve`: a C2SP `tlog-witness` (docs/auditoria.md, "Witnesses"). A
//! separate process with its own key and its own state (a file), meant to be run by someone
//! other than the service's operator: it cosigns a company's checkpoint only when it is
//! consistent with the last one it cosigned for that company's origin.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use actix_web::{web, App, HttpResponse, HttpServer};
use anyhow::Context;
use application::audit::witness::cosigner::{Cosigned, Cosigner, Refusal};
use application::audit::witness::keys::{CosignerKey, VerifierKey, NOTE_ED25519};
use application::AuditSigner;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

/// The environment variable holding the witness's key: base64 of a 32-byte Ed25519 seed.
pub const KEY_VAR: &str = "WITNESS_SIGNING_KEY";

/// The largest add-checkpoint body read (63 proof lines and a note with a few signatures fit in
/// well under this).
const BODY_LIMIT: usize = 64 * 1024;

/// `APP__AUDITORIA__WITNESSES` read: comma-separated `url=<url>;key=<vkey>` (`None` when an entry
/// is not one, or its key is not a cosignature vkey).
pub fn parse_witnesses(text: &str) -> Option<Vec<(String, VerifierKey)>> {
    text.split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|entry| {
            let (mut url, mut key) = (None, None);
            for part in entry.split(';') {
                match part.trim().split_once('=') {
                    Some(("url", u)) => url = Some(u.trim().trim_end_matches('/').to_owned()),
                    Some(("key", k)) => key = VerifierKey::parse(k),
                    _ => return None,
                }
            }
            let url = url.filter(|u| u.starts_with("http://") || u.starts_with("https://"))?;
            let key = key.filter(|k| k.key_type != NOTE_ED25519)?;
            Some((url, key))
        })
        .collect()
}

/// The logs a witness knows: its `--logs` file, one `<origin> <log vkey>` a line (blank lines and
/// `#` comments skipped). Read again on every request: a new company's origin is learned by
/// adding its line, without a restart.
fn read_logs(path: &Path) -> anyhow::Result<BTreeMap<String, Vec<VerifierKey>>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the logs file {}", path.display()))?;
    let mut logs: BTreeMap<String, Vec<VerifierKey>> = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (origin, vkey) = line
            .split_once(char::is_whitespace)
            .with_context(|| format!("{}:{}: expected <origin> <vkey>", path.display(), n + 1))?;
        let key = VerifierKey::parse(vkey)
            .filter(|k| k.key_type == NOTE_ED25519)
            .with_context(|| {
                format!(
                    "{}:{}: not an Ed25519 note verifier key",
                    path.display(),
                    n + 1
                )
            })?;
        logs.entry(origin.to_owned()).or_default().push(key);
    }
    Ok(logs)
}

/// The witness's state: the latest checkpoint it cosigned per origin, kept in a JSON file
/// (`{"<origin>": {"size": n, "root": "<base64>"}}`), replaced atomically (written aside, synced,
/// renamed) before each answer.
struct State {
    path: PathBuf,
    logs: BTreeMap<String, Cosigned>,
}

impl State {
    fn open(path: &Path) -> anyhow::Result<State> {
        let mut logs = BTreeMap::new();
        if path.exists() {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading the state {}", path.display()))?;
            let json: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("the state {} is not JSON", path.display()))?;
            for (origin, value) in json.as_object().into_iter().flatten() {
                let size = value["size"].as_u64();
                let root = value["root"]
                    .as_str()
                    .and_then(|r| STANDARD.decode(r).ok())
                    .and_then(|r| <[u8; 32]>::try_from(r).ok());
                let (Some(size), Some(root)) = (size, root) else {
                    anyhow::bail!("the state {} is damaged at {origin}", path.display());
                };
                logs.insert(origin.clone(), Cosigned { size, root });
            }
        }
        Ok(State {
            path: path.to_owned(),
            logs,
        })
    }

    fn save(&self) -> anyhow::Result<()> {
        let json: serde_json::Map<String, serde_json::Value> = self
            .logs
            .iter()
            .map(|(origin, c)| {
                (
                    origin.clone(),
                    serde_json::json!({"size": c.size, "root": STANDARD.encode(c.root)}),
                )
            })
            .collect();
        let aside = self.path.with_extension("tmp");
        let mut file = std::fs::File::create(&aside)
            .with_context(|| format!("writing {}", aside.display()))?;
        file.write_all(serde_json::Value::Object(json).to_string().as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&aside, &self.path)
            .with_context(|| format!("replacing {}", self.path.display()))?;
        Ok(())
    }
}

struct Witness {
    cosigner: Cosigner,
    logs_file: PathBuf,
    state: Mutex<State>,
}

impl Witness {
    /// One add-checkpoint: check, record and persist under the state's lock (the protocol's
    /// atomicity), then answer.
    fn add_checkpoint(&self, body: &str) -> Answer {
        let logs = match read_logs(&self.logs_file) {
            Ok(logs) => logs,
            Err(e) => {
                tracing::error!(error = format!("{e:#}"), "the witness cannot read its logs");
                return Answer::text(500, "the witness cannot read its logs");
            }
        };
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = chrono::Utc::now().timestamp().max(1) as u64;
        let previous = |origin: &str| state.logs.get(origin).copied();
        match self.cosigner.add_checkpoint(body, &logs, previous, now) {
            Ok(accepted) => {
                let before = state
                    .logs
                    .insert(accepted.origin.clone(), accepted.cosigned);
                if let Err(e) = state.save() {
                    match before {
                        Some(b) => state.logs.insert(accepted.origin, b),
                        None => state.logs.remove(&accepted.origin),
                    };
                    tracing::error!(
                        error = format!("{e:#}"),
                        "the witness cannot keep its state"
                    );
                    return Answer::text(500, "the witness cannot keep its state");
                }
                tracing::info!(origem = %accepted.origin, tamanho = accepted.cosigned.size, "cosigned");
                Answer {
                    status: 200,
                    content_type: "text/plain; charset=utf-8",
                    body: accepted.cosignatures,
                }
            }
            Err(Refusal::Conflict(size)) => {
                tracing::warn!(
                    latest = size,
                    "refused: the old size is not the latest cosigned one"
                );
                Answer {
                    status: 409,
                    content_type: "text/x.tlog.size",
                    body: format!("{size}\n"),
                }
            }
            Err(refusal) => {
                tracing::warn!(status = refusal.status(), reason = %refusal, "refused");
                Answer::text(refusal.status(), &refusal.to_string())
            }
        }
    }
}

/// What the witness answers (built into a response on the executor thread).
struct Answer {
    status: u16,
    content_type: &'static str,
    body: String,
}

impl Answer {
    fn text(status: u16, message: &str) -> Answer {
        Answer {
            status,
            content_type: "text/plain; charset=utf-8",
            body: format!("{message}\n"),
        }
    }
}

async fn add_checkpoint(witness: web::Data<Witness>, body: web::Bytes) -> HttpResponse {
    let Ok(text) = String::from_utf8(body.to_vec()) else {
        return HttpResponse::BadRequest().body("the body is not UTF-8\n");
    };
    let witness = witness.into_inner();
    let answer = web::block(move || witness.add_checkpoint(&text))
        .await
        .unwrap_or_else(|_| Answer::text(500, "the witness failed"));
    HttpResponse::build(
        actix_web::http::StatusCode::from_u16(answer.status)
            .unwrap_or(actix_web::http::StatusCode::INTERNAL_SERVER_ERROR),
    )
    .content_type(answer.content_type)
    .body(answer.body)
}

/// What `witness serve` is given.
#[derive(Debug)]
pub struct ServeArgs {
    pub listen: String,
    pub state: PathBuf,
    pub logs: PathBuf,
    pub name: String,
    pub exit_on_stdin_close: bool,
}

/// Binds, prints `witness vkey <vkey>` then `witness listening on http://ADDR`, and serves
/// `POST /add-checkpoint` until stopped.
pub fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let seed = std::env::var(KEY_VAR)
        .ok()
        .filter(|k| !k.trim().is_empty())
        .with_context(|| {
            format!("{KEY_VAR} must hold the witness's key: base64 of a 32-byte Ed25519 seed (openssl rand -base64 32)")
        })?;
    let seed = AuditSigner::seed_from_base64(&seed).context(KEY_VAR)?;
    let cosigner = Cosigner::new(CosignerKey::from_seed(&args.name, seed));
    read_logs(&args.logs)?;
    let witness = web::Data::new(Witness {
        cosigner,
        logs_file: args.logs.clone(),
        state: Mutex::new(State::open(&args.state)?),
    });
    let listener =
        TcpListener::bind(&args.listen).with_context(|| format!("binding {}", args.listen))?;
    let bound = listener.local_addr()?;
    if args.exit_on_stdin_close {
        super::serve::exit_when_stdin_closes();
    }
    let vkey = witness.cosigner.verifier_key().to_string();
    let witness = Arc::new(witness);
    actix_web::rt::System::new().block_on(async move {
        let data = witness.as_ref().clone();
        let server = HttpServer::new(move || {
            App::new()
                .app_data(data.clone())
                .app_data(web::PayloadConfig::new(BODY_LIMIT))
                .route("/add-checkpoint", web::post().to(add_checkpoint))
        })
        .workers(1)
        .listen(listener)?
        .run();
        println!("witness vkey {vkey}");
        println!("witness listening on http://{bound}");
        std::io::stdout().flush()?;
        tracing::info!(address = %bound, vkey = %vkey, "witness serving");
        server.await.context("witness HTTP server")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_witnesses_setting_reads_url_and_key_pairs_and_refuses_a_log_key() {
        let key = CosignerKey::from_seed("w.example/1", [1u8; 32]).verifier_key();
        let text = format!("url=https://w.example/;key={key}, url=http://127.0.0.1:9;key={key}");
        let list = parse_witnesses(&text).unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0], ("https://w.example".to_owned(), key.clone()));
        assert_eq!(parse_witnesses("").unwrap(), vec![]);
        assert!(parse_witnesses("url=ftp://x;key=a").is_none());
        let log_key = VerifierKey::new("log", NOTE_ED25519, [2u8; 32]);
        assert!(parse_witnesses(&format!("url=http://x;key={log_key}")).is_none());
    }
}
