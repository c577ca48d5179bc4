-- A confirmed request the PGCC does not know (issue 36, part 1): the status worker notes the
-- PGCC's first "not found" (`pgcc_nao_encontrada_em`, forgotten when the PGCC knows it again)
-- and, when "not found" still holds `workers.reconcile_not_found_seconds` later, records an
-- integrity incident (`incidente_integridade_em`, kept): HashConsulta never answers such a request
-- valid, `auditoria.incidente` is told to the company and `audit verify` lists it. Written by the
-- status worker with a plain UPDATE of these two columns (the runtime role needs column-level
-- UPDATE on them). Nullable, no default: no rewrite of the table.
ALTER TABLE solicitacoes_consentimento
    ADD COLUMN IF NOT EXISTS pgcc_nao_encontrada_em timestamptz NULL;
ALTER TABLE solicitacoes_consentimento
    ADD COLUMN IF NOT EXISTS incidente_integridade_em timestamptz NULL;
