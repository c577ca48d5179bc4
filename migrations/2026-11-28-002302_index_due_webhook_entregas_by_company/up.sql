-- "The company's due deliveries, soonest first", parked ones left out: the claim finds the
-- companies with due work by a loose index scan over it (one probe per company) and takes each
-- company's share along it. Built CONCURRENTLY (reads and writes go on meanwhile), so outside a
-- transaction (metadata.toml) and alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_entregas_devidas_empresa_idx
    ON webhook_entregas (empresa_id, proxima_tentativa_em)
    WHERE status = 'pendente' AND NOT estacionada;
