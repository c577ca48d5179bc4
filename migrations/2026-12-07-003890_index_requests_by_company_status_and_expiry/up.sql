-- The console's home counts (issue 38, part 6; docs/console.md, "The home page's reads"): a
-- company's confirmed requests by status, and its active ones expiring in the next 30 days, each
-- a capped count (LIMIT 10001) over one range of this index, read index-only: a view reads at most
-- the cap's entries per count, never the company's rows. Built CONCURRENTLY, outside a
-- transaction (metadata.toml), alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS solicitacoes_consentimento_empresa_status_expiracao_idx
    ON solicitacoes_consentimento (empresa_id, status, data_expiracao_consentimento)
    WHERE criacao = 'confirmada';
