-- Creation in two steps, so that no consent is lost or duplicated between the PGCC and us: our
-- row is stored first ('em_andamento', no PGCC id yet), its id sent as the PGCC's
-- referenciaExterna; the PGCC's answer completes it ('confirmada', with the PGCC id, its history
-- and its solicitacao.criada event in the same transaction) or cancels it ('cancelada': the PGCC
-- refused it or does not hold it). A row left 'em_andamento' (the PGCC timed out, failed, or our
-- process died) is settled by the reconciler, which asks the PGCC by external reference.
-- Only 'confirmada' rows are consents: every read, list, HashConsulta and worker ignores the
-- others. Rows stored before this migration were created on the PGCC first: 'confirmada'.
ALTER TABLE solicitacoes_consentimento
    ADD COLUMN criacao text NOT NULL DEFAULT 'confirmada';
ALTER TABLE solicitacoes_consentimento
    ADD CONSTRAINT solicitacoes_consentimento_criacao_check
    CHECK (criacao IN ('em_andamento', 'confirmada', 'cancelada'));

-- When the creation was last attempted (by a request) or claimed (by the reconciler): the
-- reconciler looks at an 'em_andamento' row only once this is older than its grace, and cancels
-- it only if nobody attempted it again since its claim (compare-and-set on this instant).
ALTER TABLE solicitacoes_consentimento ADD COLUMN criacao_tentativa_em timestamptz NULL;
ALTER TABLE solicitacoes_consentimento
    ADD CONSTRAINT solicitacoes_consentimento_criacao_tentativa_check
    CHECK (criacao <> 'em_andamento' OR criacao_tentativa_em IS NOT NULL);

-- The PGCC id exists once the PGCC holds the request: exactly for 'confirmada' rows. The unique
-- key (empresa_id, pgcc_id) stays: NULLs are distinct, so rows without a PGCC id never collide.
ALTER TABLE solicitacoes_consentimento ALTER COLUMN pgcc_id DROP NOT NULL;
ALTER TABLE solicitacoes_consentimento
    ADD CONSTRAINT solicitacoes_consentimento_pgcc_id_criacao_check
    CHECK ((criacao = 'confirmada') = (pgcc_id IS NOT NULL));

-- "Unfinished creations whose last attempt is older than the grace, oldest first" (the
-- reconciler's claim).
CREATE INDEX solicitacoes_consentimento_criacao_pendente_idx
    ON solicitacoes_consentimento (criacao_tentativa_em)
    WHERE criacao = 'em_andamento';
