-- Idempotency keys (header Idempotency-Key) of a company's creations: the first request with a
-- key runs, its answer is kept, and a retry with the same key and the same request gets that
-- answer again, byte for byte, instead of creating a second consent. Kept at least the configured
-- retention (24 h by default), then purged by a worker.
CREATE TABLE chaves_idempotencia (
    empresa_id    uuid        NOT NULL REFERENCES empresas (id),
    -- As sent: 1 to 255 visible ASCII characters.
    chave         text        NOT NULL,
    -- Lower-case hex SHA-256 of the canonical request (method, path, body bytes): the same key
    -- with another request is refused.
    impressao     text        NOT NULL,
    estado        text        NOT NULL,
    -- The id reserved for what the request creates (our consent request id, sent to the PGCC as
    -- referenciaExterna): a retry after an answer that was not kept (PGCC timeout, 5xx) creates
    -- under the same id, so the PGCC answers the request it may already hold.
    recurso_id    uuid        NOT NULL,
    -- Who runs the request now, and until when (the lease): a request whose process died is
    -- taken over by a retry once the lease is over; a released key has its lease over at once.
    dono          uuid        NOT NULL,
    bloqueada_ate timestamptz NULL,
    -- The kept answer (completed requests only): its HTTP status and body bytes.
    status_http   integer     NULL,
    corpo         bytea       NULL,
    criado_em     timestamptz NOT NULL,
    concluida_em  timestamptz NULL,
    PRIMARY KEY (empresa_id, chave),
    CONSTRAINT chaves_idempotencia_chave_check CHECK (chave ~ '^[!-~]{1,255}$'),
    CONSTRAINT chaves_idempotencia_impressao_check CHECK (impressao ~ '^[0-9a-f]{64}$'),
    CONSTRAINT chaves_idempotencia_estado_check CHECK (estado IN ('em_andamento', 'concluida')),
    CONSTRAINT chaves_idempotencia_concluida_check CHECK (
        (estado = 'concluida') = (status_http IS NOT NULL AND corpo IS NOT NULL AND concluida_em IS NOT NULL)
    ),
    CONSTRAINT chaves_idempotencia_status_http_check CHECK (status_http BETWEEN 100 AND 599)
);

-- "Keys older than the retention" (the purge).
CREATE INDEX chaves_idempotencia_criado_em_idx ON chaves_idempotencia (criado_em);
