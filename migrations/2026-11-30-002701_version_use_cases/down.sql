DROP TABLE casos_de_uso_versoes;
ALTER TABLE casos_de_uso DROP COLUMN impressao;
ALTER TABLE casos_de_uso DROP COLUMN versao;
