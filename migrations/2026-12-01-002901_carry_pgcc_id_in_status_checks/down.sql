DELETE FROM preenchimentos_retroativos WHERE nome = 'verificacoes_status_pgcc_id';
ALTER TABLE verificacoes_status DROP COLUMN pgcc_id;
