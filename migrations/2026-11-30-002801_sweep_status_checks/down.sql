DROP TABLE varreduras_status;
ALTER TABLE verificacoes_status DROP COLUMN varredura;
