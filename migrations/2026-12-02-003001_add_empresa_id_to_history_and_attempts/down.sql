DELETE FROM preenchimentos_retroativos
WHERE nome IN ('solicitacoes_historico_empresa_id', 'webhook_tentativas_empresa_id');
ALTER TABLE webhook_tentativas DROP COLUMN empresa_id;
ALTER TABLE solicitacoes_historico DROP COLUMN empresa_id;
