DELETE FROM preenchimentos_retroativos WHERE nome = 'eventos_sem_entregas';
ALTER TABLE webhook_eventos DROP COLUMN sem_entregas;
