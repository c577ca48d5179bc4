//! Webhook URLs: where a company is notified. Removal is soft: the row keeps its removal time.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::{CompanyId, EventSelection};

/// A URL a company registered to receive its webhook events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookUrl {
    /// Our id of the registration.
    pub id: Uuid,
    /// The company it notifies.
    pub company_id: CompanyId,
    /// The URL, as accepted by [`WebhookUrl::validate_url`].
    pub url: String,
    /// When it was registered.
    pub created_at: DateTime<Utc>,
    /// When the company removed it; `None` while registered.
    pub removed_at: Option<DateTime<Utc>>,
    /// Set when it failed without a single success for the configured time (5 days by default)
    /// since [`WebhookUrl::failing_since`]: no new deliveries until the company re-enables it.
    pub disabled_at: Option<DateTime<Utc>>,
    /// The first failed attempt (test events aside) after its last success, or after its
    /// re-enabling: `None` while its last attempt succeeded or none was made. Kept once it is
    /// disabled, to say since when it failed.
    pub failing_since: Option<DateTime<Utc>>,
    /// Why it was disabled (`None` while active): [`WebhookUrl::DISABLED_FOR_FAILING`].
    pub disabled_reason: Option<String>,
    /// The events it receives (`eventos`): all, or only the listed types.
    pub events: EventSelection,
}

/// Why [`WebhookUrl::validate_url`] refused a URL; the messages are for the API client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookUrlError {
    /// Not an absolute `http`/`https` URL with a host, or it contains whitespace.
    #[error("a URL deve ser absoluta, com esquema http ou https e um host")]
    NotAbsoluteHttp,
    /// Longer than [`WebhookUrl::MAX_LEN`] characters.
    #[error("a URL tem mais de {max} caracteres")]
    TooLong {
        /// The limit that was exceeded.
        max: usize,
    },
}

impl WebhookUrl {
    /// The one reason a URL is disabled today (`motivoDesativacao`): every attempt failed, without
    /// a single success, for the configured time since [`WebhookUrl::failing_since`].
    pub const DISABLED_FOR_FAILING: &'static str = "falhas_sem_sucesso";

    /// Longest accepted URL, in characters, after trimming.
    pub const MAX_LEN: usize = 2048;

    /// Checks that `raw` is an absolute http(s) URL with a host and returns it trimmed.
    ///
    /// Rules, after trimming: at most [`Self::MAX_LEN`] characters ([`WebhookUrlError::TooLong`]);
    /// the scheme is `http://` or `https://` in any case; no whitespace anywhere; the authority
    /// (what follows the scheme up to the first `/`, `?` or `#`), without any `userinfo@` and
    /// without a `:port`, is a non-empty host. Anything else is
    /// [`WebhookUrlError::NotAbsoluteHttp`].
    pub fn validate_url(raw: &str) -> Result<String, WebhookUrlError> {
        let url = raw.trim();
        if url.chars().count() > Self::MAX_LEN {
            return Err(WebhookUrlError::TooLong { max: Self::MAX_LEN });
        }
        let rest = strip_prefix_ignore_case(url, "https://")
            .or_else(|| strip_prefix_ignore_case(url, "http://"))
            .ok_or(WebhookUrlError::NotAbsoluteHttp)?;
        if url.chars().any(char::is_whitespace) {
            return Err(WebhookUrlError::NotAbsoluteHttp);
        }
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let host_and_port = authority
            .rsplit_once('@')
            .map_or(authority, |(_userinfo, host)| host);
        if host(host_and_port).is_empty() {
            return Err(WebhookUrlError::NotAbsoluteHttp);
        }
        Ok(url.to_owned())
    }
}

