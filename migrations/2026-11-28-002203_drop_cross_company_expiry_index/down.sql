CREATE INDEX CONCURRENTLY IF NOT EXISTS solicitacoes_consentimento_expiracao_idx
    ON solicitacoes_consentimento (data_expiracao_consentimento)
    WHERE status IN ('pendente', 'ativo') AND criacao = 'confirmada';
