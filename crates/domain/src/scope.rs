//! What an API key may do: its scopes (`escopos`). A route is allowed when the key holds any
//! scope that grants it (the grant table is the HTTP layer's: `routes/grants.rs`).

use std::fmt;

/// One role a key can hold. The wire and CLI names are the Portuguese ones (`as_str`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// `integracao`: what an integration does: create, revoke and read its requests.
    Integration,
    /// `consulta`: HashConsulta (and its batch) only.
    Check,
    /// `auditor`: every read of the company's data and the audit routes; no writes.
    Auditor,
    /// `webhooks`: the company's webhook URLs.
    Webhooks,
}

impl Scope {
    /// Every scope, in the order they are written.
    pub const ALL: [Scope; 4] = [
        Scope::Integration,
        Scope::Check,
        Scope::Auditor,
        Scope::Webhooks,
    ];

    /// The wire (and database, and CLI) name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Scope::Integration => "integracao",
            Scope::Check => "consulta",
            Scope::Auditor => "auditor",
            Scope::Webhooks => "webhooks",
        }
    }

    /// The scope named `name` (exact, lower-case), or `None`.
    pub fn parse(name: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|s| s.as_str() == name)
    }

    const fn bit(self) -> u8 {
        match self {
            Scope::Integration => 1,
            Scope::Check => 2,
            Scope::Auditor => 4,
            Scope::Webhooks => 8,
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of scopes (a key's, or the ones that grant a route). Copy: checked on every request.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Scopes(u8);

/// Why a list of scope names was refused; the message names the offending word.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopesError {
    /// A name that is no scope.
    #[error("escopo desconhecido: {0:?} (escopos: integracao, consulta, auditor, webhooks)")]
    Unknown(String),
    /// No name at all.
    #[error("a lista de escopos está vazia (escopos: integracao, consulta, auditor, webhooks)")]
    Empty,
}

impl Scopes {
    /// No scope.
    pub const NONE: Scopes = Scopes(0);

    /// What a key gets when none is asked for: every scope but `auditor`, i.e. what every key
    /// could do before scopes existed.
    pub const DEFAULT: Scopes = Scopes::of(&[Scope::Integration, Scope::Check, Scope::Webhooks]);

    /// The set holding exactly `scopes`.
    pub const fn of(scopes: &[Scope]) -> Scopes {
        let mut bits = 0;
        let mut i = 0;
        while i < scopes.len() {
            bits |= scopes[i].bit();
            i += 1;
        }
        Scopes(bits)
    }

    /// Whether `scope` is in the set.
    pub const fn contains(self, scope: Scope) -> bool {
        self.0 & scope.bit() != 0
    }

    /// Whether the two sets share a scope: a key `self` may use a route granted to `other`.
    pub const fn intersects(self, other: Scopes) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether the set holds no scope.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The scopes held, in [`Scope::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = Scope> {
        Scope::ALL.into_iter().filter(move |s| self.contains(*s))
    }

    /// Parses a comma-separated list (`integracao,consulta`); blanks around names are ignored,
    /// repetitions too. Unknown names and an empty list are refused.
    pub fn parse_list(list: &str) -> Result<Scopes, ScopesError> {
        let mut bits = 0;
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            bits |= Scope::parse(name)
                .ok_or_else(|| ScopesError::Unknown(name.to_owned()))?
                .bit();
        }
        if bits == 0 {
            return Err(ScopesError::Empty);
        }
        Ok(Scopes(bits))
    }

    /// The names, in [`Scope::ALL`]'s order.
    pub fn names(self) -> Vec<&'static str> {
        self.iter().map(Scope::as_str).collect()
    }
}

impl fmt::Display for Scopes {
    /// Comma-separated names (`integracao,consulta,webhooks`), as the CLI takes them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names().join(","))
    }
}

impl fmt::Debug for Scopes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Scopes({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_every_scope_but_auditor() {
        assert_eq!(Scopes::DEFAULT.to_string(), "integracao,consulta,webhooks");
        assert!(!Scopes::DEFAULT.contains(Scope::Auditor));
    }

    #[test]
    fn a_list_parses_with_blanks_and_repetitions() {
        let scopes = Scopes::parse_list(" auditor, consulta,auditor ").unwrap();
        assert_eq!(scopes, Scopes::of(&[Scope::Check, Scope::Auditor]));
        assert_eq!(scopes.to_string(), "consulta,auditor");
    }

    #[test]
    fn an_unknown_name_or_an_empty_list_is_refused_naming_the_word() {
        let err = Scopes::parse_list("integracao,admin").unwrap_err();
        assert_eq!(err, ScopesError::Unknown("admin".into()));
        assert!(err.to_string().contains("\"admin\""));
        assert_eq!(Scopes::parse_list(" , "), Err(ScopesError::Empty));
        assert!(Scopes::parse_list("Auditor").is_err(), "names are exact");
    }

    #[test]
    fn a_key_may_use_a_route_when_they_share_a_scope() {
        let route = Scopes::of(&[Scope::Integration, Scope::Auditor]);
        assert!(Scopes::of(&[Scope::Auditor]).intersects(route));
        assert!(!Scopes::of(&[Scope::Check, Scope::Webhooks]).intersects(route));
        assert!(!Scopes::NONE.intersects(route));
    }
}