impl WebhookUrl {
    /// The form of a valid URL (one [`Self::validate_url`] returned) compared to decide whether
    /// two registrations are "the same URL": what a receiver would get either way. The scheme
    /// and the host are lower-cased (DNS and schemes ignore case), the scheme's default port
    /// (`:80` for http, `:443` for https) and any fragment (never sent over HTTP) are dropped, an
    /// empty path becomes `/`. The user info, the path and the query are kept as written: a
    /// receiver may tell them apart by case.
    pub fn normalized(url: &str) -> String {
        let url = url.split('#').next().unwrap_or_default();
        let (scheme, rest) = match url.find("://") {
            Some(i) => (url[..i].to_ascii_lowercase(), &url[i + 3..]),
            None => return url.to_owned(),
        };
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let (userinfo, host_and_port) = match authority.rsplit_once('@') {
            Some((userinfo, host_and_port)) => (Some(userinfo), host_and_port),
            None => (None, authority),
        };
        let host_part = host(host_and_port);
        let port = &host_and_port[host_part.len()..];
        let default_port = match scheme.as_str() {
            "http" => ":80",
            "https" => ":443",
            _ => "",
        };
        let port = if port == default_port || port == ":" {
            ""
        } else {
            port
        };
        let tail = if tail.is_empty() || tail.starts_with('?') {
            format!("/{tail}")
        } else {
            tail.to_owned()
        };
        let userinfo = userinfo.map(|u| format!("{u}@")).unwrap_or_default();
        format!(
            "{scheme}://{userinfo}{}{port}{tail}",
            host_part.to_ascii_lowercase()
        )
    }
}

