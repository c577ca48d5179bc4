DELETE FROM preenchimentos_retroativos WHERE nome = 'webhook_entregas_tipo_evento';
ALTER TABLE webhook_entregas DROP COLUMN tipo_evento;
ALTER TABLE webhook_tentativas DROP COLUMN corpo_resposta;
