-- The reconciler claims within one company (issue 21, part 3): its companies found by one probe
-- each, each company's unfinished creations as one range of this index. Built CONCURRENTLY,
-- outside a transaction (metadata.toml), alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS solicitacoes_consentimento_empresa_criacao_pendente_idx
    ON solicitacoes_consentimento (empresa_id, criacao_tentativa_em)
    WHERE criacao = 'em_andamento';
