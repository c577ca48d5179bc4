//! What a person reads instead of what the API carries (docs/console.md, "Formats and labels"):
//! dates in Brasília time as `dd/mm/aaaa HH:mm` with the UTC instant in a tooltip, Portuguese
//! labels instead of codes, statuses as badges that say their status in words (the colour only
//! repeats it). The API keeps its codes; only the pages change.

use chrono::{DateTime, Utc};
use chrono_tz::America::Sao_Paulo;

use super::html::esc;

/// `at` as a `<time>`: `06/12/2026 22:59` (Brasília), the instant in `datetime` and, for the
/// reader who needs it, in UTC in `title`.
pub fn when(at: DateTime<Utc>) -> String {
    format!(
        "<time datetime=\"{}\" title=\"{} UTC\">{}</time>",
        at.format("%Y-%m-%dT%H:%M:%SZ"),
        at.format("%Y-%m-%d %H:%M:%S"),
        at.with_timezone(&Sao_Paulo).format("%d/%m/%Y %H:%M")
    )
}

/// A request's status (`ativo`, ...) as its label.
pub fn status_label(code: &str) -> Option<&'static str> {
    Some(match code {
        "pendente" => "Pendente",
        "ativo" => "Ativo",
        "recusado" => "Recusado",
        "expirado" => "Expirado",
        "revogado" => "Revogado",
        _ => return None,
    })
}

/// A delivery's status (`entregue`, ...) as its label.
pub fn delivery_label(code: &str) -> Option<&'static str> {
    Some(match code {
        "pendente" => "Pendente",
        "entregue" => "Entregue",
        "falhou" => "Falhou",
        "cancelada" => "Cancelada",
        _ => return None,
    })
}

/// A badge: the label in words (an unknown code shown as it is), its class for the colour.
pub fn badge(code: &str, label: Option<&'static str>) -> String {
    let class: String = code.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    format!(
        "<span class=\"selo selo-{class}\">{}</span>",
        esc(label.unwrap_or(code))
    )
}

/// A request's status as a badge.
pub fn status_badge(code: &str) -> String {
    badge(code, status_label(code))
}

/// A delivery's status as a badge.
pub fn delivery_badge(code: &str) -> String {
    badge(code, delivery_label(code))
}

/// Who caused a status change (`pgcc`, `empresa`, `expiracao`).
pub fn cause_label(code: &str) -> String {
    match code {
        "pgcc" => "O titular, na PGCC".to_owned(),
        "empresa" => "A empresa".to_owned(),
        "expiracao" => "O sistema (prazo expirado)".to_owned(),
        other => esc(other),
    }
}

/// An API key's scope as its label.
pub fn scope_label(code: &str) -> String {
    match code {
        "integracao" => "Integração".to_owned(),
        "consulta" => "Consulta".to_owned(),
        "webhooks" => "Webhooks".to_owned(),
        "auditor" => "Auditoria (DPO)".to_owned(),
        other => esc(other),
    }
}

/// The PGCC's health code as its label.
pub fn health_label(code: &str) -> &'static str {
    match code {
        "OK" => "Disponível",
        "PARTIAL_FAILURE" => "Falha parcial",
        "UNAVAILABLE" => "Indisponível",
        _ => "Desconhecida",
    }
}

/// A PGCC operation (`criacao`, ...) as its label.
pub fn operation_label(code: &str) -> String {
    match code {
        "criacao" => "Criação de solicitações".to_owned(),
        "status" => "Consulta de status".to_owned(),
        "revogacao" => "Revogação".to_owned(),
        "casos-de-uso" => "Casos de uso".to_owned(),
        other => esc(other),
    }
}

