-- The counts of `casos-de-uso.alterado` (issue 25, part 1): a company's `ativo` and `pendente`
-- requests of one use case under a version older than the new one, read from this index alone
-- (index-only: status is in it), never along all of the company's requests. Built CONCURRENTLY,
-- outside a transaction (metadata.toml), alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS solicitacoes_consentimento_versao_caso_idx
    ON solicitacoes_consentimento (empresa_id, caso_de_uso_id, versao_caso_de_uso, status)
    WHERE criacao = 'confirmada' AND status IN ('pendente', 'ativo');
