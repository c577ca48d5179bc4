DROP TABLE auditoria_nos;
DROP TABLE auditoria_folhas;
