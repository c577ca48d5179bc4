-- Cheaper creations: a creation inserts its row 'em_andamento' (before the PGCC call), then
-- confirms it, an update that cannot be HOT (the PGCC id and the creation state change), so
-- every index of the table gets an entry for each of the two row versions. The indexes only
-- confirmed rows are ever read through now leave the other rows out, so the first version of a
-- creation enters 3 indexes (the primary key, the hash key, the reconciler's) instead of 8.
-- Each index keeps its name, columns and the queries it serves; the queries compare the
-- creation state with the literal 'confirmada', as the predicates do.

-- Poller's claim (claim_for_status_check) and the backlog gauge: "confirmed non-terminal
-- requests due for a status check, oldest due first".
DROP INDEX solicitacoes_consentimento_status_devido_idx;
CREATE INDEX solicitacoes_consentimento_status_devido_idx
    ON solicitacoes_consentimento (proximo_status_em)
    WHERE status IN ('pendente', 'ativo') AND criacao = 'confirmada';

-- Expiry worker (expire_due): "confirmed non-terminal requests whose expiry passed".
DROP INDEX solicitacoes_consentimento_expiracao_idx;
CREATE INDEX solicitacoes_consentimento_expiracao_idx
    ON solicitacoes_consentimento (data_expiracao_consentimento)
    WHERE status IN ('pendente', 'ativo') AND criacao = 'confirmada';

-- HashConsulta (find_valid): "the company's confirmed active request for this subject and
-- template, expiring last".
DROP INDEX solicitacoes_consentimento_validas_idx;
CREATE INDEX solicitacoes_consentimento_validas_idx
    ON solicitacoes_consentimento
       (empresa_id, cpf_titular, caso_de_uso_id_template, data_expiracao_consentimento)
    WHERE status = 'ativo' AND criacao = 'confirmada';

-- Paged listing (list): "a company's confirmed requests by creation, then id".
DROP INDEX solicitacoes_consentimento_empresa_criado_em_idx;
CREATE INDEX solicitacoes_consentimento_empresa_criado_em_idx
    ON solicitacoes_consentimento (empresa_id, criado_em, id)
    WHERE criacao = 'confirmada';

-- The unique key (empresa_id, pgcc_id) as a unique index over the rows that have a PGCC id (the
-- confirmed ones, by the check constraint): the same guarantee (NULLs never collided), without
-- an entry for every row still being created. No query reads through it.
ALTER TABLE solicitacoes_consentimento
    DROP CONSTRAINT solicitacoes_consentimento_empresa_pgcc_id_key;
CREATE UNIQUE INDEX solicitacoes_consentimento_empresa_pgcc_id_key
    ON solicitacoes_consentimento (empresa_id, pgcc_id)
    WHERE pgcc_id IS NOT NULL;
