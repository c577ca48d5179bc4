-- The expiry worker claims within one company (issue 21, part 3): its companies found by one
-- probe each, and each company's due requests as one range of this index. Built CONCURRENTLY,
-- outside a transaction (metadata.toml), alone in its file; the cross-company index it replaces
-- goes in the next migration.
CREATE INDEX CONCURRENTLY IF NOT EXISTS solicitacoes_consentimento_empresa_expiracao_idx
    ON solicitacoes_consentimento (empresa_id, data_expiracao_consentimento)
    WHERE status IN ('pendente', 'ativo') AND criacao = 'confirmada';
