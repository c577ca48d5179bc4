ALTER TABLE webhook_eventos DROP COLUMN posicao, DROP COLUMN transacao;
