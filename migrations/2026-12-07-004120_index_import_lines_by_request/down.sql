DROP INDEX CONCURRENTLY IF EXISTS importacao_linhas_solicitacao;
