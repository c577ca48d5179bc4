-- NOTE (issue 21): this is the status claim as it was before the schedule moved to
-- verificacoes_status; kept so make bench can still show what the old claim cost. The worker's
-- cost now is measured by scripts/bench/status_work.sh (docs/scaling.md).
-- The status worker's claim (CLAIM_FOR_STATUS_CHECK in
-- crates/adapters/postgres/src/consent_request_repository.rs, same text, prepared): lock up to
-- :lim due open requests and push their next check. Every open request is claimed once per
-- `workers.status_poll_seconds` (30 s by default), so rows/s here = open requests / 30 s that one
-- PostgreSQL can keep checked. With -D now=... -D next=... both far ahead and next < now, the
-- claimed rows stay due (the oldest first), so every transaction claims :lim rows.
\set lim 200
UPDATE solicitacoes_consentimento
SET proximo_status_em = :next
WHERE id IN (
    SELECT id FROM solicitacoes_consentimento
    WHERE status IN ('pendente', 'ativo') AND proximo_status_em <= :now
      AND criacao = 'confirmada'
    ORDER BY proximo_status_em
    LIMIT :lim
    FOR UPDATE SKIP LOCKED
)
RETURNING id, empresa_id, pgcc_id, status, status_desconhecido_desde;
