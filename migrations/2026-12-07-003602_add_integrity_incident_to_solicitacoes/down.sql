ALTER TABLE solicitacoes_consentimento DROP COLUMN IF EXISTS incidente_integridade_em;
ALTER TABLE solicitacoes_consentimento DROP COLUMN IF EXISTS pgcc_nao_encontrada_em;
