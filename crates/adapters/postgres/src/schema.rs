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
        pessoa_sub -> Nullable<Text>,
        pessoa_email -> Nullable<Text>,
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
    auditoria_chaves (kid) {
        kid -> Text,
        chave_publica -> Bytea,
        semente -> Nullable<Bytea>,
        criada_em -> Timestamptz,
        ambiente -> Text,
    }
}

diesel::table! {
    auditoria_checkpoints (empresa_id, tamanho) {
        empresa_id -> Uuid,
        tamanho -> Int8,
        raiz -> Bytea,
        ate_transacao -> Int8,
        ate_posicao -> Int8,
        nota -> Text,
        kid -> Text,
        criado_em -> Timestamptz,
    }
}

diesel::table! {
    auditoria_entradas (empresa_id, transacao, posicao) {
        empresa_id -> Uuid,
        transacao -> Int8,
        posicao -> Int8,
        solicitacao_id -> Uuid,
        entrada -> Bytea,
        hash_folha -> Bytea,
    }
}

diesel::table! {
    auditoria_folhas (empresa_id, indice) {
        empresa_id -> Uuid,
        indice -> Int8,
        transacao -> Int8,
        posicao -> Int8,
    }
}

diesel::table! {
    auditoria_inicio (unica) {
        unica -> Bool,
        desde -> Timestamptz,
    }
}

diesel::table! {
    auditoria_nos (empresa_id, nivel, indice) {
        empresa_id -> Uuid,
        nivel -> Int2,
        indice -> Int8,
        hash -> Bytea,
    }
}

