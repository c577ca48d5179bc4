-- The console's CPF searches (issue 38, part 2; docs/console.md, "The subject's page"): the token
-- of `/console/titulares/<token>` was kept in the memory of the process that made it, so a reload
-- served by another API replica showed the search form again. Kept here, every replica finds it.
--
-- A row holds the SHA-256 of the token (the table never holds a live token), the company and the
-- SHA-256 of the session that searched (the session's own key in `console_sessoes`: a search ends
-- with its session, signed out or idle), the expiry (`console.search_seconds` after the search),
-- and the CPF encrypted (AES-256-GCM) under a key derived from the token itself: without the URL,
-- neither a dump nor the service's configuration gives the CPF back. Written and purged by the
-- runtime role (`consent_api_conceder_acesso` grants it every table it does not protect): the
-- worker deletes the expired ones, company by company.
CREATE TABLE console_buscas (
    empresa_id  uuid        NOT NULL,
    token_hash  bytea       NOT NULL,
    sessao_hash bytea       NOT NULL,
    cpf_cifrado bytea       NOT NULL,
    expira_em   timestamptz NOT NULL,
    PRIMARY KEY (empresa_id, token_hash),
    FOREIGN KEY (empresa_id, sessao_hash)
        REFERENCES console_sessoes (empresa_id, id_hash) ON DELETE CASCADE
);
-- the session's searches, deleted with it (the foreign key's cascade)
CREATE INDEX console_buscas_sessao_idx ON console_buscas (empresa_id, sessao_hash);
-- the worker's purge of the expired ones, oldest first, one company at a time
CREATE INDEX console_buscas_expira_idx ON console_buscas (empresa_id, expira_em);
