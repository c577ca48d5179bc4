-- Unfinished and cancelled creations are not consents (no history, no event refers to them) and
-- cannot exist without a PGCC id in the previous schema: they are removed.
DELETE FROM solicitacoes_consentimento WHERE criacao <> 'confirmada';
DROP INDEX solicitacoes_consentimento_criacao_pendente_idx;
ALTER TABLE solicitacoes_consentimento
    DROP CONSTRAINT solicitacoes_consentimento_pgcc_id_criacao_check;
ALTER TABLE solicitacoes_consentimento ALTER COLUMN pgcc_id SET NOT NULL;
ALTER TABLE solicitacoes_consentimento
    DROP CONSTRAINT solicitacoes_consentimento_criacao_tentativa_check;
ALTER TABLE solicitacoes_consentimento DROP COLUMN criacao_tentativa_em;
ALTER TABLE solicitacoes_consentimento DROP CONSTRAINT solicitacoes_consentimento_criacao_check;
ALTER TABLE solicitacoes_consentimento DROP COLUMN criacao;
