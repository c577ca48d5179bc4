//! Which events a webhook URL receives: all of them (including types added later), or only
//! the listed ones.

use crate::{EventType, ValidationErrors};

/// A webhook URL's choice of events (`eventos`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum EventSelection {
    /// Every event of the company's data, including types added after the choice was made.
    #[default]
    All,
    /// Only these types: never empty, no repeats, in [`EventType::SUBSCRIBABLE`] order. A type
    /// added later is not among them.
    Only(Vec<EventType>),
}

impl EventSelection {
    /// The selection a client sent as `eventos`: absent or `null` is [`EventSelection::All`];
    /// a list must name 1 or more of [`EventType::SUBSCRIBABLE`] by wire name (repeats are
    /// ignored). Every unknown name is reported under `eventos[<index>]`; an empty list under
    /// `eventos`.
    pub fn parse(raw: Option<&[String]>) -> Result<EventSelection, ValidationErrors> {
        let Some(names) = raw else {
            return Ok(EventSelection::All);
        };
        let mut errors = ValidationErrors::default();
        if names.is_empty() {
            errors.push(
                "eventos",
                "informe ao menos um tipo de evento, ou omita eventos para receber todos",
            );
        }
        let mut chosen = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            match EventType::parse(name).filter(|t| t.is_subscribable()) {
                Some(event_type) => chosen.push(event_type),
                None => errors.push(format!("eventos[{i}]"), "tipo de evento desconhecido"),
            }
        }
        let ordered = EventType::SUBSCRIBABLE
            .into_iter()
            .filter(|t| chosen.contains(t))
            .collect();
        errors.into_result(EventSelection::Only(ordered))
    }

    /// Whether a URL with this selection receives events of type `tipo`.
    pub fn includes(&self, event_type: EventType) -> bool {
        match self {
            EventSelection::All => true,
            EventSelection::Only(types) => types.contains(&event_type),
        }
    }

    /// The listed types; `None` for [`EventSelection::All`].
    pub fn types(&self) -> Option<&[EventType]> {
        match self {
            EventSelection::All => None,
            EventSelection::Only(types) => Some(types),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(raw: &[&str]) -> Vec<String> {
        raw.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn absent_is_all_and_all_includes_every_type() {
        let all = EventSelection::parse(None).unwrap();
        assert_eq!(all, EventSelection::All);
        assert!(EventType::ALL.iter().all(|t| all.includes(*t)));
        assert_eq!(all.types(), None);
    }

    #[test]
    fn a_list_keeps_its_types_once_in_the_domains_order() {
        let chosen = EventSelection::parse(Some(&names(&[
            "solicitacao.revogada",
            "solicitacao.criada",
            "solicitacao.revogada",
        ])))
        .unwrap();
        assert_eq!(
            chosen.types(),
            Some(&[EventType::RequestCreated, EventType::RequestRevoked][..])
        );
        assert!(chosen.includes(EventType::RequestRevoked));
        assert!(!chosen.includes(EventType::RequestActivated));
        assert!(!chosen.includes(EventType::UseCasesSynced));
    }

    #[test]
    fn unknown_names_are_reported_by_index_and_an_empty_list_by_name() {
        let errors = EventSelection::parse(Some(&names(&[
            "solicitacao.criada",
            "solicitacao.apagada",
            "webhook.teste",
            "SOLICITACAO.CRIADA",
        ])))
        .unwrap_err();
        let fields: Vec<&str> = errors.fields().iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["eventos[1]", "eventos[2]", "eventos[3]"]);

        let errors = EventSelection::parse(Some(&[])).unwrap_err();
        assert_eq!(errors.fields()[0].field, "eventos");
    }
}
