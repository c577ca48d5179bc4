-- A validated constraint cannot be marked NOT VALID again; dropped and added back as
-- 2026-11-30-002901 left it.
ALTER TABLE empresas DROP CONSTRAINT empresas_sandbox_de_fkey;
ALTER TABLE empresas
    ADD CONSTRAINT empresas_sandbox_de_fkey
    FOREIGN KEY (sandbox_de) REFERENCES empresas (id) NOT VALID;
