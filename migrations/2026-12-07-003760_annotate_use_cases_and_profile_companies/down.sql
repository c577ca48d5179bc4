ALTER TABLE empresas DROP COLUMN controlador_contato_dpo;
ALTER TABLE empresas DROP COLUMN controlador_endereco;
ALTER TABLE empresas DROP COLUMN controlador_nome;
DROP TABLE casos_de_uso_anotacoes;
