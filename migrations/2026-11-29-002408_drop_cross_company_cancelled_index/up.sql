-- Replaced by solicitacoes_consentimento_empresa_canceladas_idx (the blanking is per company).
DROP INDEX CONCURRENTLY IF EXISTS solicitacoes_consentimento_canceladas_idx;
