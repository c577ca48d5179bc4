-- "URLs whose pending deliveries are still to be cancelled, parked or brought back": a few
-- rows at any time, so the worker's look costs nothing when there is nothing to do. Built
-- CONCURRENTLY, alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_urls_por_acertar_idx
    ON webhook_urls (empresa_id)
    WHERE entregas_por_acertar;
