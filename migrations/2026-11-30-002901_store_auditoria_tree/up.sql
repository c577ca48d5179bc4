-- The companies' trees, stored (issue 24; docs/auditoria.md, "Stored tree"), so that a checkpoint
-- costs its new entries plus O(log n) and a proof O(log n) rows read by key, never the whole log.
-- Written only by the checkpoint job, in one transaction per batch of leaves; derived from
-- auditoria_entradas (audit verify recomputes them from the entries and names a stored node that
-- differs). `empresa_id` leads every key: a later issue distributes tables by company.
--
-- auditoria_folhas: leaf `indice` of the company's tree is its entry (transacao, posicao), the
-- entry's rank in log order, fixed when the job stored it (below the watermark, docs/auditoria.md).
-- The unique key finds a request's leaves from its entries.
CREATE TABLE IF NOT EXISTS auditoria_folhas (
    empresa_id uuid NOT NULL REFERENCES empresas (id),
    indice bigint NOT NULL CHECK (indice >= 0),
    transacao bigint NOT NULL,
    posicao bigint NOT NULL,
    PRIMARY KEY (empresa_id, indice),
    UNIQUE (empresa_id, transacao, posicao)
);

-- auditoria_nos: node (nivel l, indice k) is the RFC 9162 hash of the perfect subtree of leaves
-- [k * 2^l, (k + 1) * 2^l), stored once that subtree is complete; level 0 holds the leaf hashes.
-- Every root and proof is a run of such subtrees (docs/auditoria.md). `nivel` is a smallint on
-- purpose: a level is at most 63 (the CHECK), and the table holds about two rows an entry.
CREATE TABLE IF NOT EXISTS auditoria_nos (
    empresa_id uuid NOT NULL REFERENCES empresas (id),
    -- squawk-ignore prefer-bigint-over-smallint
    nivel smallint NOT NULL CHECK (nivel BETWEEN 0 AND 63),
    indice bigint NOT NULL CHECK (indice >= 0),
    hash bytea NOT NULL CHECK (octet_length(hash) = 32),
    PRIMARY KEY (empresa_id, nivel, indice)
);

-- Append-only like the log they are derived from: the trigger only raises.
CREATE OR REPLACE TRIGGER auditoria_folhas_somente_insercao
    BEFORE UPDATE OR DELETE ON auditoria_folhas
    FOR EACH ROW EXECUTE FUNCTION auditoria_recusa_alteracao();
CREATE OR REPLACE TRIGGER auditoria_folhas_sem_truncate
    BEFORE TRUNCATE ON auditoria_folhas
    FOR EACH STATEMENT EXECUTE FUNCTION auditoria_recusa_alteracao();
CREATE OR REPLACE TRIGGER auditoria_nos_somente_insercao
    BEFORE UPDATE OR DELETE ON auditoria_nos
    FOR EACH ROW EXECUTE FUNCTION auditoria_recusa_alteracao();
CREATE OR REPLACE TRIGGER auditoria_nos_sem_truncate
    BEFORE TRUNCATE ON auditoria_nos
    FOR EACH STATEMENT EXECUTE FUNCTION auditoria_recusa_alteracao();

REVOKE UPDATE, DELETE, TRUNCATE ON auditoria_folhas, auditoria_nos FROM CURRENT_USER;
