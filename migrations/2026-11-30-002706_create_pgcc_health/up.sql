-- The PGCC's health, shared by every process (issue 25, part 3; docs/decisions.md, "The PGCC's
-- health"). Small, global tables (not per company): a few hundred rows at most.
--
-- The outcomes of the PGCC calls, per operation and second, summed over processes: each process
-- adds its own once a second and forgets the seconds older than two windows.
CREATE TABLE pgcc_chamadas (
    operacao       text        NOT NULL
        CHECK (operacao IN ('criacao', 'status', 'revogacao', 'casos-de-uso')),
    segundo        timestamptz NOT NULL,
    respondidas    bigint      NOT NULL DEFAULT 0,
    indisponiveis  bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (operacao, segundo)
);

-- The status `GET /api/status` answers: one row, compared and set under its lock, so a change is
-- detected once whatever the processes.
CREATE TABLE pgcc_saude (
    id              boolean     PRIMARY KEY DEFAULT true CHECK (id),
    codigo          text        NOT NULL CHECK (codigo IN ('OK', 'PARTIAL_FAILURE', 'UNAVAILABLE')),
    indisponiveis   text[]      NOT NULL DEFAULT '{}',
    deteccao        timestamptz NOT NULL,
    atualizacao     timestamptz NOT NULL
);
INSERT INTO pgcc_saude (codigo, deteccao, atualizacao) VALUES ('OK', now(), now());

-- A change to or from OK, to tell every company (`pgcc.indisponivel`, `pgcc.restabelecido`):
-- written with the change, then told a batch of companies at a time in id order
-- (`proxima_empresa`: the last told), and done (`concluida_em`) when a batch comes back short.
-- `payload` is the event body, the same for every company.
CREATE TABLE pgcc_transicoes (
    id               bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tipo             text        NOT NULL CHECK (tipo IN ('pgcc.indisponivel', 'pgcc.restabelecido')),
    payload          text        NOT NULL,
    criada_em        timestamptz NOT NULL,
    proxima_empresa  uuid        NULL,
    concluida_em     timestamptz NULL
);
