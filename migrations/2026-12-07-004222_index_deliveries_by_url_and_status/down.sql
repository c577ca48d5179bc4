DROP INDEX CONCURRENTLY IF EXISTS webhook_entregas_url_status_idx;
