ALTER TABLE auditoria_chaves DROP CONSTRAINT IF EXISTS auditoria_chaves_ambiente_check;
ALTER TABLE auditoria_chaves DROP COLUMN IF EXISTS ambiente;
