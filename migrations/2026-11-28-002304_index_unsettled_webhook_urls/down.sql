DROP INDEX CONCURRENTLY IF EXISTS webhook_urls_por_acertar_idx;
