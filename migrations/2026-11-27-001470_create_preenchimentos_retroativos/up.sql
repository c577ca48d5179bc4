-- Backfills (preenchimentos retroativos): work on existing rows that a migration must not do in
-- its own transaction (a long UPDATE holds its row locks, and any ACCESS EXCLUSIVE lock taken
-- before it, until the end). A migration registers its backfill here by name; `consent-api
-- migrate` (and, in the background, `serve`) then runs it to completion in keyset batches, one
-- short transaction per batch (crates/adapters/postgres/src/backfills.rs, docs/operations.md,
-- "Migrate"). `cursor` is the last key done (NULL: none yet), so a run stopped half-way goes on
-- where it stopped.
CREATE TABLE preenchimentos_retroativos (
    nome          text        PRIMARY KEY,
    cursor        text        NULL,
    linhas        bigint      NOT NULL DEFAULT 0,
    registrado_em timestamptz NOT NULL DEFAULT now(),
    concluido_em  timestamptz NULL
);
