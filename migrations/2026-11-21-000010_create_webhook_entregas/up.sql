-- Webhook deliveries: one per event and webhook URL active when the event was written.
-- 'pendente' deliveries are due at proxima_tentativa_em (a claim pushes it to the claim's lease);
-- 'entregue', 'falhou' and 'cancelada' (its URL was removed) are final until a replay.
CREATE TABLE webhook_entregas (
    id                   uuid        PRIMARY KEY,
    evento_id            uuid        NOT NULL REFERENCES webhook_eventos (id),
    webhook_url_id       uuid        NOT NULL REFERENCES webhook_urls (id),
    empresa_id           uuid        NOT NULL REFERENCES empresas (id),
    status               text        NOT NULL DEFAULT 'pendente',
    -- Attempts made (rows of webhook_tentativas).
    tentativas           integer     NOT NULL DEFAULT 0,
    proxima_tentativa_em timestamptz NULL,
    criado_em            timestamptz NOT NULL,
    atualizado_em        timestamptz NOT NULL,
    entregue_em          timestamptz NULL,
    CONSTRAINT webhook_entregas_status_check
        CHECK (status IN ('pendente', 'entregue', 'falhou', 'cancelada')),
    CONSTRAINT webhook_entregas_tentativas_check CHECK (tentativas >= 0),
    -- A pending delivery is always due at some time (else it would never be claimed).
    CONSTRAINT webhook_entregas_pendente_check
        CHECK (status <> 'pendente' OR proxima_tentativa_em IS NOT NULL),
    -- Also the index of the foreign key on evento_id.
    CONSTRAINT webhook_entregas_evento_url_key UNIQUE (evento_id, webhook_url_id)
);

-- "Pending deliveries due, soonest first" (the sender's claim).
CREATE INDEX webhook_entregas_pendentes_idx
    ON webhook_entregas (proxima_tentativa_em)
    WHERE status = 'pendente';

-- A URL's deliveries, newest first (the delivery log, the disabling of failing URLs, the
-- cancellation when the URL is removed).
CREATE INDEX webhook_entregas_url_criado_em_idx
    ON webhook_entregas (webhook_url_id, criado_em DESC);
