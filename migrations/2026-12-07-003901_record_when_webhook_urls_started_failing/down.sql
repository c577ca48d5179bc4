ALTER TABLE webhook_urls DROP COLUMN motivo_desativacao;
ALTER TABLE webhook_urls DROP COLUMN falhando_desde;
