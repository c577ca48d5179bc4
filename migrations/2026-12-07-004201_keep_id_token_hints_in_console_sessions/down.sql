ALTER TABLE console_sessoes DROP COLUMN id_token_cifrado;
