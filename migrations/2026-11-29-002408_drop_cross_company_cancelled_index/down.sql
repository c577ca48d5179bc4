CREATE INDEX CONCURRENTLY IF NOT EXISTS solicitacoes_consentimento_canceladas_idx
    ON solicitacoes_consentimento (criacao_tentativa_em)
    WHERE criacao = 'cancelada' AND dados_apagados_em IS NULL;
