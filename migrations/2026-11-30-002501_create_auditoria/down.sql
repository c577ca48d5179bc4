DROP TABLE auditoria_checkpoints;
DROP TABLE auditoria_entradas;
DROP TABLE auditoria_chaves;
DROP FUNCTION auditoria_recusa_alteracao();
DROP FUNCTION auditoria_entrada(uuid, text, text, text, text, text, text, text, text, text, timestamptz);