/// `s` without `prefix`, compared ASCII case-insensitively.
fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// The host of `host[:port]`; an IPv6 literal keeps its brackets (`[::1]:8080` -> `[::1]`).
fn host(host_and_port: &str) -> &str {
    if host_and_port.starts_with('[') {
        match host_and_port.find(']') {
            Some(end) if end > 1 => &host_and_port[..=end],
            _ => "",
        }
    } else {
        host_and_port
            .split_once(':')
            .map_or(host_and_port, |(host, _port)| host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(raw: &str) -> String {
        WebhookUrl::validate_url(raw).unwrap_or_else(|e| panic!("{raw:?}: {e}"))
    }

    fn rejected(raw: &str) {
        assert_eq!(
            WebhookUrl::validate_url(raw),
            Err(WebhookUrlError::NotAbsoluteHttp),
            "{raw:?}"
        );
    }

    #[test]
    fn plain_https_url_is_accepted_unchanged() {
        assert_eq!(
            ok("https://example.com/hooks/consent"),
            "https://example.com/hooks/consent"
        );
    }

    #[test]
    fn plain_http_url_is_accepted() {
        assert_eq!(ok("http://localhost:8080/cb"), "http://localhost:8080/cb");
    }

    #[test]
    fn surrounding_whitespace_is_trimmed() {
        assert_eq!(ok("  https://example.com/x \n"), "https://example.com/x");
    }

    #[test]
    fn scheme_is_case_insensitive_and_kept_as_given() {
        assert_eq!(ok("HTTPS://Example.com/A"), "HTTPS://Example.com/A");
        assert_eq!(ok("Http://example.com"), "Http://example.com");
    }

    #[test]
    fn urls_with_port_query_fragment_userinfo_or_ip_hosts_are_accepted() {
        for raw in [
            "https://example.com",
            "https://example.com/",
            "https://example.com?x=1",
            "https://example.com#frag",
            "https://example.com:8443/a/b?c=d#e",
            "https://user:secret@example.com/cb",
            "http://127.0.0.1:9000/cb",
            "http://[::1]:8080/cb",
            "https://münchen.example/cb",
        ] {
            ok(raw);
        }
    }

    #[test]
    fn other_schemes_are_rejected() {
        for raw in [
            "ftp://example.com",
            "file:///etc/passwd",
            "ws://example.com",
            "httpx://a",
        ] {
            rejected(raw);
        }
    }

    #[test]
    fn relative_or_scheme_less_urls_are_rejected() {
        for raw in [
            "example.com/cb",
            "/cb",
            "//example.com/cb",
            "https:example.com",
            "https:/example.com",
        ] {
            rejected(raw);
        }
    }

    #[test]
    fn empty_and_blank_inputs_are_rejected() {
        rejected("");
        rejected("   ");
    }

    #[test]
    fn urls_without_a_host_are_rejected() {
        for raw in [
            "https://",
            "http://",
            "https:///path",
            "https://?q=1",
            "https://#f",
            "https://user@/cb",
            "https://:8080/cb",
            "http://[]/cb",
        ] {
            rejected(raw);
        }
    }

    #[test]
    fn whitespace_inside_the_url_is_rejected() {
        for raw in [
            "https://exa mple.com",
            "https://example.com/a b",
            "https://example.com/a\tb",
            "https://example.com?q=a b",
            "https:// example.com",
        ] {
            rejected(raw);
        }
    }

    #[test]
    fn a_url_of_exactly_the_maximum_length_is_accepted() {
        let prefix = "https://example.com/";
        let raw = format!("{prefix}{}", "a".repeat(WebhookUrl::MAX_LEN - prefix.len()));
        assert_eq!(raw.len(), WebhookUrl::MAX_LEN);
        assert_eq!(ok(&raw), raw);
    }

    #[test]
    fn a_url_longer_than_the_maximum_is_too_long() {
        let prefix = "https://example.com/";
        let raw = format!(
            "{prefix}{}",
            "a".repeat(WebhookUrl::MAX_LEN + 1 - prefix.len())
        );
        assert_eq!(
            WebhookUrl::validate_url(&raw),
            Err(WebhookUrlError::TooLong { max: 2048 })
        );
    }

    #[test]
    fn length_is_measured_after_trimming() {
        let prefix = "https://example.com/";
        let url = format!("{prefix}{}", "a".repeat(WebhookUrl::MAX_LEN - prefix.len()));
        let raw = format!("   {url}   ");
        assert_eq!(ok(&raw), url);
    }

    #[test]
    fn a_non_ascii_prefix_does_not_panic() {
        rejected("ççççççççç");
        rejected("日本語のURL");
    }

    #[test]
    fn too_long_message_states_the_limit() {
        assert_eq!(
            WebhookUrlError::TooLong { max: 2048 }.to_string(),
            "a URL tem mais de 2048 caracteres"
        );
    }

    #[test]
    fn normalizing_lower_cases_scheme_and_host_and_keeps_path_and_query_as_written() {
        assert_eq!(
            WebhookUrl::normalized("HTTPS://Example.COM/Hooks/A?X=1"),
            "https://example.com/Hooks/A?X=1"
        );
    }

    #[test]
    fn normalizing_drops_the_default_port_and_the_fragment_and_gives_an_empty_path_a_slash() {
        for same in [
            "https://example.com",
            "https://example.com/",
            "https://example.com:443/",
            "https://EXAMPLE.com/#frag",
        ] {
            assert_eq!(
                WebhookUrl::normalized(same),
                "https://example.com/",
                "{same}"
            );
        }
        assert_eq!(
            WebhookUrl::normalized("http://example.com:80?a=1"),
            "http://example.com/?a=1"
        );
    }

    #[test]
    fn normalizing_keeps_other_ports_user_info_and_ipv6_literals() {
        assert_eq!(
            WebhookUrl::normalized("https://example.com:8443/x"),
            "https://example.com:8443/x"
        );
        assert_eq!(
            WebhookUrl::normalized("http://User:Pw@Host.example:80/x"),
            "http://User:Pw@host.example/x"
        );
        assert_eq!(
            WebhookUrl::normalized("http://[::1]:8080/cb"),
            "http://[::1]:8080/cb"
        );
        assert_ne!(
            WebhookUrl::normalized("https://example.com/a"),
            WebhookUrl::normalized("https://example.com/A")
        );
    }
}
