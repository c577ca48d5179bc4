-- Issue 37, part 3 (docs/imports.md, "Provenance"): a consent request's import line found by the
-- request's id. `consentimento_confirmar` probes it on every confirmation (an imported consent's
-- creation entry and `origem` come from its line; a live creation finds none), and the record
-- and the receipt read an imported request's provenance by it: one key probe each, never a scan
-- of the company's lines. Built CONCURRENTLY, outside a transaction (metadata.toml), alone in
-- its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS importacao_linhas_solicitacao
    ON importacao_linhas (empresa_id, solicitacao_id);
