-- Replaced by chaves_idempotencia_empresa_criado_em_idx (the purge is per company).
DROP INDEX CONCURRENTLY IF EXISTS chaves_idempotencia_criado_em_idx;
