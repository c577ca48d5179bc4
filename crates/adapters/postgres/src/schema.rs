// @generated automatically by Diesel CLI.

diesel::table! {
    acessos_dados_pessoais (empresa_id, id) {
        empresa_id -> Uuid,
        id -> Uuid,
        api_key_id -> Uuid,
        rota -> Text,
        solicitacao_ids -> Array<Uuid>,
        hashes -> Array<Text>,
        em -> Timestamptz,
    }
}

diesel::table! {
    agenda_sincronizacao (empresa_id) {
        empresa_id -> Uuid,
        proxima_em -> Timestamptz,
    }
}

diesel::table! {
    api_keys (id) {
        id -> Uuid,
        empresa_id -> Uuid,
        hash -> Text,
        prefixo -> Text,
        criado_em -> Timestamptz,
        revogado_em -> Nullable<Timestamptz>,
        ultimo_uso_em -> Nullable<Timestamptz>,
        escopos -> Array<Text>,
    }
}

diesel::table! {
    casos_de_uso (id) {
        id -> Uuid,
        empresa_id -> Uuid,
        vinculo_id -> Nullable<Uuid>,
        titulo -> Text,
        pgcc_provider_template_id -> Nullable<Text>,
        data_inclusao -> Timestamptz,
        data_ultima_sincronizacao_pgcc -> Nullable<Timestamptz>,
        removido_em -> Nullable<Timestamptz>,
        versao -> Int8,
        impressao -> Nullable<Text>,
    }
}

diesel::table! {
    casos_de_uso_versoes (empresa_id, caso_de_uso_id, versao) {
        empresa_id -> Uuid,
        caso_de_uso_id -> Uuid,
        versao -> Int8,
        impressao -> Nullable<Text>,
        titulo -> Text,
        vinculo_id -> Nullable<Uuid>,
        campos -> Text,
        criada_em -> Timestamptz,
    }
}

diesel::table! {
    chaves_idempotencia (empresa_id, chave) {
        empresa_id -> Uuid,
        chave -> Text,
        impressao -> Text,
        estado -> Text,
        recurso_id -> Uuid,
        dono -> Uuid,
        bloqueada_ate -> Nullable<Timestamptz>,
        status_http -> Nullable<Int4>,
        corpo -> Nullable<Bytea>,
        criado_em -> Timestamptz,
        concluida_em -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    empresas (id) {
        id -> Uuid,
        nome -> Text,
        cnpj -> Text,
        criado_em -> Timestamptz,
        sandbox_de -> Nullable<Uuid>,
    }
}

diesel::table! {
    solicitacoes_consentimento (id) {
        id -> Uuid,
        empresa_id -> Uuid,
        caso_de_uso_id -> Uuid,
        caso_de_uso_id_template -> Text,
        cpf_titular -> Text,
        tipo_titular -> Text,
        modalidade_acesso -> Text,
        cnpj_anuente -> Nullable<Text>,
        data_expiracao_consentimento -> Timestamptz,
        data_titular_respondeu_consentimento -> Nullable<Timestamptz>,
        prova_coleta -> Nullable<Text>,
        status -> Text,
        pgcc_id -> Nullable<Text>,
        criado_em -> Timestamptz,
        atualizado_em -> Timestamptz,
        hash -> Text,
        proximo_status_em -> Timestamptz,
        criacao -> Text,
        criacao_tentativa_em -> Nullable<Timestamptz>,
        criacao_nao_encontrada_em -> Nullable<Timestamptz>,
        status_desconhecido_desde -> Nullable<Timestamptz>,
        dados_apagados_em -> Nullable<Timestamptz>,
        sal_hash -> Text,
        hash_anterior -> Nullable<Text>,
        versao_caso_de_uso -> Int8,
    }
}

diesel::table! {
    solicitacoes_historico (empresa_id, id) {
        id -> Int8,
        solicitacao_id -> Uuid,
        de -> Nullable<Text>,
        para -> Text,
        em -> Timestamptz,
        causa -> Text,
        motivo -> Nullable<Text>,
        empresa_id -> Uuid,
    }
}

diesel::table! {
    webhook_entregas (id) {
        id -> Uuid,
        evento_id -> Uuid,
        webhook_url_id -> Uuid,
        empresa_id -> Uuid,
        status -> Text,
        tentativas -> Int4,
        proxima_tentativa_em -> Nullable<Timestamptz>,
        criado_em -> Timestamptz,
        atualizado_em -> Timestamptz,
        entregue_em -> Nullable<Timestamptz>,
        token_reivindicacao -> Nullable<Uuid>,
        estacionada -> Bool,
        motivo -> Nullable<Text>,
    }
}

diesel::table! {
    webhook_eventos (id) {
        id -> Uuid,
        empresa_id -> Uuid,
        tipo -> Text,
        payload -> Text,
        criado_em -> Timestamptz,
        transacao -> Int8,
        posicao -> Int8,
    }
}

diesel::table! {
    webhook_tentativas (empresa_id, id) {
        id -> Int8,
        entrega_id -> Uuid,
        em -> Timestamptz,
        status_http -> Nullable<Int4>,
        latencia_ms -> Int4,
        erro -> Nullable<Text>,
        empresa_id -> Uuid,
    }
}

diesel::table! {
    webhook_urls (id) {
        id -> Uuid,
        empresa_id -> Uuid,
        url -> Text,
        criado_em -> Timestamptz,
        removido_em -> Nullable<Timestamptz>,
        segredo_cifrado -> Text,
        segredo_anterior_cifrado -> Nullable<Text>,
        segredo_anterior_ate -> Nullable<Timestamptz>,
        desativado_em -> Nullable<Timestamptz>,
        url_normalizada -> Text,
        reativado_em -> Nullable<Timestamptz>,
        eventos -> Nullable<Array<Text>>,
        entregas_por_acertar -> Bool,
        falhando_desde -> Nullable<Timestamptz>,
        motivo_desativacao -> Nullable<Text>,
    }
}

diesel::joinable!(acessos_dados_pessoais -> empresas (empresa_id));
diesel::joinable!(agenda_sincronizacao -> empresas (empresa_id));
diesel::joinable!(api_keys -> empresas (empresa_id));
diesel::joinable!(casos_de_uso -> empresas (empresa_id));
diesel::joinable!(casos_de_uso_versoes -> empresas (empresa_id));
diesel::joinable!(chaves_idempotencia -> empresas (empresa_id));
diesel::joinable!(solicitacoes_consentimento -> casos_de_uso (caso_de_uso_id));
diesel::joinable!(solicitacoes_consentimento -> empresas (empresa_id));
diesel::joinable!(solicitacoes_historico -> solicitacoes_consentimento (solicitacao_id));
diesel::joinable!(webhook_entregas -> empresas (empresa_id));
diesel::joinable!(webhook_entregas -> webhook_eventos (evento_id));
diesel::joinable!(webhook_entregas -> webhook_urls (webhook_url_id));
diesel::joinable!(webhook_eventos -> empresas (empresa_id));
diesel::joinable!(webhook_tentativas -> webhook_entregas (entrega_id));
diesel::joinable!(webhook_urls -> empresas (empresa_id));

diesel::allow_tables_to_appear_in_same_query!(
    acessos_dados_pessoais,
    agenda_sincronizacao,
    api_keys,
    casos_de_uso,
    casos_de_uso_versoes,
    chaves_idempotencia,
    empresas,
    solicitacoes_consentimento,
    solicitacoes_historico,
    webhook_entregas,
    webhook_eventos,
    webhook_tentativas,
    webhook_urls,
);
