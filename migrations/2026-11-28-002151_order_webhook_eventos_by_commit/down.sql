DROP INDEX webhook_eventos_empresa_transacao_idx;
ALTER TABLE webhook_eventos DROP COLUMN posicao, DROP COLUMN transacao;
