-- Issue 37, part 4 (docs/imports.md, "The console's page"): `/console/importacoes` lists the
-- company's imports newest first, 20 a page, the next page from the last one shown (keyset on
-- `(criada_em, id)`): one range of this index per page, never a sort of the company's imports.
-- Built CONCURRENTLY, outside a transaction (metadata.toml), alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS importacoes_empresa_criada
    ON importacoes (empresa_id, criada_em, id);
