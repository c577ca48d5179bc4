-- Replaced by webhook_entregas_empresa_finais_idx (the purge is per company).
DROP INDEX CONCURRENTLY IF EXISTS webhook_entregas_finais_idx;
