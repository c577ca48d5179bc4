DROP INDEX CONCURRENTLY IF EXISTS webhook_urls_empresa_id_id_key;
