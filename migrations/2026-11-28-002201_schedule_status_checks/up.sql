-- Status freshness by policy, within a PGCC budget (issue 21, part 1). When each open request is
-- checked next lives in a narrow table of its own: a check that finds no change rewrites this
-- small row (two small indexes), never the wide consent row with its seven secondary indexes.
-- A request is checked at once after its creation, then by the policy (docs/lifecycle.md); the
-- row goes when the request reaches a final status (lazily: its next claim finds it final and
-- deletes it without asking the PGCC).
CREATE TABLE verificacoes_status (
    empresa_id         uuid        NOT NULL,
    solicitacao_id     uuid        NOT NULL
        REFERENCES solicitacoes_consentimento (id) ON DELETE CASCADE,
    -- due time; a claimed check is moved to the end of its lease
    proxima_em         timestamptz NOT NULL,
    -- the interval its last check scheduled (0: never checked): a pending request's grows
    intervalo_segundos bigint      NOT NULL DEFAULT 0 CHECK (intervalo_segundos >= 0),
    PRIMARY KEY (empresa_id, solicitacao_id)
);

-- Per company, oldest due first: the claim is one index range of one company; finding the
-- companies with due checks is one probe per company.
CREATE INDEX verificacoes_status_devidas_idx ON verificacoes_status (empresa_id, proxima_em);

-- The PGCC calls every process shares: a token bucket per kind of call (`status`), refilled at
-- the configured rate from `atualizado_em` (the application's clock, never now() in the SET).
CREATE TABLE orcamento_pgcc (
    nome          text             PRIMARY KEY,
    fichas        double precision NOT NULL,
    atualizado_em timestamptz      NOT NULL
);

-- The requests open before this migration get their schedule from the `verificacoes_status`
-- backfill (crates/adapters/postgres/src/backfills.rs): keyset batches after the migration,
-- never in its transaction. Until then they are not checked; new ones are from their creation.
INSERT INTO preenchimentos_retroativos (nome) VALUES ('verificacoes_status');
