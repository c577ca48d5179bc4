DROP INDEX CONCURRENTLY IF EXISTS empresas_sandbox_de_key;
