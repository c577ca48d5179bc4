-- A company's sweep of one lane, in id order (issue 21, part 1): each batch is one index range.
-- Built CONCURRENTLY, outside a transaction (metadata.toml), alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS verificacoes_status_varredura_idx
    ON verificacoes_status (empresa_id, varredura, solicitacao_id)
    WHERE varredura IS NOT NULL;
