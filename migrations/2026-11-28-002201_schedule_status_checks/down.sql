DROP TABLE orcamento_pgcc;
DROP TABLE verificacoes_status;
