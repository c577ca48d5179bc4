-- squawk-ignore adding-foreign-key-constraint
ALTER TABLE importacao_linhas
    ADD CONSTRAINT importacao_linhas_empresa_id_importacao_id_fkey
    FOREIGN KEY (empresa_id, importacao_id) REFERENCES importacoes (empresa_id, id) ON DELETE CASCADE;
