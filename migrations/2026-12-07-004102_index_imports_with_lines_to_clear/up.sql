-- The cleaner's probe (every second): the cancelled imports with lines still to clear, found
-- through this index, never by reading every import ever cancelled. Built CONCURRENTLY, outside a
-- transaction (metadata.toml), alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS importacoes_linhas_a_limpar
    ON importacoes (empresa_id, id)
    WHERE linhas_a_limpar;
