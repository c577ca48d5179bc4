-- The delivery purge, per company (issue 21, part 3): a company's final deliveries by their last
-- change. Replaces webhook_entregas_finais_idx (dropped in a later migration).
CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_entregas_empresa_finais_idx
    ON webhook_entregas (empresa_id, atualizado_em)
    WHERE status <> 'pendente';
