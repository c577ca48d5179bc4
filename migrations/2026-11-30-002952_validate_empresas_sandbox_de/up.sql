-- Validates the link of a sandbox to its real company (previous migration) with a SHARE UPDATE
-- EXCLUSIVE lock: reads and writes go on.
ALTER TABLE empresas VALIDATE CONSTRAINT empresas_sandbox_de_fkey;
