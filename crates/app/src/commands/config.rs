//! `consent-api config check`: the effective configuration (every section, after the files and
//! the environment), validated, with every secret shown as `<hidden>`.

use serde_json::Value;

use crate::settings::Settings;

pub const HIDDEN: &str = "<hidden>";

/// Prints the effective configuration on stdout. `settings` were loaded (and so validated) by
/// `main`: a bad configuration never gets here, it ends with the one-line error.
pub fn check(settings: &Settings) -> anyhow::Result<()> {
    let (env, config) = Settings::layers()?;
    let mut value: Value = config.try_deserialize()?;
    // Optional settings left unset are shown as unset rather than left out.
    for (section, key) in [
        ("pgcc", "token"),
        ("metrics", "token"),
        ("cache", "feed_url"),
    ] {
        if let Value::Object(sections) = &mut value {
            if let Value::Object(table) = sections
                .entry(section)
                .or_insert_with(|| Value::Object(Default::default()))
            {
                table.entry(key).or_insert(Value::Null);
            }
        }
    }
    hide_secrets(&mut value, None);
    print!("{}", render(&env, &value));
    least_privilege(settings)?;
    if settings.evidence.uses_s3() {
        // the secret is checked set, never shown (it is `<hidden>` above too)
        eprintln!(
            "evidencias: files kept in the bucket {} at {} (region {})",
            settings.evidence.s3_bucket, settings.evidence.s3_endpoint, settings.evidence.s3_region
        );
    } else {
        eprintln!("evidencias: files kept in PostgreSQL");
    }
    eprintln!("configuration of {} is valid", settings.environment);
    Ok(())
}

/// `# APP_ENV = env`, then one `[section]` per table and `key = value` per setting (values in
/// JSON notation, which TOML reads for strings, numbers and booleans).
pub fn render(env: &str, value: &Value) -> String {
    let mut out = format!("# APP_ENV = {env}\n");
    let Value::Object(sections) = value else {
        return out;
    };
    for (section, table) in sections {
        match table {
            Value::Object(keys) => {
                out.push_str(&format!("\n[{section}]\n"));
                for (key, v) in keys {
                    if v.is_null() {
                        out.push_str(&format!("# {key}: unset\n"));
                    } else {
                        out.push_str(&format!("{key} = {v}\n"));
                    }
                }
            }
            other => out.push_str(&format!("{section} = {other}\n")),
        }
    }
    out
}

/// Whether a setting named `key` holds a secret (tokens, keys, passwords, secrets).
fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    // `signing_key` anywhere: `auditoria.signing_key_sandbox` does not end in `_key`
    ["token", "secret", "password", "passwd", "signing_key"]
        .iter()
        .any(|w| key.contains(w))
        || key == "key"
        || key.ends_with("_key")
}

/// Replaces secret values by `<hidden>` and the password of any URL (`user:<hidden>@host`).
pub fn hide_secrets(value: &mut Value, key: Option<&str>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                hide_secrets(v, Some(k));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| hide_secrets(v, key)),
        Value::Null => {}
        v if key.is_some_and(is_secret_key) => *v = Value::String(HIDDEN.to_owned()),
        // A list of URLs (`database.replica_urls`) hides each one's password.
        Value::String(s) => {
            *s = s
                .split(',')
                .map(url_without_password)
                .collect::<Vec<_>>()
                .join(",")
        }
        _ => {}
    }
}

/// `postgres://user:pass@host/db?sslmode=x` -> `postgres://user:<hidden>@host/db?sslmode=x`; a
/// query naming a password is hidden whole. Anything else is returned as is.
pub fn url_without_password(raw: &str) -> String {
    let Some((scheme, rest)) = raw.split_once("://") else {
        return raw.to_owned();
    };
    let (before_query, query) = match rest.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (rest, None),
    };
    let (authority, path) = match before_query.find('/') {
        Some(i) => before_query.split_at(i),
        None => (before_query, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _password)) => format!("{user}:{HIDDEN}@{host}"),
            None => format!("{userinfo}@{host}"),
        },
        None => authority.to_owned(),
    };
    let query = match query {
        Some(q) if q.to_ascii_lowercase().contains("password") => format!("?{HIDDEN}"),
        Some(q) => format!("?{q}"),
        None => String::new(),
    };
    format!("{scheme}://{authority}{path}{query}")
}

