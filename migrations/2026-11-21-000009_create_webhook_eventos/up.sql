-- Webhook events (the outbox): written in the same transaction as the change they tell about.
-- Rows are only ever inserted.
CREATE TABLE webhook_eventos (
    -- Also the `webhook-id` header: the same on every attempt and replay.
    id         uuid        PRIMARY KEY,
    empresa_id uuid        NOT NULL REFERENCES empresas (id),
    tipo       text        NOT NULL,
    -- The exact request body ({"type", "timestamp", "data"}), serialized once: every attempt
    -- sends (and signs) these bytes. Holds no full CPF and no proof of consent.
    payload    text        NOT NULL,
    -- The event's timestamp.
    criado_em  timestamptz NOT NULL,
    CONSTRAINT webhook_eventos_tipo_check
        CHECK (tipo IN ('solicitacao.criada', 'solicitacao.ativada', 'solicitacao.recusada',
                        'solicitacao.expirada', 'solicitacao.revogada',
                        'casos-de-uso.sincronizados'))
);
