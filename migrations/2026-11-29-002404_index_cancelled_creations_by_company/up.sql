-- The blanking of cancelled creations, per company (issue 21, part 3). Replaces
-- solicitacoes_consentimento_canceladas_idx (dropped in a later migration).
CREATE INDEX CONCURRENTLY IF NOT EXISTS solicitacoes_consentimento_empresa_canceladas_idx
    ON solicitacoes_consentimento (empresa_id, criacao_tentativa_em)
    WHERE criacao = 'cancelada' AND dados_apagados_em IS NULL;
