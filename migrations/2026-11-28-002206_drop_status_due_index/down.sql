CREATE INDEX CONCURRENTLY IF NOT EXISTS solicitacoes_consentimento_status_devido_idx
    ON solicitacoes_consentimento (proximo_status_em)
    WHERE status IN ('pendente', 'ativo') AND criacao = 'confirmada';
