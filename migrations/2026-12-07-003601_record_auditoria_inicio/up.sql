-- When the verifiable log began (issue 36, part 2; docs/auditoria.md, "A lawful chain"): the
-- cut-off before which a consent request may have no creation entry. `audit verify` names such a
-- request (created before the log, not checked) instead of skipping it silently, and holds every
-- request created after it to a complete chain. Recorded once: the time the log's own migration
-- (2026-11-30-002501_create_auditoria) ran on this database, or now when that is not known. A
-- one-row table of the owner's; the service only reads it.
CREATE TABLE IF NOT EXISTS auditoria_inicio (
    unica boolean PRIMARY KEY DEFAULT true CHECK (unica),
    desde timestamptz NOT NULL
);

INSERT INTO auditoria_inicio (desde)
SELECT coalesce(
    (SELECT run_on::timestamptz FROM __diesel_schema_migrations WHERE version = '20261130002501'),
    now())
ON CONFLICT DO NOTHING;
