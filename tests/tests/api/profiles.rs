//! Deployed profiles fail closed: staging and production keep the SSRF guard and https-only
//! webhooks even when their `config/<APP_ENV>.toml` is missing from the config folder.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use testkit::processes::{bin_path, repo_root};

/// What staging and production need from the environment to start at all.
const DEPLOYED_ENV: [(&str, &str); 7] = [
    (
        "APP__AUDITORIA__SIGNING_KEY",
        "cHJvZmlsZS10ZXN0cy1hdWRpdC1zaWduaW5nLWtleSE=",
    ),
    (
        "APP__AUDITORIA__SIGNING_KEY_SANDBOX",
        crate::operability::SANDBOX_AUDIT_KEY,
    ),
    (
        "APP__WEBHOOKS__ENCRYPTION_KEY",
        "c2VjcmV0LWtleS1mb3ItdGhlLWNvbmZpZy10ZXN0cyE=",
    ),
    ("APP__METRICS__TOKEN", "profile-metrics-token"),
    ("APP__PGCC__BASE_URL", "https://pgcc.example"),
    ("APP__SERVER__TRUSTED_PROXIES", "none"),
    ("APP__AUDITORIA__WITNESSES", crate::operability::WITNESSES),
];

/// `consent-api config check` with exactly `env`, reading `config_dir`; its standard output.
fn config_check(app_env: &str, config_dir: &Path, env: &[(&str, &str)]) -> String {
    let out: Output = Command::new(bin_path("consent-api"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("APP_ENV", app_env)
        .env("APP_CONFIG_DIR", config_dir)
        .envs(DEPLOYED_ENV)
        .envs(env.iter().copied())
        .args(["config", "check"])
        .stdin(Stdio::null())
        .output()
        .expect("run consent-api");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The `[webhooks]` section of `config check`'s output.
fn webhooks_section(stdout: &str) -> &str {
    let start = stdout.find("\n[webhooks]\n").expect("a [webhooks] section");
    let rest = &stdout[start + 1..];
    let end = rest[1..].find("\n[").map_or(rest.len(), |i| i + 2);
    &rest[..end]
}

fn empty_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "consent-config-{name}-{}",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn staging_and_production_keep_the_ssrf_guard_and_https_without_their_config_file() {
    let empty = empty_dir("empty");
    // Only a copy of default.toml (which allows both, for development): still closed.
    let defaults_only = empty_dir("defaults");
    std::fs::copy(
        repo_root().join("config/default.toml"),
        defaults_only.join("default.toml"),
    )
    .unwrap();
    for app_env in ["staging", "production"] {
        for dir in [&empty, &defaults_only] {
            let stdout = config_check(app_env, dir, &[]);
            let webhooks = webhooks_section(&stdout);
            assert!(
                webhooks.contains("\nrequire_https = true\n"),
                "{app_env}, {}:\n{webhooks}",
                dir.display()
            );
            assert!(
                webhooks.contains("\nallow_non_public_targets = false\n"),
                "{app_env}, {}:\n{webhooks}",
                dir.display()
            );
            // The edge's timeouts are shown like every other setting.
            for setting in ["body_timeout_ms = 10000", "header_timeout_ms = 5000"] {
                assert!(stdout.contains(&format!("\n{setting}\n")), "{stdout}");
            }
        }
    }
    std::fs::remove_dir_all(&empty).unwrap();
    std::fs::remove_dir_all(&defaults_only).unwrap();
}

#[test]
fn an_environment_variable_may_still_open_a_deployed_profile_explicitly() {
    let empty = empty_dir("override");
    let stdout = config_check(
        "staging",
        &empty,
        &[
            ("APP__WEBHOOKS__REQUIRE_HTTPS", "false"),
            ("APP__WEBHOOKS__ALLOW_NON_PUBLIC_TARGETS", "true"),
        ],
    );
    let webhooks = webhooks_section(&stdout);
    assert!(webhooks.contains("\nrequire_https = false\n"), "{webhooks}");
    assert!(
        webhooks.contains("\nallow_non_public_targets = true\n"),
        "{webhooks}"
    );
    // The test profile is not deployed: development defaults apply without its file.
    let stdout = config_check("test", &empty, &[]);
    assert!(
        webhooks_section(&stdout).contains("\nallow_non_public_targets = true\n"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&empty).unwrap();
}

/// `config check` of `app_env` with the deployed settings but `trusted_proxies` as given (`None`:
/// not set at all); its exit status and standard error.
fn check_proxies(app_env: &str, proxies: Option<&str>) -> (bool, String) {
    let dir = empty_dir("proxies");
    let mut cmd = Command::new(bin_path("consent-api"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("APP_ENV", app_env)
        .env("APP_CONFIG_DIR", &dir)
        .envs(
            DEPLOYED_ENV
                .iter()
                .filter(|(k, _)| *k != "APP__SERVER__TRUSTED_PROXIES")
                .copied(),
        )
        .args(["config", "check"])
        .stdin(Stdio::null());
    if let Some(value) = proxies {
        cmd.env("APP__SERVER__TRUSTED_PROXIES", value);
    }
    let out = cmd.output().expect("run consent-api");
    std::fs::remove_dir_all(&dir).unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn staging_and_production_refuse_an_unsaid_proxy_setting_and_accept_none_or_a_list() {
    for app_env in ["staging", "production"] {
        for unsaid in [None, Some(""), Some("  ")] {
            let (ok, stderr) = check_proxies(app_env, unsaid);
            assert!(!ok, "{app_env} {unsaid:?}");
            assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
            assert!(
                stderr.contains("server.trusted_proxies")
                    && stderr.contains("APP__SERVER__TRUSTED_PROXIES")
                    && stderr.contains("none"),
                "{stderr}"
            );
        }
        for said in ["none", "NONE", "10.0.0.0/8", "10.0.0.5,2001:db8::/32"] {
            let (ok, stderr) = check_proxies(app_env, Some(said));
            assert!(ok, "{app_env} {said}: {stderr}");
        }
    }
    // development and test keep the empty default
    assert!(check_proxies("test", None).0);
}
