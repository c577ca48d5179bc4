//! Issue 15: the simulator stays small, at most 100 MB after a million creations. Proved from
//! the structures, not the clock nor the allocator: after a million creations, the bytes the
//! store holds, counted from the capacities of what it keeps (`Store::bytes_retidos`), are under
//! 100 MB (about 55: a 40-byte record and a reference-table slot per creation, the whole bodies
//! of the last 10,000 only), and the requests past that window still answer what the contract
//! routes need. The process itself (actix, its buffers) adds about 10 MB: measured with RSS in
//! docs/performance.md.

use pgcc_sim::{Created, NovaSolicitacao, SolicitacaoStatus, Store, JANELA_DE_DETALHES};
use uuid::Uuid;

use crate::helpers::{demo_seed, CNPJ};

fn nova(n: u128) -> NovaSolicitacao {
    NovaSolicitacao {
        referencia_externa: Uuid::from_u128(n),
        cnpj_empresa: CNPJ.into(),
        vinculo_id: None,
        template_id: "tpl-consulta-credito".into(),
        cpf_titular: "52998224725".into(),
        tipo_titular: "PessoaFisica".into(),
        modalidade_acesso: "Direto".into(),
        cnpj_anuente: None,
        data_expiracao_consentimento: "2030-12-31T23:59:59Z".into(),
        status: SolicitacaoStatus::Ativo,
        data_titular_respondeu_consentimento: Some("2026-01-10T12:00:00Z".into()),
        prova_coleta: Some("assinatura:bench-prova-coleta-de-tamanho-realista".into()),
    }
}

#[test]
fn a_million_creations_hold_under_100_mb_and_the_oldest_still_answers() {
    let mut store = Store::new(demo_seed());
    let template = demo_seed().empresas[0].vinculos[0].casos_de_uso[0]
        .template_id
        .clone();
    let total: u128 = 1_000_000;
    let mut first_id = String::new();
    for n in 0..total {
        let mut body = nova(n);
        body.template_id = template.clone();
        match store.criar(body) {
            Ok(Created::New(view)) if n == 0 => first_id = view.id,
            Ok(Created::New(_)) => {}
            _ => panic!("creation {n} refused"),
        }
    }
    assert_eq!(store.len(), total as usize);

    // The whole bodies: the last JANELA_DE_DETALHES only.
    let held = store.solicitacoes();
    assert_eq!(held.len(), JANELA_DE_DETALHES);
    assert_eq!(
        held[0].dados.referencia_externa,
        Uuid::from_u128(total - JANELA_DE_DETALHES as u128)
    );

    // The bytes held: under 100 MB, under 100 bytes per creation.
    let bytes = store.bytes_retidos();
    eprintln!("{bytes} bytes held after {total} creations");
    assert!(
        bytes < 100_000_000,
        "{bytes} bytes held after {total} creations"
    );
    assert!(bytes / total as usize <= 100, "{bytes} bytes");

    // The first request, long past the window, still answers by id and by reference.
    let view = store.get(&first_id).expect("known by id");
    assert_eq!(view.referencia_externa, Uuid::from_u128(0));
    let by_ref = store.por_referencia(CNPJ, Uuid::from_u128(0)).unwrap();
    assert_eq!(by_ref.map(|v| v.id), Some(first_id.clone()));
    assert!(matches!(
        store.criar({
            let mut body = nova(0);
            body.template_id = template.clone();
            body
        }),
        Ok(Created::Existing(v)) if v.id == first_id
    ));
}
