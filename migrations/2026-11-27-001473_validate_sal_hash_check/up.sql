-- The salt's check (added NOT VALID by 2026-11-27-001471) holds for the rows stored before it
-- too. VALIDATE reads the table under a SHARE UPDATE EXCLUSIVE lock: reads and writes go on.
ALTER TABLE solicitacoes_consentimento VALIDATE CONSTRAINT solicitacoes_consentimento_sal_hash_check;
