-- The console's health of a webhook URL (issue 38, part 5): its last success, one probe of this
-- index (the newest delivered delivery of the URL) however long it has been failing. Built
-- CONCURRENTLY, outside a transaction (metadata.toml), alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_entregas_url_entregue_em_idx
    ON webhook_entregas (webhook_url_id, entregue_em DESC)
    WHERE entregue_em IS NOT NULL;
