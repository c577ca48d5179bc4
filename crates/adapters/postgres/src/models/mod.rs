//! One file per table: a read struct (`Queryable` + `Selectable`) and an insert form
//! (`Insertable`; a consent request is written by the statement of `begin_creation` instead,
//! consent_request_repository/creation.rs), converted to and from the domain types here, at the adapter boundary (the
//! domain has no diesel derives).

pub mod acesso_dados_pessoais;
pub mod api_key;
pub mod caso_de_uso;
pub mod chave_idempotencia;
pub mod empresa;
pub mod solicitacao_consentimento;
pub mod solicitacao_historico;
pub mod webhook_entrega;
pub mod webhook_evento;
pub mod webhook_url;

pub use acesso_dados_pessoais::AcessoDadosPessoaisRow;
pub use api_key::{ApiKeyRow, NewApiKey};
pub use caso_de_uso::{CasoDeUsoRow, CasoDeUsoVersaoRow, NewCasoDeUso};
pub use chave_idempotencia::{ChaveIdempotenciaRow, NewChaveIdempotencia};
pub use empresa::{EmpresaRow, NewEmpresa};
pub use solicitacao_consentimento::{
    SolicitacaoConsentimentoRow, UnfinishedCreationRow, CRIACAO_CANCELADA, CRIACAO_CONFIRMADA,
    CRIACAO_EM_ANDAMENTO,
};
pub use solicitacao_historico::{NewSolicitacaoHistorico, SolicitacaoHistoricoRow};
pub use webhook_entrega::{
    DueDeliveryRow, NewWebhookTentativa, WebhookEntregaRow, WebhookTentativaRow,
};
pub use webhook_evento::WebhookEventoRow;
pub use webhook_url::{NewWebhookUrl, WebhookUrlRow};
