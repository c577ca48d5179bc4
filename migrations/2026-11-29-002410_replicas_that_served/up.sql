-- Only replicas that served requests divide a company's quota (issue 22, part 6): a `serve` that
-- beats but takes no traffic (out of the load balancer, draining, a canary) must not shrink every
-- company's share. Each beat says whether the replica counted a request since its last beat;
-- `atendeu_em` keeps when it last did. Nullable, no default: no rewrite; existing rows read
-- NULL (not serving) until their next beat, a fraction of a second.
ALTER TABLE replicas_ativas ADD COLUMN atendeu_em timestamptz NULL;
