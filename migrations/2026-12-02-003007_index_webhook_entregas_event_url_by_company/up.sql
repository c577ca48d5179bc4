-- The company-first form of the unique (evento_id, webhook_url_id) of a delivery (issue 23, part
-- 3); it replaces that constraint in the next migrations.
-- Built CONCURRENTLY, outside a transaction (metadata.toml), alone in its file.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS webhook_entregas_empresa_evento_url_key
    ON webhook_entregas (empresa_id, evento_id, webhook_url_id);
