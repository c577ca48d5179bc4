-- The event purge, per company (issue 21, part 3): only the events no delivery holds, oldest
-- first. Built CONCURRENTLY, outside a transaction (metadata.toml), alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_eventos_empresa_sem_entregas_idx
    ON webhook_eventos (empresa_id, criado_em)
    WHERE sem_entregas;
