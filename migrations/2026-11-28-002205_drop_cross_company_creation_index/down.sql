CREATE INDEX CONCURRENTLY IF NOT EXISTS solicitacoes_consentimento_criacao_pendente_idx
    ON solicitacoes_consentimento (criacao_tentativa_em)
    WHERE criacao = 'em_andamento';
