-- `GET /api/hash-consulta/{hash}` also finds a request by the unsalted hash it had before its
-- salt (2026-11-27-001471). Built CONCURRENTLY (reads and writes go on meanwhile), so outside a
-- transaction (metadata.toml) and alone in its file. Should a build fail half-way, PostgreSQL
-- leaves an invalid index behind: `consent-api migrate` then stops naming it, to be dropped
-- (DROP INDEX CONCURRENTLY) before the next run.
CREATE INDEX CONCURRENTLY IF NOT EXISTS solicitacoes_consentimento_hash_anterior_idx
    ON solicitacoes_consentimento (empresa_id, hash_anterior)
    WHERE hash_anterior IS NOT NULL;
