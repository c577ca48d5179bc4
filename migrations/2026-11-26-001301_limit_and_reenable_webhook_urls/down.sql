ALTER TABLE webhook_urls DROP COLUMN reativado_em;
DROP INDEX webhook_urls_empresa_url_ativa_key;
ALTER TABLE webhook_urls DROP COLUMN url_normalizada;
