ALTER TABLE webhook_urls DROP COLUMN desativado_em;
ALTER TABLE webhook_urls DROP CONSTRAINT webhook_urls_segredo_anterior_check;
ALTER TABLE webhook_urls DROP COLUMN segredo_anterior_ate;
ALTER TABLE webhook_urls DROP COLUMN segredo_anterior_cifrado;
ALTER TABLE webhook_urls DROP COLUMN segredo_cifrado;
