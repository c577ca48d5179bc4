-- Webhook URLs: where a company is notified. Removal is soft: the row keeps its removal time.
CREATE TABLE webhook_urls (
    id          uuid        PRIMARY KEY,
    empresa_id  uuid        NOT NULL REFERENCES empresas (id),
    url         text        NOT NULL,
    criado_em   timestamptz NOT NULL DEFAULT now(),
    removido_em timestamptz NULL
);

-- A company's active URLs (listing, and finding where to deliver an event).
CREATE INDEX webhook_urls_empresa_ativas_idx
    ON webhook_urls (empresa_id)
    WHERE removido_em IS NULL;
