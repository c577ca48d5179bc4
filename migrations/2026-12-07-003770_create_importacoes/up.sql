-- Bulk import (issue 37, parts 1 and 2; docs/imports.md).
--
-- `importacoes`: one uploaded file and its counts. `importacao_linhas`: its valid lines, staged
-- while the file is read and registered afterwards by the import worker, one claim (a lease in
-- `reservada_ate`) at a time; `dados` holds the line's fields until it is settled, then is
-- cleared (the consent request keeps them). `importacao_erros`: every broken rule by line and
-- field (never a value). Keyed by company first like every tenant table (docs/scaling.md).
-- Written by the runtime role: `consent_api_conceder_acesso` grants INSERT, UPDATE and DELETE on
-- every table it does not protect, these included.
CREATE TABLE importacoes (
    empresa_id    uuid        NOT NULL REFERENCES empresas (id),
    id            uuid        NOT NULL,
    status        text        NOT NULL
        CHECK (status IN ('validando', 'registrando', 'concluida', 'cancelada')),
    linhas        bigint      NOT NULL DEFAULT 0,
    validas       bigint      NOT NULL DEFAULT 0,
    registradas   bigint      NOT NULL DEFAULT 0,
    falhas        bigint      NOT NULL DEFAULT 0,
    criada_em     timestamptz NOT NULL,
    atualizada_em timestamptz NOT NULL,
    terminada_em  timestamptz NULL,
    PRIMARY KEY (empresa_id, id)
);

-- the worker's round: the companies with an import registering
CREATE INDEX importacoes_registrando ON importacoes (empresa_id) WHERE status = 'registrando';

CREATE TABLE importacao_linhas (
    empresa_id     uuid        NOT NULL,
    importacao_id  uuid        NOT NULL,
    linha          bigint      NOT NULL,
    id_externo     text        NOT NULL,
    origem         text        NOT NULL,
    -- the consent request's id, fixed at staging: the PGCC's `referenciaExterna`, so a line
    -- claimed again after a crash is the same creation, never a second one
    solicitacao_id uuid        NOT NULL,
    variante       text        NOT NULL CHECK (variante IN ('ativo', 'pendente')),
    pgcc_id        text        NULL,
    dados          jsonb       NULL,
    estado         text        NOT NULL DEFAULT 'pendente'
        CHECK (estado IN ('pendente', 'registrada', 'falhou', 'cancelada')),
    reservada_ate  timestamptz NULL,
    PRIMARY KEY (empresa_id, importacao_id, linha),
    FOREIGN KEY (empresa_id, importacao_id) REFERENCES importacoes (empresa_id, id) ON DELETE CASCADE
);

-- `idExterno` is the line's idempotency key: unique per company, across every import
CREATE UNIQUE INDEX importacao_linhas_id_externo ON importacao_linhas (empresa_id, id_externo);
-- the claim: a company's next pending line, in file order
CREATE INDEX importacao_linhas_pendentes ON importacao_linhas (empresa_id, importacao_id, linha)
    WHERE estado = 'pendente';

CREATE TABLE importacao_erros (
    empresa_id    uuid   NOT NULL,
    importacao_id uuid   NOT NULL,
    linha         bigint NOT NULL,
    ordem         bigint NOT NULL,
    campo         text   NOT NULL,
    mensagem      text   NOT NULL,
    PRIMARY KEY (empresa_id, importacao_id, linha, ordem),
    FOREIGN KEY (empresa_id, importacao_id) REFERENCES importacoes (empresa_id, id) ON DELETE CASCADE
);

-- The event of an import's end: `importacao.concluida`. Added NOT VALID (no scan under the
-- ACCESS EXCLUSIVE lock of the ALTER); the next migration validates. Each check is dropped only
-- to be added back wider in the same transaction.
-- squawk-ignore ban-drop-constraint
ALTER TABLE webhook_eventos DROP CONSTRAINT webhook_eventos_tipo_check;
ALTER TABLE webhook_eventos
    ADD CONSTRAINT webhook_eventos_tipo_check
    CHECK (tipo IN ('solicitacao.criada', 'solicitacao.ativada', 'solicitacao.recusada',
                    'solicitacao.expirada', 'solicitacao.revogada',
                    'casos-de-uso.sincronizados', 'casos-de-uso.alterado',
                    'pgcc.indisponivel', 'pgcc.restabelecido', 'webhook-url.desativada',
                    'auditoria.incidente', 'auditoria.checkpoint', 'importacao.concluida',
                    'webhook.teste')) NOT VALID;

-- squawk-ignore ban-drop-constraint
ALTER TABLE webhook_urls DROP CONSTRAINT webhook_urls_eventos_check;
ALTER TABLE webhook_urls
    ADD CONSTRAINT webhook_urls_eventos_check
    CHECK (eventos IS NULL OR (cardinality(eventos) > 0 AND eventos <@ ARRAY[
        'solicitacao.criada', 'solicitacao.ativada', 'solicitacao.recusada',
        'solicitacao.expirada', 'solicitacao.revogada', 'casos-de-uso.sincronizados',
        'casos-de-uso.alterado', 'pgcc.indisponivel', 'pgcc.restabelecido',
        'webhook-url.desativada', 'auditoria.incidente', 'auditoria.checkpoint',
        'importacao.concluida']::text[])) NOT VALID;
