-- The console's subject page (issue 38, part 2): who read this subject's data. The reads of a
-- subject are the access-log rows whose `solicitacao_ids` hold one of the subject's requests; a
-- GIN index on the array finds them in O(rows naming those requests), however many rows the
-- company's other reads wrote in the period (the `(empresa_id, em, id)` index would walk them
-- all). The company is checked on the rows found (a request's id is the company's alone).
-- Built CONCURRENTLY, outside a transaction (metadata.toml), alone in its file.
CREATE INDEX CONCURRENTLY IF NOT EXISTS acessos_dados_pessoais_solicitacoes_idx
    ON acessos_dados_pessoais USING gin (solicitacao_ids);
