ALTER TABLE empresas DROP CONSTRAINT IF EXISTS empresas_sandbox_de_fkey;
ALTER TABLE empresas DROP COLUMN IF EXISTS sandbox_de;
