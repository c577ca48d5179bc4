-- The console's delivery log filtered by event type, with or without a status (issue 38, part 5):
-- with a status, one backward range of this index from the keyset cursor; without, one range per
-- status (four), merged, each stopped at the page's size. Partial: the deliveries written before
-- `tipo_evento` existed have none until its backfill has run. Built CONCURRENTLY, outside a
-- transaction (metadata.toml), alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_entregas_url_tipo_status_idx
    ON webhook_entregas (webhook_url_id, tipo_evento, status, criado_em, id)
    WHERE tipo_evento IS NOT NULL;
