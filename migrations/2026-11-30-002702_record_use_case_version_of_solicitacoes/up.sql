-- The version of its use case a consent request was created under (issue 25, part 1;
-- `versaoCasoDeUso`). A constant default is stored in the catalog (PostgreSQL 11+): no rewrite of
-- this, the biggest table. Every request stored before this migration reads 1, which is right:
-- every use case is at its version 1 when this runs (previous migration), and none changes before
-- the code that records versions runs.
ALTER TABLE solicitacoes_consentimento ADD COLUMN versao_caso_de_uso bigint NOT NULL DEFAULT 1;
