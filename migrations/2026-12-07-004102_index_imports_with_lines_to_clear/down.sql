DROP INDEX CONCURRENTLY IF EXISTS importacoes_linhas_a_limpar;