diesel::table! {
    casos_de_uso (empresa_id, id) {
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
    casos_de_uso_anotacoes (empresa_id, caso_de_uso_id) {
        empresa_id -> Uuid,
        caso_de_uso_id -> Uuid,
        base_legal_artigo -> Int8,
        base_legal_hipotese -> Text,
        categorias_dados -> Text,
        url_aviso -> Text,
        idioma_aviso -> Text,
        atualizado_em -> Timestamptz,
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
    console_buscas (empresa_id, token_hash) {
        empresa_id -> Uuid,
        token_hash -> Bytea,
        sessao_hash -> Bytea,
        cpf_cifrado -> Bytea,
        expira_em -> Timestamptz,
    }
}

diesel::table! {
    console_oidc_pendentes (empresa_id, estado_hash) {
        empresa_id -> Uuid,
        estado_hash -> Bytea,
        nonce -> Text,
        verificador -> Text,
        criado_em -> Timestamptz,
    }
}

diesel::table! {
    console_sessoes (empresa_id, id_hash) {
        empresa_id -> Uuid,
        id_hash -> Bytea,
        chave_hash -> Nullable<Text>,
        csrf -> Text,
        ultimo_uso -> Timestamptz,
        criada_em -> Timestamptz,
        sessao_id -> Nullable<Uuid>,
        pessoa_sub -> Nullable<Text>,
        pessoa_email -> Nullable<Text>,
        escopos -> Nullable<Text>,
        expira_em -> Nullable<Timestamptz>,
        id_token_cifrado -> Nullable<Text>,
    }
}

diesel::table! {
    empresas (id) {
        id -> Uuid,
        nome -> Text,
        cnpj -> Text,
        criado_em -> Timestamptz,
        sandbox_de -> Nullable<Uuid>,
        controlador_nome -> Nullable<Text>,
        controlador_endereco -> Nullable<Text>,
        controlador_contato_dpo -> Nullable<Text>,
    }
}

diesel::table! {
    empresas_oidc (empresa_id) {
        empresa_id -> Uuid,
        emissor -> Text,
        client_id -> Text,
        client_secret_cifrado -> Text,
        claim_papeis -> Text,
        atualizado_em -> Timestamptz,
    }
}

diesel::table! {
    evidencias_arquivos (empresa_id, sha256) {
        empresa_id -> Uuid,
        sha256 -> Text,
        tamanho -> Int8,
        tipo -> Text,
        armazenamento -> Text,
        objeto_id -> Uuid,
        criado_em -> Timestamptz,
        bytes_apagados_em -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    evidencias_partes (empresa_id, objeto_id, indice) {
        empresa_id -> Uuid,
        objeto_id -> Uuid,
        indice -> Int8,
        bytes -> Bytea,
        criado_em -> Timestamptz,
    }
}

diesel::table! {
    importacao_erros (empresa_id, importacao_id, linha, ordem) {
        empresa_id -> Uuid,
        importacao_id -> Uuid,
        linha -> Int8,
        ordem -> Int8,
        campo -> Text,
        mensagem -> Text,
    }
}

diesel::table! {
    importacao_linhas (empresa_id, importacao_id, linha) {
        empresa_id -> Uuid,
        importacao_id -> Uuid,
        linha -> Int8,
        id_externo -> Text,
        origem -> Text,
        solicitacao_id -> Uuid,
        variante -> Text,
        pgcc_id -> Nullable<Text>,
        dados -> Nullable<Jsonb>,
        estado -> Text,
        reservada_ate -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    importacoes (empresa_id, id) {
        empresa_id -> Uuid,
        id -> Uuid,
        status -> Text,
        linhas -> Int8,
        validas -> Int8,
        registradas -> Int8,
        falhas -> Int8,
        criada_em -> Timestamptz,
        atualizada_em -> Timestamptz,
        terminada_em -> Nullable<Timestamptz>,
        linhas_a_limpar -> Bool,
    }
}

diesel::table! {
    orcamento_pgcc (nome) {
        nome -> Text,
        fichas -> Float8,
        atualizado_em -> Timestamptz,
    }
}

diesel::table! {
    pgcc_chamadas (operacao, segundo) {
        operacao -> Text,
        segundo -> Timestamptz,
        respondidas -> Int8,
        indisponiveis -> Int8,
    }
}

diesel::table! {
    pgcc_saude (id) {
        id -> Bool,
        codigo -> Text,
        indisponiveis -> Array<Nullable<Text>>,
        deteccao -> Timestamptz,
        atualizacao -> Timestamptz,
    }
}

diesel::table! {
    pgcc_transicoes (id) {
        id -> Int8,
        tipo -> Text,
        payload -> Text,
        criada_em -> Timestamptz,
        proxima_empresa -> Nullable<Uuid>,
        concluida_em -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    preenchimentos_retroativos (nome) {
        nome -> Text,
        cursor -> Nullable<Text>,
        linhas -> Int8,
        registrado_em -> Timestamptz,
        concluido_em -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    replicas_ativas (id) {
        id -> Uuid,
        visto_em -> Timestamptz,
        atendeu_em -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    solicitacoes_arquivos (empresa_id, solicitacao_id, sha256) {
        empresa_id -> Uuid,
        solicitacao_id -> Uuid,
        sha256 -> Text,
        vinculado_em -> Timestamptz,
    }
}

diesel::table! {
    solicitacoes_consentimento (empresa_id, id) {
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
        pgcc_nao_encontrada_em -> Nullable<Timestamptz>,
        incidente_integridade_em -> Nullable<Timestamptz>,
        origem -> Nullable<Text>,
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
    varreduras_status (empresa_id, varredura) {
        empresa_id -> Uuid,
        varredura -> Text,
        periodo_segundos -> Int8,
        proxima_em -> Timestamptz,
        iniciada_em -> Nullable<Timestamptz>,
        apos_id -> Nullable<Uuid>,
        arrendada_ate -> Nullable<Timestamptz>,
        ate_id -> Nullable<Uuid>,
        fim -> Bool,
    }
}

diesel::table! {
    verificacoes_status (empresa_id, solicitacao_id) {
        empresa_id -> Uuid,
        solicitacao_id -> Uuid,
        proxima_em -> Timestamptz,
        intervalo_segundos -> Int8,
        varredura -> Nullable<Text>,
        pgcc_id -> Nullable<Text>,
    }
}

diesel::table! {
    webhook_entregas (empresa_id, id) {
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
        tipo_evento -> Nullable<Text>,
    }
}

diesel::table! {
    webhook_eventos (empresa_id, id) {
        id -> Uuid,
        empresa_id -> Uuid,
        tipo -> Text,
        payload -> Text,
        criado_em -> Timestamptz,
        transacao -> Int8,
        posicao -> Int8,
        sem_entregas -> Bool,
        traceparent -> Nullable<Text>,
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
        corpo_resposta -> Nullable<Text>,
    }
}

diesel::table! {
    webhook_urls (empresa_id, id) {
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
diesel::joinable!(auditoria_checkpoints -> empresas (empresa_id));
diesel::joinable!(auditoria_entradas -> empresas (empresa_id));
diesel::joinable!(auditoria_folhas -> empresas (empresa_id));
diesel::joinable!(auditoria_nos -> empresas (empresa_id));
diesel::joinable!(casos_de_uso -> empresas (empresa_id));
diesel::joinable!(casos_de_uso_anotacoes -> empresas (empresa_id));
diesel::joinable!(casos_de_uso_versoes -> empresas (empresa_id));
diesel::joinable!(chaves_idempotencia -> empresas (empresa_id));
diesel::joinable!(console_oidc_pendentes -> empresas (empresa_id));
diesel::joinable!(console_sessoes -> empresas (empresa_id));
diesel::joinable!(empresas_oidc -> empresas (empresa_id));
diesel::joinable!(evidencias_arquivos -> empresas (empresa_id));
diesel::joinable!(evidencias_partes -> empresas (empresa_id));
diesel::joinable!(importacoes -> empresas (empresa_id));
diesel::joinable!(solicitacoes_consentimento -> empresas (empresa_id));
diesel::joinable!(webhook_entregas -> empresas (empresa_id));
diesel::joinable!(webhook_eventos -> empresas (empresa_id));
diesel::joinable!(webhook_urls -> empresas (empresa_id));

diesel::allow_tables_to_appear_in_same_query!(
    acessos_dados_pessoais,
    agenda_sincronizacao,
    api_keys,
    auditoria_chaves,
    auditoria_checkpoints,
    auditoria_entradas,
    auditoria_folhas,
    auditoria_inicio,
    auditoria_nos,
    casos_de_uso,
    casos_de_uso_anotacoes,
    casos_de_uso_versoes,
    chaves_idempotencia,
    console_buscas,
    console_oidc_pendentes,
    console_sessoes,
    empresas,
    empresas_oidc,
    evidencias_arquivos,
    evidencias_partes,
    importacao_erros,
    importacao_linhas,
    importacoes,
    orcamento_pgcc,
    pgcc_chamadas,
    pgcc_saude,
    pgcc_transicoes,
    preenchimentos_retroativos,
    replicas_ativas,
    solicitacoes_arquivos,
    solicitacoes_consentimento,
    solicitacoes_historico,
    varreduras_status,
    verificacoes_status,
    webhook_entregas,
    webhook_eventos,
    webhook_tentativas,
    webhook_urls,
);
