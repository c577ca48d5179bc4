//! Request and response examples of every `/api` operation, added to the generated document in
//! one place (shown by `/docs` and by any OpenAPI tool). Bodies are what the API answers, with
//! made-up ids; errors carry the service's own messages. An operation's existing example is
//! never replaced.

use domain::{ConsentStatus, Cpf, EventType, TransitionCause};
use serde_json::{json, Value};
use utoipa::openapi::example::ExampleBuilder;
use utoipa::openapi::{Content, OpenApi, RefOr};

const ID: &str = "0b6f7a9e-3c1d-4e2f-8a5b-6c7d8e9f0a1b";
const PGCC_ID: &str = "pgcc-sol-000123";
const HASH: &str = "9f2c1e7a4b8d3f6e0a5c2b7d9e1f4a6c8b3d5e7f9a1c2e4b6d8f0a3c5e7b9d1f";
const WEBHOOK_ID: &str = "7d0f7a56-6a36-4c43-9d0e-3b8c8f1b9a11";

fn ok(data: Value) -> Value {
    json!({"sucesso": true, "isPgccErro": false, "pgccCodigoErro": "OK", "mensagem": null, "data": data})
}

fn err(mensagem: &str, data: Value) -> Value {
    json!({"sucesso": false, "isPgccErro": false, "pgccCodigoErro": "OK", "mensagem": mensagem, "data": data})
}

fn pgcc_err(codigo: &str, mensagem: &str) -> Value {
    json!({"sucesso": false, "isPgccErro": true, "pgccCodigoErro": codigo, "mensagem": mensagem, "data": {}})
}

fn campos(list: &[(&str, &str)]) -> Value {
    let errors: Vec<Value> = list
        .iter()
        .map(|(campo, mensagem)| json!({"campo": campo, "mensagem": mensagem}))
        .collect();
    err(
        "Um ou mais campos são inválidos; veja data.erros.",
        json!({ "erros": errors }),
    )
}

/// The example subject's CPF as reads show it: masked by the domain's own rule.
fn cpf_inteiro() -> String {
    Cpf::parse("529.982.247-25")
        .expect("a valid example CPF")
        .as_str()
        .to_owned()
}

fn cpf_mascarado() -> String {
    Cpf::parse("529.982.247-25")
        .expect("a valid example CPF")
        .masked()
}

/// A request created `ativo` through this API, revoked by the company when `status` says so.
/// Statuses and causes are the domain's wire names, so the example cannot name one the API
/// never emits.
fn solicitacao(status: ConsentStatus) -> Value {
    let company = TransitionCause::Company.as_str();
    let mut history = vec![json!({"de": null, "para": ConsentStatus::Active.as_str(),
        "em": "2026-01-10T12:00:05Z", "causa": company, "motivo": null})];
    if status == ConsentStatus::Revoked {
        history.push(
            json!({"de": ConsentStatus::Active.as_str(), "para": status.as_str(),
            "em": "2026-02-01T09:30:00Z", "causa": company,
            "motivo": "Cliente encerrou a conta."}),
        );
    }
    json!({
        "id": ID, "pgccId": PGCC_ID, "status": status.as_str(),
        "casoDeUsoIdTemplate": "tpl-abertura-conta", "cpfTitular": cpf_mascarado(),
        "tipoTitular": "PessoaFisica", "modalidadeAcesso": "Direto", "cnpjAnuente": null,
        "dataExpiracaoConsentimento": "2030-12-31T23:59:59Z",
        "dataTitularRespondeuConsentimento": "2026-01-10T12:00:00Z",
        "provaColeta": "assinatura-digital:abc123", "hash": HASH,
        "criadoEm": "2026-01-10T12:00:05Z", "atualizadoEm": "2026-01-10T12:00:05Z",
        "versaoCasoDeUso": 1,
        "historico": history
    })
}

fn consulta_valida() -> Value {
    json!({"valido": true, "id": ID, "status": ConsentStatus::Active.as_str(),
        "dataExpiracaoConsentimento": "2030-12-31T23:59:59Z", "hash": HASH,
        "casoDeUsoIdTemplate": "tpl-abertura-conta"})
}

