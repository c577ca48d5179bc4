-- The idempotency key purge, per company (issue 21, part 3). Replaces
-- chaves_idempotencia_criado_em_idx (dropped in a later migration).
CREATE INDEX CONCURRENTLY IF NOT EXISTS chaves_idempotencia_empresa_criado_em_idx
    ON chaves_idempotencia (empresa_id, criado_em);
