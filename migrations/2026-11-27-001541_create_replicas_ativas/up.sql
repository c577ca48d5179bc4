-- The `serve` processes alive now: each one writes its row every `rate_limit.replica_heartbeat_ms`
-- and counts the rows seen recently, so that each takes `1 / live replicas` of every company's
-- rate limit and the quota holds across replicas. Times are the database's (`now()`), so the
-- replicas' clocks never matter. A process that stops deletes its row; one that dies leaves a
-- row that stops counting after three heartbeats and is deleted by the others later.
CREATE TABLE replicas_ativas (
    id       uuid        PRIMARY KEY,
    visto_em timestamptz NOT NULL
);