/// A webhook event type as its label.
pub fn event_label(code: &str) -> String {
    match code {
        "solicitacao.criada" => "Solicitação criada".to_owned(),
        "solicitacao.ativada" => "Solicitação ativada".to_owned(),
        "solicitacao.recusada" => "Solicitação recusada".to_owned(),
        "solicitacao.expirada" => "Solicitação expirada".to_owned(),
        "solicitacao.revogada" => "Solicitação revogada".to_owned(),
        "casos-de-uso.sincronizados" => "Casos de uso sincronizados".to_owned(),
        "casos-de-uso.alterado" => "Caso de uso alterado".to_owned(),
        "pgcc.indisponivel" => "PGCC indisponível".to_owned(),
        "pgcc.restabelecido" => "PGCC restabelecida".to_owned(),
        "webhook-url.desativada" => "Webhook URL desativada".to_owned(),
        "auditoria.incidente" => "Incidente de integridade".to_owned(),
        "auditoria.checkpoint" => "Checkpoint da auditoria".to_owned(),
        "importacao.concluida" => "Importação concluída".to_owned(),
        "webhook.teste" => "Evento de teste".to_owned(),
        other => esc(other),
    }
}

/// Why a webhook URL was disabled (`falhas_sem_sucesso`, ...).
pub fn disabled_reason_label(code: &str) -> String {
    match code {
        "falhas_sem_sucesso" => "todas as entregas falharam, sem nenhum sucesso".to_owned(),
        other => esc(other),
    }
}

/// The access modality (`direto`, `indireto`) as its label.
pub fn access_mode_label(code: &str) -> String {
    match code.to_lowercase().as_str() {
        "direto" => "Direta".to_owned(),
        "indireto" => "Indireta".to_owned(),
        _ => esc(code),
    }
}

/// The route an access-log line records, as what was read: the page or the API's operation
/// by name, never its path (the path stays in the API's own answers and in the export).
pub fn route_label(route: &str) -> String {
    match route {
        "/api/solicitacao-consentimento" => "API: lista de solicitações".to_owned(),
        "/api/solicitacao-consentimento/{id}" => "API: uma solicitação".to_owned(),
        "/api/solicitacao-consentimento/{id}/recibo" => "API: recibo".to_owned(),
        "/api/solicitacao-consentimento/{id}/provas" => "API: provas de inclusão".to_owned(),
        "/api/titulares/consentimentos" => "API: solicitações de um titular".to_owned(),
        "/console/solicitacoes/{id}" => "Console: página da solicitação".to_owned(),
        "/console/solicitacoes/{id}/recibo" => "Console: recibo baixado".to_owned(),
        "/console/solicitacoes/{id}/verificacao" => "Console: verificação do recibo".to_owned(),
        "/console/titulares" => "Console: busca por titular".to_owned(),
        "/console/acessos" => "Console: registro de acessos".to_owned(),
        "/console/exportar" => "Console: exportação".to_owned(),
        other if other.starts_with("/api/") => "API: outra leitura".to_owned(),
        other if other.starts_with("/console") => "Console: outra página".to_owned(),
        other => esc(other),
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn dates_are_brasilia_time_with_the_utc_instant_in_the_tooltip() {
        let at = Utc.with_ymd_and_hms(2026, 12, 7, 1, 59, 21).unwrap();
        assert_eq!(
            when(at),
            "<time datetime=\"2026-12-07T01:59:21Z\" title=\"2026-12-07 01:59:21 UTC\">\
             06/12/2026 22:59</time>"
        );
    }

    #[test]
    fn codes_become_labels_and_badges_say_their_status() {
        assert_eq!(scope_label("integracao"), "Integração");
        assert_eq!(health_label("UNAVAILABLE"), "Indisponível");
        assert_eq!(
            status_badge("revogado"),
            "<span class=\"selo selo-revogado\">Revogado</span>"
        );
        assert_eq!(
            status_badge("<x>"),
            "<span class=\"selo selo-x\">&lt;x&gt;</span>"
        );
        for status in ["pendente", "ativo", "recusado", "expirado", "revogado"] {
            assert!(status_label(status).is_some(), "{status}");
        }
        for event in domain::EventType::ALL {
            assert_ne!(event_label(event.as_str()), event.as_str());
        }
    }
}
