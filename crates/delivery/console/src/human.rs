//! What a person reads instead of what the API carries (docs/console.md, "Formats and labels"):
//! dates in Brasília time as `dd/mm/aaaa HH:mm` with the UTC instant in a tooltip, Portuguese
//! labels instead of codes, statuses as badges that say their status in words (the colour only
//! repeats it). The API keeps its codes; only the pages change.

use chrono::{DateTime, Utc};
use chrono_tz::America::Sao_Paulo;
use maud::{html, Markup};

/// `at` as a `<time>`: `06/12/2026 22:59` (Brasília), the instant in `datetime` and, for the
/// reader who needs it, in UTC in `title`.
pub fn when(at: DateTime<Utc>) -> Markup {
    html! {
        time datetime=(at.format("%Y-%m-%dT%H:%M:%SZ"))
            title={ (at.format("%Y-%m-%d %H:%M:%S")) " UTC" } {
            (at.with_timezone(&Sao_Paulo).format("%d/%m/%Y %H:%M"))
        }
    }
}

/// `at` as [`when`] does; `None` as a dash.
pub fn when_or_dash(at: Option<DateTime<Utc>>) -> Markup {
    match at {
        Some(at) => when(at),
        None => html! { "—" },
    }
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
pub fn badge(code: &str, label: Option<&'static str>) -> Markup {
    let class: String = code.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    html! {
        span class={ "selo selo-" (class) } { (label.unwrap_or(code)) }
    }
}

/// A request's status as a badge.
pub fn status_badge(code: &str) -> Markup {
    badge(code, status_label(code))
}

/// A delivery's status as a badge.
pub fn delivery_badge(code: &str) -> Markup {
    badge(code, delivery_label(code))
}

/// Who caused a status change (`pgcc`, `empresa`, `expiracao`).
pub fn cause_label(code: &str) -> &str {
    match code {
        "pgcc" => "O titular, na PGCC",
        "empresa" => "A empresa",
        "expiracao" => "O sistema (prazo expirado)",
        other => other,
    }
}

/// An API key's scope as its label.
pub fn scope_label(code: &str) -> &str {
    match code {
        "integracao" => "Integração",
        "consulta" => "Consulta",
        "webhooks" => "Webhooks",
        "auditor" => "Auditoria (DPO)",
        other => other,
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
pub fn operation_label(code: &str) -> &str {
    match code {
        "criacao" => "Criação de solicitações",
        "status" => "Consulta de status",
        "revogacao" => "Revogação",
        "casos-de-uso" => "Casos de uso",
        other => other,
    }
}

/// A webhook event type as its label.
pub fn event_label(code: &str) -> &str {
    match code {
        "solicitacao.criada" => "Solicitação criada",
        "solicitacao.ativada" => "Solicitação ativada",
        "solicitacao.recusada" => "Solicitação recusada",
        "solicitacao.expirada" => "Solicitação expirada",
        "solicitacao.revogada" => "Solicitação revogada",
        "casos-de-uso.sincronizados" => "Casos de uso sincronizados",
        "casos-de-uso.alterado" => "Caso de uso alterado",
        "pgcc.indisponivel" => "PGCC indisponível",
        "pgcc.restabelecido" => "PGCC restabelecida",
        "webhook-url.desativada" => "Webhook URL desativada",
        "auditoria.incidente" => "Incidente de integridade",
        "auditoria.checkpoint" => "Checkpoint da auditoria",
        "importacao.concluida" => "Importação concluída",
        "webhook.teste" => "Evento de teste",
        other => other,
    }
}

/// Why a webhook URL was disabled (`falhas_sem_sucesso`, ...).
pub fn disabled_reason_label(code: &str) -> &str {
    match code {
        "falhas_sem_sucesso" => "todas as entregas falharam, sem nenhum sucesso",
        other => other,
    }
}

/// The access modality (`direto`, `indireto`) as its label.
pub fn access_mode_label(code: &str) -> &str {
    match code.to_lowercase().as_str() {
        "direto" => "Direta",
        "indireto" => "Indireta",
        _ => code,
    }
}

/// The route an access-log line records, as what was read: the page or the API's operation
/// by name, never its path (the path stays in the API's own answers and in the export).
pub fn route_label(route: &str) -> &str {
    match route {
        "/api/solicitacao-consentimento" => "API: lista de solicitações",
        "/api/solicitacao-consentimento/{id}" => "API: uma solicitação",
        "/api/solicitacao-consentimento/{id}/recibo" => "API: recibo",
        "/api/solicitacao-consentimento/{id}/provas" => "API: provas de inclusão",
        "/api/titulares/consentimentos" => "API: solicitações de um titular",
        "/console/solicitacoes/{id}" => "Console: página da solicitação",
        "/console/solicitacoes/{id}/recibo" => "Console: recibo baixado",
        "/console/solicitacoes/{id}/verificacao" => "Console: verificação do recibo",
        "/console/titulares" => "Console: busca por titular",
        "/console/titulares/{token}" => "Console: página do titular",
        "/console/titulares/{token}/pacote" => "Console: pacote de evidências baixado",
        "/console/acessos" => "Console: registro de acessos",
        "/console/exportar" => "Console: exportação",
        other if other.starts_with("/api/") => "API: outra leitura",
        other if other.starts_with("/console") => "Console: outra página",
        other => other,
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
            when(at).into_string(),
            "<time datetime=\"2026-12-07T01:59:21Z\" title=\"2026-12-07 01:59:21 UTC\">\
             06/12/2026 22:59</time>"
        );
    }

    #[test]
    fn codes_become_labels_and_badges_say_their_status() {
        assert_eq!(scope_label("integracao"), "Integração");
        assert_eq!(health_label("UNAVAILABLE"), "Indisponível");
        assert_eq!(
            status_badge("revogado").into_string(),
            "<span class=\"selo selo-revogado\">Revogado</span>"
        );
        assert_eq!(
            status_badge("<x>").into_string(),
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
