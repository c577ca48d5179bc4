-- The console's delivery log filtered by status (issue 38, part 5; docs/console.md, "A URL's
-- health"): a page is one backward range of this index from its keyset cursor
-- `(criado_em, id)`, stopped at the page's size, never the URL's deliveries of other statuses.
-- Built CONCURRENTLY, outside a transaction (metadata.toml), alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_entregas_url_status_idx
    ON webhook_entregas (webhook_url_id, status, criado_em, id);
