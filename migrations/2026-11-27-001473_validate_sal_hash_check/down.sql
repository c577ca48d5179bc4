-- A validated constraint cannot be marked NOT VALID again; dropped and added back as
-- 2026-11-27-001471 left it.
ALTER TABLE solicitacoes_consentimento DROP CONSTRAINT solicitacoes_consentimento_sal_hash_check;
ALTER TABLE solicitacoes_consentimento
    ADD CONSTRAINT solicitacoes_consentimento_sal_hash_check
    CHECK (sal_hash = '' OR sal_hash ~ '^[0-9a-f]{32}$') NOT VALID;
