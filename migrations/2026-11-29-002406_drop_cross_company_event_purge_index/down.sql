CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_eventos_criado_em_idx ON webhook_eventos (criado_em);
