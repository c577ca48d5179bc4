-- The disabling job's claim (issue 39): the active URLs failing since before the window, found
-- through this index, not by reading every URL of every company each round. Built CONCURRENTLY,
-- outside a transaction (metadata.toml), alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_urls_falhando_desde_idx
    ON webhook_urls (falhando_desde)
    WHERE falhando_desde IS NOT NULL AND desativado_em IS NULL AND removido_em IS NULL;
