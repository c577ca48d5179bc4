-- The sandbox (issue 25, part 2; docs/decisions.md, "The sandbox"): a company's sandbox is a
-- company of its own, so every per-company scope keeps its data apart; `sandbox_de` names the
-- real company it belongs to (NULL: a real company). Every PGCC call made for a company with
-- `sandbox_de` set goes to the PGCC simulated in process, never to the configured one. Nullable,
-- no default: the catalog changes, no row is rewritten.
ALTER TABLE empresas ADD COLUMN sandbox_de uuid NULL;

-- NOT VALID: checked for new and changed rows at once (every existing row is NULL); the next
-- migration validates without blocking writes.
ALTER TABLE empresas
    ADD CONSTRAINT empresas_sandbox_de_fkey
    FOREIGN KEY (sandbox_de) REFERENCES empresas (id) NOT VALID;
