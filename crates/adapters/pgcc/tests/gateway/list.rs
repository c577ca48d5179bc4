use ports::PgccGateway;

use crate::helpers::{cnpj, gateway, sim, VINCULO_1, VINCULO_2};

#[test]
fn listing_flattens_every_link_into_use_cases_carrying_their_link() {
    let sim = sim();
    let use_cases = gateway(&sim).list_use_cases(&cnpj()).expect("list");

    let seen: Vec<_> = use_cases
        .iter()
        .map(|u| (u.link_id, u.template_id.as_str(), u.title.as_str()))
        .collect();
    assert_eq!(
        seen,
        vec![
            (VINCULO_1, "tpl-credito", "Análise de crédito"),
            (VINCULO_1, "tpl-conta", "Abertura de conta"),
            (VINCULO_2, "tpl-salario", "Portabilidade de salário"),
        ]
    );
}

#[test]
fn a_company_with_no_link_lists_nothing() {
    let sim = pgcc_sim::spawn_in_background(pgcc_sim::Seed {
        empresas: vec![pgcc_sim::SeedEmpresa {
            cnpj: crate::helpers::CNPJ.into(),
            vinculos: vec![],
        }],
    });
    assert!(gateway(&sim).list_use_cases(&cnpj()).unwrap().is_empty());
}

#[test]
fn a_base_url_with_a_trailing_slash_works_the_same() {
    let sim = sim();
    let gateway = crate::helpers::gateway_to(
        &format!("{}/", sim.base_url),
        None,
        std::time::Duration::from_secs(5),
    );
    assert_eq!(gateway.list_use_cases(&cnpj()).unwrap().len(), 3);
}
