-- The sweep's index without the PGCC id: the previous migration's index serves every read it
-- served. Dropped CONCURRENTLY, outside a transaction (metadata.toml), alone in its file.
DROP INDEX CONCURRENTLY IF EXISTS verificacoes_status_varredura_idx;
