-- Issue 37, part 3: `GET /api/solicitacao-consentimento?origem=` (an exact match on the
-- imported requests' `origem`), in the list's order `(criado_em, id)`: a page reads the index
-- from its cursor on and stops at the page's size, never the company's other rows. Partial: only
-- imported requests have an `origem`. Built CONCURRENTLY, outside a transaction (metadata.toml),
-- alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS solicitacoes_consentimento_empresa_origem_idx
    ON solicitacoes_consentimento (empresa_id, origem, criado_em, id)
    WHERE origem IS NOT NULL AND criacao = 'confirmada';
