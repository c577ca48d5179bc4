DROP INDEX CONCURRENTLY IF EXISTS importacao_linhas_pgcc_id;
