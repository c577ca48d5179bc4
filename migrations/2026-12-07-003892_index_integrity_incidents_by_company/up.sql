-- The console's home counts (issue 38, part 6) and `audit verify`'s list of a company's integrity
-- incidents (issue 36), oldest first: one range of this index instead of the company's requests.
-- Few rows carry an incident, so the index is small. Built CONCURRENTLY, outside a transaction
-- (metadata.toml), alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS solicitacoes_consentimento_empresa_incidentes_idx
    ON solicitacoes_consentimento (empresa_id, incidente_integridade_em, id)
    WHERE incidente_integridade_em IS NOT NULL;
