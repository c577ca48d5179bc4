-- The check of 2026-12-07-003620 holds for the keys recorded before it (all `producao`, the
-- default). VALIDATE reads the table under a SHARE UPDATE EXCLUSIVE lock: reads go on.
ALTER TABLE auditoria_chaves VALIDATE CONSTRAINT auditoria_chaves_ambiente_check;
