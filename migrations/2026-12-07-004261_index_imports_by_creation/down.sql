DROP INDEX CONCURRENTLY IF EXISTS importacoes_empresa_criada;
