-- Replaced by solicitacoes_consentimento_empresa_expiracao_idx (the claim is per company now):
-- one index fewer for every write of a consent row to keep.
DROP INDEX CONCURRENTLY IF EXISTS solicitacoes_consentimento_expiracao_idx;
