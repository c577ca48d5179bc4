-- A company's sweep of one lane, in id order, with each request's PGCC id in the index (issue
-- 21, part 1): a batch is one index-only range read (swept rows are never updated, so their
-- pages stay all-visible). Replaces verificacoes_status_varredura_idx (dropped by the next
-- migration). Built CONCURRENTLY, outside a transaction (metadata.toml), alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS verificacoes_status_varredura_pgcc_idx
    ON verificacoes_status (empresa_id, varredura, solicitacao_id) INCLUDE (pgcc_id)
    WHERE varredura IS NOT NULL;
