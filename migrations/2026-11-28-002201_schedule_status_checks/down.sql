DELETE FROM preenchimentos_retroativos WHERE nome = 'verificacoes_status';
DROP TABLE orcamento_pgcc;
DROP TABLE verificacoes_status;
