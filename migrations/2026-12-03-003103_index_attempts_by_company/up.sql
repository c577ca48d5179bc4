-- The company-first key of issue 23, part 3 for webhook_tentativas; the next migrations make it the primary
-- key. Built CONCURRENTLY, outside a transaction (metadata.toml), alone in its file.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS webhook_tentativas_empresa_id_id_key ON webhook_tentativas (empresa_id, id);
