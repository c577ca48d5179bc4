DROP TABLE console_sessoes;
