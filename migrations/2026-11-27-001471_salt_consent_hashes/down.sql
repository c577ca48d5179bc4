-- The unsalted hashes come back where they were kept; requests created after the salt was
-- added have none and keep their salted hash (a recomputation would need the salt).
UPDATE solicitacoes_consentimento SET hash = hash_anterior WHERE hash_anterior IS NOT NULL;
DELETE FROM preenchimentos_retroativos WHERE nome = 'sal_hash';
ALTER TABLE solicitacoes_consentimento
    DROP CONSTRAINT solicitacoes_consentimento_sal_hash_check,
    DROP COLUMN hash_anterior,
    DROP COLUMN sal_hash;
