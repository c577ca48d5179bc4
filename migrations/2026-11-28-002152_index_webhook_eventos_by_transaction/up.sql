-- The catch-up feed's order (2026-11-28-002151): a company's events by (transacao, posicao, id),
-- the cursor and the watermark both index bounds. Built CONCURRENTLY (reads and writes go on
-- meanwhile), so outside a transaction (metadata.toml) and alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_eventos_empresa_transacao_idx
    ON webhook_eventos (empresa_id, transacao, posicao, id);
