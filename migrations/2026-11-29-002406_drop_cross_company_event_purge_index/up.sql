-- Replaced by webhook_eventos_empresa_sem_entregas_idx: the purge is per company and reads only
-- events without deliveries.
DROP INDEX CONCURRENTLY IF EXISTS webhook_eventos_criado_em_idx;
