-- Delivery attempts: what each try of a delivery gave. Rows are only ever inserted; the id
-- orders attempts recorded at the same instant.
CREATE TABLE webhook_tentativas (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    entrega_id  uuid        NOT NULL REFERENCES webhook_entregas (id),
    em          timestamptz NOT NULL,
    -- The receiver's HTTP status, NULL when it did not answer (timeout, refused, ...).
    status_http integer     NULL,
    latencia_ms integer     NOT NULL,
    -- Why it failed, in a few words (never the body, never a secret).
    erro        text        NULL,
    CONSTRAINT webhook_tentativas_status_http_check CHECK (status_http BETWEEN 100 AND 999),
    CONSTRAINT webhook_tentativas_latencia_ms_check CHECK (latencia_ms >= 0)
);

-- A delivery's attempts in order (and the foreign key's checks).
CREATE INDEX webhook_tentativas_entrega_em_idx ON webhook_tentativas (entrega_id, em);
