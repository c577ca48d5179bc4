DROP INDEX CONCURRENTLY IF EXISTS webhook_urls_falhando_desde_idx;
