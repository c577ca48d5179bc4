CREATE INDEX CONCURRENTLY IF NOT EXISTS verificacoes_status_varredura_idx
    ON verificacoes_status (empresa_id, varredura, solicitacao_id)
    WHERE varredura IS NOT NULL;
