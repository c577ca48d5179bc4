-- The reason given for a status change (issue 14): by the company with its revocation or
-- withdrawal, or by the subject on the PGCC (refusal, revocation) when the PGCC reports one.
-- NULL: none given (and every change stored before this migration). At most 500 characters,
-- as the API checks (the PGCC's longer texts are cut before they get here).
ALTER TABLE solicitacoes_historico ADD COLUMN motivo text NULL;
ALTER TABLE solicitacoes_historico
    ADD CONSTRAINT solicitacoes_historico_motivo_check
    CHECK (motivo IS NULL OR char_length(motivo) BETWEEN 1 AND 500);
