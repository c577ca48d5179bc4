-- The console's "resend every failed delivery since <time>" (issue 38, part 5): a URL's failed
-- deliveries from a time on, oldest first, at most 1,000 a click, found along this index without
-- reading the URL's other deliveries of the period. Built CONCURRENTLY, outside a transaction
-- (metadata.toml), alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_entregas_url_falhas_idx
    ON webhook_entregas (webhook_url_id, criado_em)
    WHERE status = 'falhou';
