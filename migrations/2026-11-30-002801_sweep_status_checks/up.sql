-- Status checks that cost a read, not a write (issue 21, part 1). A request in its steady rhythm
-- (`ativo`, or `pendente` once its interval reached `pending_recheck_max_seconds`) is no longer
-- scheduled row by row: it joins its company's sweep of that lane (`varredura`: `pendente` or
-- `ativo`), which reads the lane in id order, a batch per PGCC call, one pass per period. A
-- check that finds no change writes nothing; only the sweep's own row moves, once per batch.
-- Its schedule row stays (the sweep reads the lane from it), due never (`proxima_em` infinity).
--
-- A nullable column without a default: catalog only, no rewrite. Existing rows join a lane at
-- their next check (every open request is checked within one period of the policy), so no
-- backfill is needed.
ALTER TABLE verificacoes_status ADD COLUMN varredura text;

-- One row per company and lane: where the pass stands (`apos_id`: after this request; NULL: the
-- pass starts from the first), when the pass is due (`proxima_em`) and started, and the batch
-- handed out (`arrendada_ate`: its lease, also the token that hands it back; `ate_id`: its last
-- request; `fim`: it was the pass's last batch).
CREATE TABLE varreduras_status (
    empresa_id       uuid        NOT NULL,
    varredura        text        NOT NULL,
    periodo_segundos bigint      NOT NULL,
    proxima_em       timestamptz NOT NULL,
    iniciada_em      timestamptz,
    apos_id          uuid,
    arrendada_ate    timestamptz,
    ate_id           uuid,
    fim              boolean     NOT NULL DEFAULT false,
    PRIMARY KEY (empresa_id, varredura)
);
