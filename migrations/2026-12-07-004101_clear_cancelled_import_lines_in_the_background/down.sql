ALTER TABLE importacoes DROP COLUMN IF EXISTS linhas_a_limpar;
