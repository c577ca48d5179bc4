-- One sandbox per real company (the first `api-key issue --sandbox` creates it, the next ones
-- find it), and the sandbox purge's walk over the sandbox companies. Built CONCURRENTLY, outside a
-- transaction (metadata.toml), alone in its file.
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS empresas_sandbox_de_key
    ON empresas (sandbox_de)
    WHERE sandbox_de IS NOT NULL;
