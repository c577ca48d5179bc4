CREATE INDEX CONCURRENTLY IF NOT EXISTS chaves_idempotencia_criado_em_idx ON chaves_idempotencia (criado_em);
