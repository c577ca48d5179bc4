-- "A URL's pending deliveries, parked or not": the batches that cancel the deliveries of a
-- removed URL, park those of a disabled one and bring them back on `reativar` read only the rows
-- they change (the parked flag is the second column). Built CONCURRENTLY, alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_entregas_pendentes_url_idx
    ON webhook_entregas (webhook_url_id, estacionada)
    WHERE status = 'pendente';
