-- The company-first key of issue 23, part 3 (every tenant table keyed by `empresa_id`, as a table
-- distributed by company must be); the next migrations make it the primary key.
-- Built CONCURRENTLY, outside a transaction (metadata.toml), alone in its file.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS webhook_eventos_empresa_id_id_key
    ON webhook_eventos (empresa_id, id);
