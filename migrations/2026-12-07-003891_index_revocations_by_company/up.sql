-- The console's home counts (issue 38, part 6): a company's revocations of the last 7 days, a
-- capped count over one range of this index (the history's revocation entries by time). Built
-- CONCURRENTLY, outside a transaction (metadata.toml), alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS solicitacoes_historico_empresa_revogacoes_idx
    ON solicitacoes_historico (empresa_id, em)
    WHERE para = 'revogado';
