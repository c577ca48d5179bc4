CREATE INDEX CONCURRENTLY IF NOT EXISTS webhook_entregas_finais_idx
    ON webhook_entregas (atualizado_em)
    WHERE status <> 'pendente';
