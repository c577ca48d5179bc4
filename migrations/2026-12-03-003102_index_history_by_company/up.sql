-- The company-first key of issue 23, part 3 for solicitacoes_historico; the next migrations make it the primary
-- key. Built CONCURRENTLY, outside a transaction (metadata.toml), alone in its file.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS solicitacoes_historico_empresa_id_id_key ON solicitacoes_historico (empresa_id, id);
