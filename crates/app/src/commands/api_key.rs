use anyhow::{bail, Context};
use application::{IssueApiKeyError, ListApiKeysError, RevokeApiKeyError};
use chrono::{DateTime, SecondsFormat, Utc};
use domain::{CompanyId, Scopes};
use ports::ApiKeySummary;
use uuid::Uuid;

use crate::context::ProcessContext;
use crate::settings::Settings;
use crate::wiring;

/// Prints the key alone on stdout; it cannot be shown again (only its hash is stored). `scopes`
/// is `--escopos` (comma-separated); without it the key gets `Scopes::DEFAULT`. An unknown scope
/// is refused before anything is stored (or the database is even reached).
pub fn issue(
    settings: &Settings,
    context: &ProcessContext,
    company: &str,
    scopes: Option<&str>,
    sandbox: bool,
) -> anyhow::Result<()> {
    let id = company_id(company)?;
    let scopes = match scopes {
        Some(list) => Scopes::parse_list(list).context("--escopos")?,
        None => Scopes::DEFAULT,
    };
    let services = wiring::services(settings, context, wiring::pool(settings)?)?;
    if sandbox {
        return match services.api_keys.issue_sandbox(id, scopes) {
            Ok((issued, sandbox)) => {
                println!("{}", issued.key);
                eprintln!(
                    "sandbox api key {} issued (prefix {}, escopos {scopes}) for the sandbox {sandbox} of company {id}; store it now, it is not shown again",
                    issued.id, issued.prefixo
                );
                Ok(())
            }
            Err(e) => Err(issue_error(id, e)),
        };
    }
    match services.api_keys.issue(id, scopes) {
        Ok(issued) => {
            println!("{}", issued.key);
            eprintln!(
                "api key {} issued (prefix {}, escopos {scopes}); store it now, it is not shown again",
                issued.id, issued.prefixo
            );
            Ok(())
        }
        Err(e) => Err(issue_error(id, e)),
    }
}

fn issue_error(id: CompanyId, error: IssueApiKeyError) -> anyhow::Error {
    match error {
        IssueApiKeyError::UnknownCompany => anyhow::anyhow!("no company with id {id}"),
        IssueApiKeyError::SandboxCompany => anyhow::anyhow!(
            "company {id} is a sandbox: its keys are sandbox keys (api-key issue --sandbox)"
        ),
        IssueApiKeyError::SandboxNotCreated => {
            anyhow::anyhow!("the sandbox of company {id} could not be created")
        }
        IssueApiKeyError::Repo(e) => anyhow::Error::new(e).context("issuing the key"),
    }
}

/// Prints one line per key of the company, oldest first, starting with the key's id:
/// `id<TAB>prefix<TAB>created<TAB>last used or -<TAB>revoked or -<TAB>scopes` (instants in
/// RFC 3339, UTC; scopes comma-separated, as `--escopos` takes them). The scopes come last so
/// that scripts reading the first five columns keep working.
pub fn list(settings: &Settings, context: &ProcessContext, company: &str) -> anyhow::Result<()> {
    let id = company_id(company)?;
    let services = wiring::services(settings, context, wiring::pool(settings)?)?;
    match services.api_keys.list(id) {
        Ok(keys) => {
            for key in &keys {
                println!("{}", list_line(key));
            }
            Ok(())
        }
        Err(ListApiKeysError::UnknownCompany) => bail!("no company with id {id}"),
        Err(ListApiKeysError::Repo(e)) => Err(anyhow::Error::new(e).context("listing the keys")),
    }
}

/// Beyond `cache.max_silence_ms`, how long a notification may still be on its way to a feed.
const REVOCATION_MARGIN: std::time::Duration = std::time::Duration::from_millis(100);

/// Revokes the key; says so on stderr (stdout stays empty). Returns once every running
/// instance refuses the key (see the wait below).
pub fn revoke(settings: &Settings, context: &ProcessContext, id: &str) -> anyhow::Result<()> {
    let id = Uuid::parse_str(id.trim()).context("the key id must be a UUID (see api-key list)")?;
    let services = wiring::services(settings, context, wiring::pool(settings)?)?;
    match services.api_keys.revoke(id) {
        Ok(revoked) if revoked.already_revoked => {
            eprintln!(
                "api key {id} was already revoked at {}; nothing changed",
                instant(revoked.key.revoked_at)
            );
            Ok(())
        }
        Ok(revoked) => {
            // Running instances drop the key from their caches when the database notifies them,
            // or stop trusting their caches after cache.max_silence_ms without the feed: waiting
            // that long (plus a margin for the last notification in flight) lets "every
            // instance refuses it from now on" hold when this command returns.
            if settings.cache.enabled {
                std::thread::sleep(settings.cache.max_silence() + REVOCATION_MARGIN);
            }
            eprintln!(
                "api key {id} (prefix {}) revoked at {}; every instance refuses it from now on",
                revoked.key.prefixo,
                instant(revoked.key.revoked_at)
            );
            Ok(())
        }
        Err(RevokeApiKeyError::NotFound) => bail!("no API key with id {id}"),
        Err(RevokeApiKeyError::Repo(e)) => Err(anyhow::Error::new(e).context("revoking the key")),
    }
}

fn company_id(company: &str) -> anyhow::Result<CompanyId> {
    let id = Uuid::parse_str(company.trim()).context("--empresa must be a company id (UUID)")?;
    Ok(CompanyId(id))
}

fn list_line(key: &ApiKeySummary) -> String {
    format!(
        "{}\t{}\t{}\t{}\t{}\t{}",
        key.id,
        key.prefixo,
        instant(Some(key.created_at)),
        instant(key.last_used_at),
        instant(key.revoked_at),
        key.scopes
    )
}

fn instant(at: Option<DateTime<Utc>>) -> String {
    at.map_or_else(
        || "-".to_owned(),
        |at| at.to_rfc3339_opts(SecondsFormat::Secs, true),
    )
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn a_list_line_starts_with_the_id_then_prefix_created_last_use_revocation_and_scopes() {
        let key = ApiKeySummary {
            id: Uuid::from_u128(1),
            company_id: CompanyId(Uuid::from_u128(2)),
            prefixo: "cak_0a1b2c3d".to_owned(),
            created_at: Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap(),
            last_used_at: None,
            revoked_at: Some(Utc.with_ymd_and_hms(2026, 2, 3, 4, 5, 6).unwrap()),
            scopes: Scopes::DEFAULT,
        };

        assert_eq!(
            list_line(&key),
            "00000000-0000-0000-0000-000000000001\tcak_0a1b2c3d\t2026-01-02T03:04:05Z\t-\t2026-02-03T04:05:06Z\tintegracao,consulta,webhooks"
        );
    }
}
