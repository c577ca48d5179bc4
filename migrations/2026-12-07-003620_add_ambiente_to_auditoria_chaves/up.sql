-- Issue 36, part 4: the sandbox companies' receipts and checkpoints are signed with a key of
-- their own (`auditoria.signing_key_sandbox`), recorded here as `sandbox` so that the JWKS marks
-- it and `audit verify` never accepts it for a real company. Every key recorded before signed
-- for production. A constant default adds the column without rewriting the table; the check is
-- added NOT VALID (no scan under the ALTER's lock) and validated by the next migration.
ALTER TABLE auditoria_chaves ADD COLUMN ambiente text NOT NULL DEFAULT 'producao';
ALTER TABLE auditoria_chaves
    ADD CONSTRAINT auditoria_chaves_ambiente_check
    CHECK (ambiente IN ('producao', 'sandbox')) NOT VALID;
