-- A hash that does not give the CPF away (issue 14). The canonical content of a request's hash
-- gains `sal`, 32 random hex digits of its own: without the salt, a masked CPF (1,000 candidates)
-- and the hash published beside it no longer confirm the CPF in 1,000 tries. Every stored hash
-- is recomputed here with a fresh salt, byte for byte as crates/application/src/consent_hash.rs
-- writes the canonical content (a test holds the two together); the unsalted hash a company may
-- have kept moves to `hash_anterior`, which `GET /api/hash-consulta/{hash}` still finds and no
-- answer shows. Rows whose personal data was blanked (`hash` = 'apagado:<id>') keep their hash.
-- The default draws a salt per row (a volatile default is evaluated for each existing row);
-- the service always writes its own.
ALTER TABLE solicitacoes_consentimento
    ADD COLUMN sal_hash text NOT NULL DEFAULT replace(gen_random_uuid()::text, '-', ''),
    ADD COLUMN hash_anterior text;

UPDATE solicitacoes_consentimento
SET hash_anterior = hash,
    hash = encode(sha256(convert_to(
        '{"casoDeUsoIdTemplate":' || to_json(caso_de_uso_id_template)::text
        || ',"cnpjAnuente":' || coalesce(to_json(cnpj_anuente)::text, 'null')
        || ',"cpfTitular":' || to_json(cpf_titular)::text
        || ',"criadoEm":"' || to_char(criado_em AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '"'
        || ',"dataExpiracaoConsentimento":"'
            || to_char(data_expiracao_consentimento AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') || '"'
        || ',"dataTitularRespondeuConsentimento":' || coalesce('"'
            || to_char(data_titular_respondeu_consentimento AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
            || '"', 'null')
        || ',"empresaId":"' || empresa_id::text || '"'
        || ',"id":"' || id::text || '"'
        || ',"modalidadeAcesso":' || to_json(modalidade_acesso)::text
        || ',"provaColeta":' || coalesce(to_json(prova_coleta)::text, 'null')
        || ',"sal":"' || sal_hash || '"'
        || ',"tipoTitular":' || to_json(tipo_titular)::text
        || '}', 'UTF8')), 'hex')
WHERE hash ~ '^[0-9a-f]{64}$';

ALTER TABLE solicitacoes_consentimento
    ADD CONSTRAINT solicitacoes_consentimento_sal_hash_check CHECK (sal_hash ~ '^[0-9a-f]{32}$');

CREATE INDEX solicitacoes_consentimento_hash_anterior_idx
    ON solicitacoes_consentimento (empresa_id, hash_anterior)
    WHERE hash_anterior IS NOT NULL;