fn webhook(with_secret: bool) -> Value {
    let mut w = json!({"id": WEBHOOK_ID, "url": "https://exemplo.com.br/webhooks/consentimento",
        "criadoEm": "2026-01-10T12:00:00Z", "desativadaEm": null, "falhandoDesde": null,
        "motivoDesativacao": null, "eventos": null});
    if with_secret {
        w["segredo"] = json!("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    }
    w
}

/// Request body examples: (path, [(name, summary, body)]).
fn request_examples(path: &str) -> Vec<(&'static str, &'static str, Value)> {
    match path {
        "/api/casos-de-uso/{id}/anotacoes" => vec![(
            "consentimento",
            "Consent (LGPD art. 7, I), name and e-mail, a notice in Portuguese",
            json!({"baseLegal": {"artigo": 7, "hipotese": "consentimento"},
                   "categoriasDados": ["pd:Name", "pd:EmailAddress"],
                   "urlAviso": "https://exemplo.com.br/privacidade", "idiomaAviso": "pt-BR"}),
        )],
        "/api/solicitacao-consentimento/criar/ativo" => vec![
            (
                "direto",
                "Consent already given, direct access",
                json!({
                "casoDeUsoIdTemplate": "tpl-abertura-conta", "cpfTitular": "529.982.247-25",
                "modalidadeAcesso": "Direto", "tipoTitular": "PessoaFisica",
                "dataExpiracaoConsentimento": "2030-12-31T23:59:59Z",
                "dataTitularRespondeuConsentimento": "2026-01-10T12:00:00Z",
                "provaColeta": "assinatura-digital:abc123"}),
            ),
            (
                "indireto",
                "Consent already given, access through a consenting company",
                json!({
                "casoDeUsoIdTemplate": "tpl-abertura-conta", "cpfTitular": "529.982.247-25",
                "modalidadeAcesso": "Indireto", "cnpjAnuente": "12.ABC.345/01DE-35",
                "tipoTitular": "PessoaFisica",
                "dataExpiracaoConsentimento": "2030-12-31T23:59:59Z",
                "dataTitularRespondeuConsentimento": "2026-01-10T12:00:00Z",
                "provaColeta": "assinatura-digital:abc123"}),
            ),
        ],
        "/api/solicitacao-consentimento/criar/pendente" => vec![
            (
                "direto",
                "Waiting for the subject's answer, direct access",
                json!({
                "casoDeUsoIdTemplate": "tpl-abertura-conta", "cpfTitular": "529.982.247-25",
                "modalidadeAcesso": "Direto", "tipoTitular": "PessoaFisica",
                "dataExpiracaoConsentimento": "2030-12-31T23:59:59Z"}),
            ),
            (
                "indireto",
                "Waiting for the subject's answer, through a consenting company",
                json!({
                "casoDeUsoIdTemplate": "tpl-abertura-conta", "cpfTitular": "529.982.247-25",
                "modalidadeAcesso": "Indireto", "cnpjAnuente": "12.ABC.345/01DE-35",
                "tipoTitular": "PessoaFisica",
                "dataExpiracaoConsentimento": "2030-12-31T23:59:59Z"}),
            ),
        ],
        "/api/hash-consulta" => vec![(
            "consulta",
            "Is there a valid consent now?",
            json!({
            "cpfTitular": "529.982.247-25", "casoDeUsoIdTemplate": "tpl-abertura-conta"}),
        )],
        "/api/titulares/consentimentos" => vec![(
            "titular",
            "Everything of one subject",
            json!({"cpfTitular": "529.982.247-25"}),
        )],
        "/api/hash-consulta/lote" => vec![(
            "lote",
            "Two subjects at once",
            json!({"itens": [
                {"cpfTitular": "529.982.247-25", "casoDeUsoIdTemplate": "tpl-abertura-conta"},
                {"cpfTitular": "111.444.777-35", "casoDeUsoIdTemplate": "tpl-abertura-conta"}
            ]}),
        )],
        "/api/webhook-urls" => vec![
            (
                "registrar",
                "Register a URL (every event type)",
                json!({
                "url": "https://exemplo.com.br/webhooks/consentimento"}),
            ),
            (
                "alguns_eventos",
                "Register a URL for some event types only",
                json!({
                "url": "https://exemplo.com.br/webhooks/revogacoes",
                "eventos": [EventType::RequestRevoked.as_str(), EventType::RequestExpired.as_str()]}),
            ),
        ],
        "/api/solicitacao-consentimento/{id}/revogar" => vec![(
            "com_motivo",
            "Revoke (or withdraw a pending request) giving a reason",
            json!({"motivo": "Solicitação criada por engano."}),
        )],
        "/api/webhook-urls/{webhookUrlId}" => vec![
            (
                "alguns",
                "Only these types from now on",
                json!({"eventos": [EventType::RequestRevoked.as_str()]}),
            ),
            (
                "todos",
                "Every type again, future ones included",
                json!({"eventos": null}),
            ),
        ],
        _ => vec![],
    }
}

/// Success examples: (name, summary, `data`).
fn success_examples(path: &str, method: &str) -> Vec<(&'static str, &'static str, Value)> {
    match (path, method) {
        ("/api/casos-de-uso/{id}/anotacoes", _) => vec![(
            "anotacoes",
            "The use case's annotations, as the records state them",
            json!({"casoDeUsoId": "3f9a1c2e-5b7d-4e8f-9a0b-1c2d3e4f5a6b",
                   "baseLegal": {"artigo": 7, "hipotese": "consentimento",
                                 "citacao": "LGPD (Lei 13.709/2018), art. 7, I",
                                 "dpv": "dpv:ExpressedConsent"},
                   "categoriasDados": ["pd:Name", "pd:EmailAddress"],
                   "urlAviso": "https://exemplo.com.br/privacidade", "idiomaAviso": "pt-BR",
                   "atualizadoEm": "2026-01-10T12:00:00Z"}),
        )],
        ("/api/casos-de-uso", _) => vec![(
            "lista",
            "The company's use cases",
            json!([{
            "id": "3f9a1c2e-5b7d-4e8f-9a0b-1c2d3e4f5a6b",
            "vinculoId": "6f1c2a4e-8b3d-4c5a-9e7f-1a2b3c4d5e02",
            "titulo": "Abertura de conta", "pgccProviderTemplateId": "tpl-abertura-conta",
            "dataInclusao": "2026-01-10T12:00:00Z",
            "dataUltimaSincronizacaoPgcc": "2026-01-10T12:00:00Z"}]),
        )],
        ("/api/casos-de-uso/{id}/versoes", _) => vec![(
            "versoes",
            "Two versions: the title changed on the PGCC",
            json!([
                {"versao": 1, "titulo": "Abertura de conta",
                 "vinculoId": "6f1c2a4e-8b3d-4c5a-9e7f-1a2b3c4d5e02", "outrosCampos": {},
                 "impressao": null, "inicio": "2026-01-10T12:00:00Z",
                 "fim": "2026-03-01T08:00:00Z"},
                {"versao": 2, "titulo": "Abertura de conta digital",
                 "vinculoId": "6f1c2a4e-8b3d-4c5a-9e7f-1a2b3c4d5e02", "outrosCampos": {},
                 "impressao": "5d41402abc4b2a76b9719d911017c5925d41402abc4b2a76b9719d911017c592",
                 "inicio": "2026-03-01T08:00:00Z", "fim": null}
            ]),
        )],
        ("/api/status", _) => vec![
            (
                "ok",
                "The PGCC answers",
                json!({"code": "OK",
                    "explanation": "A PGCC respondeu às chamadas do último intervalo observado.",
                    "detectionTime": "2026-03-01T08:00:00Z", "updateTime": "2026-03-01T09:12:41Z",
                    "unavailableEndpoints": []}),
            ),
            (
                "falha_parcial",
                "The PGCC does not answer creations; other operations answer",
                json!({"code": "PARTIAL_FAILURE",
                    "explanation": "A PGCC não respondeu a nenhuma chamada destas operações: criacao; as demais respondem.",
                    "detectionTime": "2026-03-01T09:10:02Z", "updateTime": "2026-03-01T09:12:41Z",
                    "unavailableEndpoints": ["criacao"]}),
            ),
        ],
        ("/api/solicitacao-consentimento/{id}/arquivos", "get") => vec![(
            "arquivos",
            "The request's files",
            json!({"itens": [arquivo_evidencia()]}),
        )],
        ("/api/solicitacao-consentimento/{id}/arquivos", _)
        | ("/api/solicitacao-consentimento/{id}/arquivos/{sha256}", _)
        | ("/api/arquivos/{sha256}", _) => vec![(
            "arquivo",
            "The file as stored: its SHA-256, size and media type",
            arquivo_evidencia(),
        )],
        ("/api/importacoes", _) => vec![(
            "registrando",
            "Read and validated; its valid lines being registered",
            importacao("registrando", None),
        )],
        ("/api/importacoes/{id}", _) => vec![
            (
                "registrando",
                "Registering",
                importacao("registrando", None),
            ),
            (
                "concluida",
                "Every valid line registered or failed",
                importacao("concluida", Some("2026-03-01T09:20:00Z")),
            ),
        ],
        ("/api/importacoes/{id}/cancelar", _) => vec![(
            "cancelada",
            "No further line is registered",
            importacao("cancelada", Some("2026-03-01T09:05:00Z")),
        )],
        ("/api/casos-de-uso/sincronizar", _) => vec![(
            "sincronizado",
            "Counts of what changed",
            json!({"inseridos": 3, "atualizados": 0, "removidos": 0, "total": 3}),
        )],
        ("/api/solicitacao-consentimento/criar/ativo", _)
        | ("/api/solicitacao-consentimento/criar/pendente", _) => vec![(
            "criada",
            "Our id and the PGCC's",
            json!({"id": ID, "pgccId": PGCC_ID}),
        )],
        ("/api/solicitacao-consentimento", _) => vec![(
            "pagina",
            "A page of requests",
            json!({"itens": [solicitacao(ConsentStatus::Active)], "proximoCursor": null}),
        )],
        ("/api/solicitacao-consentimento/{id}", _) => vec![(
            "solicitacao",
            "One request with its history",
            solicitacao(ConsentStatus::Active),
        )],
        ("/api/solicitacao-consentimento/{id}/revogar", _) => {
            vec![("revogada", "Revoked", solicitacao(ConsentStatus::Revoked))]
        }
        ("/api/hash-consulta", _) => vec![
            ("valido", "A valid consent", consulta_valida()),
            ("invalido", "No valid consent", json!({"valido": false})),
        ],
        ("/api/titulares/consentimentos", _) => {
            vec![("titular", "The subject's requests, CPF in full", {
                let mut item = solicitacao(ConsentStatus::Active);
                item["cpfTitular"] = json!(cpf_inteiro());
                json!({"itens": [item], "proximoCursor": null})
            })]
        }
        ("/api/hash-consulta/lote", _) => vec![(
            "lote",
            "One result per item, in the order sent",
            json!({"itens": [consulta_valida(), {"valido": false}]}),
        )],
        // a hash of no consent of the company is 404, never `valido: false`
        ("/api/hash-consulta/{hash}", _) => {
            vec![("valido", "The consent with that hash", consulta_valida())]
        }
        ("/api/webhook-urls", "post") => vec![(
            "registrada",
            "Registered; the secret is shown only now",
            webhook(true),
        )],
        ("/api/webhook-urls", _) => vec![("lista", "Active URLs", json!([webhook(false)]))],
        ("/api/webhook-urls/{webhookUrlId}/rotacionar-segredo", _) => vec![(
            "rotacionado",
            "The new secret",
            json!({"id": WEBHOOK_ID, "segredo": "whsec_N3wS3cr3tN3wS3cr3tN3wS3cr3tN3wS"}),
        )],
        ("/api/webhook-urls/{webhookUrlId}/reativar", _) => vec![(
            "reativada",
            "Active again (same id and secret)",
            webhook(false),
        )],
        ("/api/webhook-urls/{webhookUrlId}/entregas", _) => vec![(
            "entregas",
            "Newest first",
            json!([{"id": "c4d5e6f7-a8b9-4c0d-8e1f-2a3b4c5d6e7f",
                "eventoId": "d5e6f7a8-b9c0-4d1e-8f2a-3b4c5d6e7f80",
                "tipo": "solicitacao.criada", "status": "entregue",
                "criadoEm": "2026-01-10T12:00:05Z", "proximaTentativaEm": null,
                "tentativas": [{"em": "2026-01-10T12:00:05Z", "statusHttp": 200,
                    "latenciaMs": 84, "erro": null}]}]),
        )],
        ("/api/webhook-urls/{webhookUrlId}", "patch") => {
            let mut w = webhook(false);
            w["eventos"] = json!([EventType::RequestRevoked.as_str()]);
            vec![("alterada", "The URL with its new event types", w)]
        }
        ("/api/webhook-urls/{webhookUrlId}/testar", _) => vec![
            (
                "entregue",
                "The receiver answered 2xx",
                json!({"entregaId": "c4d5e6f7-a8b9-4c0d-8e1f-2a3b4c5d6e7f",
                    "eventoId": "d5e6f7a8-b9c0-4d1e-8f2a-3b4c5d6e7f80",
                    "statusHttp": 200, "latenciaMs": 41, "erro": null}),
            ),
            (
                "falhou",
                "The receiver did not answer in time",
                json!({"entregaId": "c4d5e6f7-a8b9-4c0d-8e1f-2a3b4c5d6e7f",
                    "eventoId": "d5e6f7a8-b9c0-4d1e-8f2a-3b4c5d6e7f80",
                    "statusHttp": null, "latenciaMs": 10000, "erro": "tempo esgotado"}),
            ),
        ],
        ("/api/eventos", _) => vec![(
            "pagina",
            "A page of events, in commit order",
            json!({"itens": [{"id": "d5e6f7a8-b9c0-4d1e-8f2a-3b4c5d6e7f80",
                "type": EventType::RequestRevoked.as_str(),
                "timestamp": "2026-02-01T09:30:00Z",
                "data": {"id": ID, "pgccId": PGCC_ID, "status": ConsentStatus::Revoked.as_str(),
                    "casoDeUsoIdTemplate": "tpl-abertura-conta", "cpfTitular": cpf_mascarado(),
                    "tipoTitular": "PessoaFisica", "modalidadeAcesso": "Direto",
                    "cnpjAnuente": null, "dataExpiracaoConsentimento": "2030-12-31T23:59:59Z",
                    "dataTitularRespondeuConsentimento": "2026-01-10T12:00:00Z", "hash": HASH,
                    "criadoEm": "2026-01-10T12:00:05Z", "atualizadoEm": "2026-02-01T09:30:00Z",
                    "motivo": "Cliente encerrou a conta."}}],
                "proximoCursor": "e1.74021.118.d5e6f7a8b9c04d1e8f2a3b4c5d6e7f80"}),
        )],
        ("/api/auditoria/acessos", _) => vec![(
            "pagina",
            "A page of the record of reads, oldest first",
            json!({"itens": [{"id": "e6f7a8b9-c0d1-4e2f-8a3b-4c5d6e7f8091",
                "apiKeyId": "f7a8b9c0-d1e2-4f3a-8b4c-5d6e7f809102",
                "rota": "/api/titulares/consentimentos",
                "solicitacaoIds": [ID], "hashes": [HASH],
                "em": "2026-02-01T09:30:00.123456Z", "pessoaSub": null, "pessoaEmail": null}],
                "proximoCursor": null}),
        )],
        ("/api/webhook-urls/{webhookUrlId}", _)
        | ("/api/webhook-urls/{webhookUrlId}/entregas/{entregaId}/reenviar", _) => {
            vec![("feito", "Done", json!({}))]
        }
        ("/api/solicitacao-consentimento/{id}/provas", _) => vec![(
            "provas",
            "The creation's entry, proven against the latest checkpoint",
            json!({"checkpoint": CHECKPOINT, "entradas": [{"indice": 2,
                "entrada": "eyJjYXNvRGVVc29JZFRlbXBsYXRlIjoidHBsLWFiZXJ0dXJhLWNvbnRhIn0=",
                "provaInclusao": ["q2Vz1nqf2HCY9Rsh6jHM5K5CMhU9ZPhxKVhgGw3cU9Y=",
                    "3nQmF4kC8y0H4v1Jb9eD6lq0mV2wZ7tQ1aK5pS8xR0E="]}]}),
        )],
        ("/api/solicitacao-consentimento/{id}/recibo", _) => vec![(
            "recibo",
            "A compact JWS (EdDSA)",
            json!({"recibo": "eyJhbGciOiJFZERTQSIsImtpZCI6IjBjMGVmN2Y3IiwidHlwIjoiSldUIn0.eyJpZCI6IjBiNmY3YTllIn0.c2lnbmF0dXJl"}),
        )],
        ("/api/auditoria/consistencia", _) => vec![(
            "prova",
            "The tree of 5 entries extends the tree of 3",
            json!({"de": 3, "para": 5, "prova": ["YmFzZTY0LWhhc2gtb25lLTMyLWJ5dGVzLWxvbmchIQ==",
                "YmFzZTY0LWhhc2gtdHdvLTMyLWJ5dGVzLWxvbmchIQ=="]}),
        )],
        _ => vec![],
    }
}

/// An example checkpoint: a C2SP signed note, as `GET /api/auditoria/checkpoint` answers it.
const CHECKPOINT: &str = "consent-api/empresas/11222333000181\n3\nfZqkIVzLLysO7tgn81kFNHZ6LMA7RLACFUinvTaTPRc=\n\n\u{2014} consent-api DA7397cW0Z1n6bQ2L8gYkE1pFv3xJtR9sH5cN0mA4dU6yK2wB8eT1oV7iP3qX9zC4fG6hJ0lM5nS2rW8uY1aE3bD7kFgI=\n";

/// An evidence file (`.../arquivos`).
fn arquivo_evidencia() -> Value {
    json!({"sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
           "tamanho": 48213, "tipo": "application/pdf", "criadoEm": "2026-03-01T09:00:00Z",
           "bytesApagadosEm": null})
}

/// An import's status (`GET /api/importacoes/{id}`).
fn importacao(status: &str, ended: Option<&str>) -> Value {
    let registradas = if status == "registrando" { 400 } else { 997 };
    json!({"id": ID, "status": status, "linhas": 1000, "validas": 997,
        "registradas": registradas, "falhas": 3,
        "fimEstimado": ended.unwrap_or("2026-03-01T09:10:00Z")})
}

/// The errors of an import, as JSON Lines (`GET /api/importacoes/{id}/erros`).
const IMPORT_ERRORS: &str = "{\"linha\":2,\"campo\":\"cpfTitular\",\"mensagem\":\"os dígitos verificadores do CPF não conferem\"}\n{\"linha\":7,\"campo\":\"idExterno\",\"mensagem\":\"idExterno repetido: já usado na linha 3 deste arquivo\"}\n";

/// The 400s of the import routes: an unknown CSV column, an unknown `formato`.
fn import_bad_request(path: &str) -> Vec<(&'static str, &'static str, Value)> {
    if path == "/api/importacoes" {
        vec![("coluna", "An unknown CSV column", err(
            "Requisição inválida: coluna desconhecida no cabeçalho: \"cpf\"; use idExterno, origem, provaColetaSha256, pgccId, casoDeUsoIdTemplate, cpfTitular, modalidadeAcesso, tipoTitular, dataExpiracaoConsentimento, dataTitularRespondeuConsentimento, provaColeta, cnpjAnuente.",
            json!({})))]
    } else {
        vec![(
            "formato",
            "An unknown formato",
            err(
                "Requisição inválida: formato deve ser csv ou jsonl.",
                json!({}),
            ),
        )]
    }
}

/// A CSV file to import: header and one active line.
const IMPORT_CSV: &str = "\u{feff}idExterno;origem;casoDeUsoIdTemplate;cpfTitular;modalidadeAcesso;tipoTitular;dataExpiracaoConsentimento;dataTitularRespondeuConsentimento;provaColeta\r\ncrm-000123;crm-legado;tpl-marketing-email;529.982.247-25;Direto;PessoaFisica;2030-01-02T03:04:05Z;2019-03-01T10:00:00Z;ficha-assinada-12\r\n";

/// One line of a JSON Lines file to import: an active consent answered long ago.
fn import_line() -> Value {
    json!({"idExterno": "crm-000123", "origem": "crm-legado",
        "casoDeUsoIdTemplate": "tpl-marketing-email", "cpfTitular": "529.982.247-25",
        "modalidadeAcesso": "Direto", "tipoTitular": "PessoaFisica",
        "dataExpiracaoConsentimento": "2030-01-02T03:04:05Z",
        "dataTitularRespondeuConsentimento": "2019-03-01T10:00:00Z",
        "provaColeta": "ficha-assinada-12"})
}

/// The same errors as CSV.
const IMPORT_ERRORS_CSV: &str = "linha,campo,mensagem\r\n2,cpfTitular,os dígitos verificadores do CPF não conferem\r\n7,idExterno,idExterno repetido: já usado na linha 3 deste arquivo\r\n";

/// Error examples for a status: (name, summary, envelope).
fn error_examples(path: &str, status: &str) -> Vec<(&'static str, &'static str, Value)> {
    let pgcc_path =
        path.contains("criar") || path.ends_with("/sincronizar") || path.ends_with("/revogar");
    match status {
        "400" if path.starts_with("/api/importacoes") => import_bad_request(path),
        "400" => vec![("malformado", "Malformed request", err(
            "Requisição inválida: JSON malformado na linha 1, coluna 12.", json!({})))],
        "401" => vec![("sem_chave", "Api-Key missing, unknown or revoked",
            err("Api-Key ausente, inválida ou revogada.", json!({})))],
        "404" if path.starts_with("/api/casos-de-uso/") => vec![("nao_encontrado", "Not found for the company",
            err("Caso de uso não encontrado.", json!({})))],
        "404" if path.starts_with("/api/importacoes/") => vec![("nao_encontrado", "Not found for the company",
            err("Importação não encontrada.", json!({})))],
        "404" if path.ends_with("/{sha256}") => vec![("nao_encontrado", "Not the company's request, or it has no such file",
            err("Arquivo não encontrado.", json!({})))],
        "410" => vec![("apagado", "Retention deleted the bytes", err(
            "Os bytes deste arquivo foram apagados pela política de retenção; o registro do arquivo e sua entrada no log permanecem.",
            json!({})))],
        "404" => vec![("nao_encontrado", "Not found for the company",
            err("Solicitação de consentimento não encontrada.", json!({})))],
        "409" if path.ends_with("/revogar") => vec![("nao_revogavel", "Neither active nor pending",
            err("Só é possível revogar um consentimento ativo ou retirar uma solicitação pendente; o status desta solicitação é recusado.", json!({})))],
        "409" if path == "/api/webhook-urls" => vec![("duplicada", "The company already has this URL",
            err("A empresa já tem esta URL de webhook registrada; veja GET /api/webhook-urls.", json!({})))],
        "409" if path.ends_with("/reenviar") => vec![("desativada", "The URL is disabled",
            err("A webhook URL está desativada; reative-a (POST /api/webhook-urls/{id}/reativar) antes de reenviar.", json!({})))],
        "409" if path.ends_with("/cancelar") => vec![("concluida", "The import had already ended",
            err("A importação já terminou (concluida); não há o que cancelar.", json!({})))],
        "409" => vec![("em_andamento", "Same Idempotency-Key still running",
            err("Uma requisição com esta Idempotency-Key ainda está em processamento; tente novamente mais tarde.", json!({})))],
        "413" if path == "/api/importacoes" => vec![
            ("grande_demais", "The file is over importacao.max_bytes", err(
                "O corpo da requisição excede o limite de 2147483648 bytes.", json!({}))),
            ("linhas_demais", "The file is over importacao.max_linhas", err(
                "O arquivo excede o limite de 10000000 linhas; nada dele foi importado.", json!({}))),
        ],
        "413" if path.contains("arquivos") => vec![("grande_demais", "The file is over evidencias.max_bytes", err(
            "O corpo da requisição excede o limite de 20971520 bytes.", json!({})))],
        "415" if path.contains("arquivos") => vec![("tipo", "A media type not in the list", err(
            "Content-Type não suportado para arquivo de evidência; envie um de: application/pdf, image/png, image/jpeg, audio/mpeg, audio/ogg, audio/wav, video/mp4.",
            json!({})))],
        "415" if path == "/api/importacoes" => vec![("tipo", "Neither CSV nor JSON Lines", err(
            "Content-Type não suportado para importação; envie text/csv ou application/x-ndjson (JSON Lines).",
            json!({})))],
        "413" => vec![("grande_demais", "Body over the limit",
            err("O corpo da requisição excede o limite de 65536 bytes.", json!({})))],
        "415" => vec![("nao_json", "Content-Type is not JSON", err(
            "Content-Type não suportado; use application/json, text/json ou application/*+json.",
            json!({}))),
            ("comprimido", "Compressed body (Content-Encoding other than identity)", err(
            "Content-Encoding não suportado; envie o corpo sem compressão (identity).",
            json!({})))],
        "408" => vec![("lento_demais", "Body not received in time", err(
            "O corpo da requisição não chegou completo dentro do tempo limite.", json!({})))],
        "422" => {
            let mut list = Vec::new();
            if path.contains("criar") {
                list.push(("campos", "A field rule is broken", campos(&[
                    ("cpfTitular", "CPF inválido."),
                    ("casoDeUsoIdTemplate", "caso de uso desconhecido para a empresa."),
                ])));
                list.push(("idempotency_key", "Idempotency-Key used with another request", campos(&[
                    ("Idempotency-Key", "já usada com outra requisição."),
                ])));
            } else if path.contains("arquivos") {
                list.push(("hash", "The bytes do not have the path's SHA-256", campos(&[("sha256",
                    "Os bytes enviados não têm o SHA-256 do caminho; nada foi guardado.")])));
            } else if path == "/api/hash-consulta" {
                list.push(("campos", "A field rule is broken", campos(&[("cpfTitular", "CPF inválido.")])));
            } else if path == "/api/hash-consulta/lote" {
                list.push(("campos", "A broken item, named by its index", campos(&[("itens[1].cpfTitular", "CPF inválido.")])));
            } else if path.ends_with("/revogar") {
                list.push(("campos", "A field rule is broken", campos(&[("motivo", "o motivo deve ter no máximo 500 caracteres")])));
            } else if path == "/api/webhook-urls/{webhookUrlId}" {
                list.push(("campos", "An unknown event type, by its index", campos(&[("eventos[0]", "tipo de evento desconhecido")])));
            } else if path == "/api/eventos" {
                list.push(("campos", "A filter rule is broken", campos(&[("tipo", "tipo de evento desconhecido")])));
            } else if path == "/api/webhook-urls" {
                list.push(("campos", "A field rule is broken", campos(&[("url", "deve ser uma URL http(s) absoluta.")])));
                list.push(("limite_de_urls", "The company already has its maximum of URLs", campos(&[("url",
                    "a empresa já tem o máximo de 10 URLs de webhook (desativadas incluídas); remova uma antes de registrar outra")])));
            } else if path == "/api/auditoria/acessos" {
                list.push(("campos", "A filter rule is broken", campos(&[("apiKeyId", "apiKeyId deve ser o id (UUID) de uma chave")])));
            } else if path == "/api/titulares/consentimentos" {
                list.push(("campos", "A field rule is broken", campos(&[("cpfTitular", "os dígitos verificadores do CPF não conferem")])));
            } else if !pgcc_path {
                list.push(("campos", "A parameter rule is broken", campos(&[("limite", "deve estar entre 1 e 500.")])));
            }
            if pgcc_path {
                list.push(("pgcc_recusou", "The PGCC refused (PGCC 4xx)",
                    pgcc_err("Conflict", "A PGCC recusou a operação (HTTP 409).")));
            }
            list
        }
        "429" => {
            let mut list = vec![("limite", "Over the company's rate limit", err(
                "Limite de requisições da empresa excedido; tente novamente em 1 s.", json!({})))];
            if path.contains("arquivos") {
                list.push(("envios_em_andamento", "The company has its uploads under way", err(
                    "A empresa já tem o máximo de envios de arquivos em andamento; tente novamente em instantes.", json!({}))));
            }
            if path.ends_with("/testar") {
                list.push(("testes_em_andamento", "The company already has 2 tests under way", err(
                    "A empresa já tem 2 testes de webhook em andamento; tente de novo em instantes.", json!({}))));
            }
            list
        }
        "500" => vec![("interno", "Unexpected error", err("Erro interno inesperado.", json!({})))],
        "502" => vec![
            ("pgcc_falhou", "The PGCC failed (401/403/5xx)", pgcc_err("ServiceUnavailable",
                "A PGCC falhou ao processar a operação (HTTP 503); tente novamente mais tarde.")),
            ("pgcc_inalcancavel", "The PGCC is unreachable or answered garbage", pgcc_err("BadGateway",
                "A PGCC não respondeu de forma válida; tente novamente mais tarde.")),
        ],
        "503" => {
            let mut list = vec![("indisponivel", "Database unavailable", err(
                "Serviço temporariamente indisponível; tente novamente em instantes.", json!({})))];
            if pgcc_path {
                list.push(("pgcc_tente_depois", "The PGCC asked to try later (408/425/429)",
                    pgcc_err("TooManyRequests",
                        "A PGCC pediu para tentar novamente mais tarde (HTTP 429); repita a mesma requisição depois.")));
            }
            list
        }
        "504" => vec![("pgcc_timeout", "The PGCC timed out", pgcc_err("GatewayTimeout",
            "A PGCC não respondeu dentro do tempo limite; tente novamente mais tarde."))],
        _ => vec![],
    }
}

fn set_examples(content: &mut Content, examples: &[(&'static str, &'static str, Value)]) {
    if content.example.is_some() || !content.examples.is_empty() || examples.is_empty() {
        return;
    }
    for (name, summary, value) in examples {
        content.examples.insert(
            (*name).to_owned(),
            RefOr::T(
                ExampleBuilder::new()
                    .summary(*summary)
                    .value(Some(value.clone()))
                    .build(),
            ),
        );
    }
}

/// Adds the examples to every `/api` operation of `openapi`.
/// The first bytes of a PDF: an evidence file's body as an example shows it.
const PDF_START: &str = "%PDF-1.7\n%âãÏÓ\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n";

/// A page of `GET /api/exportacoes`, decompressed: one list item a line.
const EXPORT_PAGE: &str = "{\"id\":\"5f0c6c64-5a8b-4a51-9b43-0f4f3c2b1a10\",\"status\":\"ativo\",\"casoDeUsoIdTemplate\":\"tpl-001\",\"cpfTitular\":\"***.456.789-**\",\"criadoEm\":\"2026-01-10T12:00:05Z\"}\n";

/// The start of a consent record (`GET .../registro`): its context, id, type and schema version.
fn record_example() -> Value {
    json!({
        "@context": "https://consent.exemplo.com.br/contexts/consent-record-v1.jsonld",
        "@id": "urn:uuid:7d5e9c1a-3b2f-4e8d-9a6c-0b1f2e3d4c5a",
        "@type": "dpv:ConsentRecord",
        "dct:conformsTo": application::RECORD_SCHEMA
    })
}

pub fn apply(openapi: &mut OpenApi) {
    for (path, item) in openapi.paths.paths.iter_mut() {
        if !path.starts_with("/api/") {
            continue;
        }
        for (method, operation) in super::operations_mut(item) {
            if let Some(body) = operation.request_body.as_mut() {
                if path.contains("arquivos") {
                    // a file's bytes, shown as a string
                    for content in body.content.values_mut() {
                        set_examples(
                            content,
                            &[("arquivo", "The file's bytes (a PDF)", json!(PDF_START))],
                        );
                    }
                } else if path == "/api/importacoes" {
                    // a file: one line of JSON Lines, a CSV with its header
                    for (media, content) in body.content.iter_mut() {
                        let example = if media == "text/csv" {
                            (
                                "csv",
                                "A CSV as Excel in Portuguese writes it (BOM, semicolons)",
                                json!(IMPORT_CSV),
                            )
                        } else {
                            ("linha", "One line of JSON Lines", import_line())
                        };
                        set_examples(content, &[example]);
                    }
                } else {
                    let examples = request_examples(path);
                    for content in body.content.values_mut() {
                        set_examples(content, &examples);
                    }
                }
            }
            for (status, response) in operation.responses.responses.iter_mut() {
                let RefOr::T(response) = response else {
                    continue;
                };
                let examples = if path == "/api/importacoes/{id}/erros" && status == "200" {
                    // JSON Lines (or CSV), not an envelope
                    vec![(
                        "erros",
                        "Two lines' errors, as JSON Lines",
                        json!(IMPORT_ERRORS),
                    )]
                } else if path == "/api/solicitacao-consentimento/{id}/arquivos/{sha256}"
                    && method == "get"
                    && status == "200"
                {
                    // the file's bytes, not an envelope
                    vec![("arquivo", "The file's bytes (a PDF)", json!(PDF_START))]
                } else if path == "/api/auditoria/checkpoint" && status == "200" {
                    vec![("checkpoint", "A signed note", json!(CHECKPOINT))]
                } else if path == "/api/solicitacao-consentimento/{id}/registro" && status == "200"
                {
                    // a JSON-LD document, not an envelope (docs/records.md)
                    vec![("registro", "A consent record, abridged", record_example())]
                } else if path == "/api/exportacoes" && status == "200" {
                    // gzip bytes, not an envelope: shown as the lines they hold
                    vec![(
                        "pagina",
                        "A page, decompressed (one item a line)",
                        json!(EXPORT_PAGE),
                    )]
                } else if status.starts_with('2') {
                    success_examples(path, method)
                        .into_iter()
                        .map(|(n, s, data)| (n, s, ok(data)))
                        .collect()
                } else {
                    error_examples(path, status)
                };
                for (media, content) in response.content.iter_mut() {
                    if media == "text/csv" && path == "/api/importacoes/{id}/erros" {
                        set_examples(
                            content,
                            &[(
                                "erros",
                                "Two lines' errors, as CSV",
                                json!(IMPORT_ERRORS_CSV),
                            )],
                        );
                    } else {
                        set_examples(content, &examples);
                    }
                }
            }
        }
    }
}
