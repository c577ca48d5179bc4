DROP TABLE IF EXISTS auditoria_inicio;
