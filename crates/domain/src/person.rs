//! A person signed in to the console through the company's identity provider (issue 38, part 1):
//! who the access log and the console's actions name besides the key or session, and the roles the
//! provider gives them, each granting the scopes of the API keys that do the same work.

use crate::{Scope, Scopes};

/// The person, as the identity provider's `id_token` names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    /// The `sub` claim: the provider's stable id of the person (unique per issuer).
    pub sub: String,
    /// The `email` claim, when the provider sends one.
    pub email: Option<String>,
}

/// A console role, as the provider's roles claim names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `dpo`: the data protection officer (the `auditor` scope).
    Dpo,
    /// `operador`: an operator of the webhooks (the `webhooks` scope).
    Operator,
    /// `leitura`: signs in and reads what every session reads (the home page, the PGCC's health).
    Reader,
    /// `importador`: brings the company's consents in from a file (the `integracao` scope, which
    /// in the console grants the imports' page and nothing else; docs/imports.md).
    Importer,
}

impl Role {
    /// The role of a name in the roles claim (`dpo`, `operador`, `leitura`, `importador`; exact,
    /// lower-case).
    pub fn parse(name: &str) -> Option<Role> {
        match name {
            "dpo" => Some(Role::Dpo),
            "operador" => Some(Role::Operator),
            "leitura" => Some(Role::Reader),
            "importador" => Some(Role::Importer),
            _ => None,
        }
    }

    /// The scopes the role grants.
    pub const fn scopes(self) -> Scopes {
        match self {
            Role::Dpo => Scopes::of(&[Scope::Auditor]),
            Role::Operator => Scopes::of(&[Scope::Webhooks]),
            Role::Reader => Scopes::NONE,
            Role::Importer => Scopes::of(&[Scope::Integration]),
        }
    }
}

/// The console roles among `names` (others ignored), and the scopes they grant together; `None`
/// when none is a console role (the person may not sign in).
pub fn scopes_of_roles<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<Scopes> {
    let roles: Vec<Role> = names.into_iter().filter_map(Role::parse).collect();
    let scopes: Vec<Scope> = roles.iter().flat_map(|r| r.scopes().iter()).collect();
    (!roles.is_empty()).then(|| Scopes::of(&scopes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_grant_the_scopes_of_the_keys_that_do_the_same_work() {
        assert_eq!(
            scopes_of_roles(["dpo"]),
            Some(Scopes::of(&[Scope::Auditor]))
        );
        assert_eq!(
            scopes_of_roles(["operador", "dpo", "outro"]),
            Some(Scopes::of(&[Scope::Auditor, Scope::Webhooks]))
        );
        assert_eq!(scopes_of_roles(["leitura"]), Some(Scopes::NONE));
        assert_eq!(
            scopes_of_roles(["importador"]),
            Some(Scopes::of(&[Scope::Integration]))
        );
        assert_eq!(scopes_of_roles(["admin", "DPO"]), None);
        assert_eq!(scopes_of_roles([]), None);
    }
}
