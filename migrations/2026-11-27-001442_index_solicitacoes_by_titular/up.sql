-- The subject export (POST /api/titulares/consentimentos) reads one company's requests of one
-- subject, oldest first, a page at a time: without this index it would read every request of
-- the company. Confirmed rows only, as every read.
CREATE INDEX solicitacoes_consentimento_titular_idx
    ON solicitacoes_consentimento (empresa_id, cpf_titular, criado_em, id)
    WHERE criacao = 'confirmada';
