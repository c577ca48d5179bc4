-- Keys with roles (issue 24, part 6): what a key may do. A route is allowed when the key holds any
-- scope that grants it (crates/delivery/http/src/routes/grants.rs). Existing keys, and keys issued
-- without --escopos, get every scope but `auditor`: what every key could do before. A constant
-- default: PostgreSQL stores it in the catalog, no row is rewritten.
ALTER TABLE api_keys
    ADD COLUMN escopos text[] NOT NULL DEFAULT '{integracao,consulta,webhooks}';

-- Only known scope names, and at least one. NOT VALID: checked for new and changed rows at once;
-- the rows already there are checked by the next migration without blocking writes.
ALTER TABLE api_keys
    ADD CONSTRAINT api_keys_escopos_check
    CHECK (cardinality(escopos) > 0
           AND escopos <@ ARRAY['integracao', 'consulta', 'auditor', 'webhooks']::text[]) NOT VALID;