/// The role of `database.url` against least privilege (docs/security.md): each excess named on
/// stderr; an error in staging and production. An unreachable database is said, not failed on:
/// the files and the environment are what this command checks first.
fn least_privilege(settings: &Settings) -> anyhow::Result<()> {
    let findings = crate::wiring::pool(settings)
        .and_then(|pool| postgres_adapter::privileges::excess_privileges(&pool));
    match findings {
        Err(e) => eprintln!("database.url: not reachable, its role's privileges unchecked ({e:#})"),
        Ok(findings) if findings.is_empty() => {
            eprintln!("database.url: the role owns nothing and cannot write the evidence directly")
        }
        Ok(findings) => {
            for finding in &findings {
                eprintln!("database.url: the role {finding}");
            }
            if settings.is_deployed() {
                anyhow::bail!(
                    "database.url: the role must own nothing and write the evidence only through the owner's functions (docs/security.md, \"Least privilege\")"
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_password_of_a_list_of_urls_is_hidden() {
        let mut value = serde_json::json!({
            "replica_urls": "postgres://a:p1@r1/db,postgres://b:p2@r2/db",
            "trusted_proxies": "10.0.0.0/8, 192.0.2.1",
        });
        hide_secrets(&mut value, None);
        assert_eq!(
            value["replica_urls"],
            "postgres://a:<hidden>@r1/db,postgres://b:<hidden>@r2/db"
        );
        assert_eq!(value["trusted_proxies"], "10.0.0.0/8, 192.0.2.1");
    }

    #[test]
    fn passwords_in_urls_are_hidden_and_the_rest_kept() {
        assert_eq!(
            url_without_password("postgres://app:s3cr3t@db:5432/consent?sslmode=require"),
            "postgres://app:<hidden>@db:5432/consent?sslmode=require"
        );
        assert_eq!(
            url_without_password("postgres://postgres@127.0.0.1:5432/x"),
            "postgres://postgres@127.0.0.1:5432/x"
        );
        assert_eq!(
            url_without_password("postgres://h/db?user=a&password=b"),
            "postgres://h/db?<hidden>"
        );
        assert_eq!(url_without_password("not a url"), "not a url");
    }

    #[test]
    fn secrets_are_hidden_wherever_they_are_and_unset_ones_stay_unset() {
        let mut v = json!({
            "database": {"url": "postgres://u:pw@h/db", "pool_size": 8},
            "pgcc": {"base_url": "https://pgcc", "token": "tok"},
            "webhooks": {"encryption_key": "k", "require_https": true},
            "metrics": {"token": null},
            "auditoria": {"signing_key": "s", "signing_key_sandbox": "s2", "name": "n"},
        });
        hide_secrets(&mut v, None);
        assert_eq!(v["database"]["url"], "postgres://u:<hidden>@h/db");
        assert_eq!(v["database"]["pool_size"], 8);
        assert_eq!(v["pgcc"]["token"], HIDDEN);
        assert_eq!(v["pgcc"]["base_url"], "https://pgcc");
        assert_eq!(v["webhooks"]["encryption_key"], HIDDEN);
        assert_eq!(v["webhooks"]["require_https"], true);
        assert!(v["metrics"]["token"].is_null());
        assert_eq!(v["auditoria"]["signing_key"], HIDDEN);
        assert_eq!(v["auditoria"]["signing_key_sandbox"], HIDDEN);
        assert_eq!(v["auditoria"]["name"], "n");
        let text = render("test", &v);
        assert!(text.starts_with("# APP_ENV = test\n"));
        assert!(text.contains("\n[pgcc]\nbase_url = \"https://pgcc\"\ntoken = \"<hidden>\"\n"));
        assert!(!text.contains("pw") && !text.contains("tok\""));
    }
}
