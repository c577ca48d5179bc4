//! Criterion benchmarks of the domain's hot paths: `cargo bench -p consent-domain`.
//! Not run by `make test` nor CI (`cargo test` only builds benches with `--benches`/`--all-targets`,
//! and then runs each function once as a smoke test).
//!
//! - CPF and CNPJ parsing (masked and unmasked, valid and invalid): every creation and
//!   HashConsulta parses a CPF; `company create` and creations with `cnpjAnuente` parse a CNPJ.
//! - Envelope serialization: every answer is an `Envelope`; the list of 100 use cases is the
//!   largest answer of the hottest read (`GET /api/casos-de-uso`). The item type below mirrors the
//!   wire shape of the HTTP crate's DTO (the domain's `UseCase` has no wire form of its own).

use std::hint::black_box;

use chrono::{DateTime, TimeZone, Utc};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use domain::{Cnpj, Cpf, Envelope};
use serde::Serialize;
use uuid::Uuid;

fn cpf(c: &mut Criterion) {
    let mut g = c.benchmark_group("cpf_parse");
    for (name, raw) in [
        ("masked_valid", "529.982.247-25"),
        ("digits_valid", "52998224725"),
        ("check_digit_wrong", "529.982.247-26"),
        ("letters", "529.98a.247-25"),
    ] {
        g.bench_with_input(BenchmarkId::from_parameter(name), raw, |b, raw| {
            b.iter(|| Cpf::parse(black_box(raw)))
        });
    }
    g.finish();
}

fn cnpj(c: &mut Criterion) {
    let mut g = c.benchmark_group("cnpj_parse");
    for (name, raw) in [
        ("numeric_masked", "11.222.333/0001-81"),
        ("numeric_digits", "11222333000181"),
        ("alphanumeric_masked", "12.ABC.345/01DE-35"),
        ("check_digit_wrong", "11.222.333/0001-82"),
    ] {
        g.bench_with_input(BenchmarkId::from_parameter(name), raw, |b, raw| {
            b.iter(|| Cnpj::parse(black_box(raw)))
        });
    }
    g.finish();
}

/// The wire shape of one listed use case (as `GET /api/casos-de-uso` answers it).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UseCaseWire {
    id: Uuid,
    company_id: Uuid,
    link_id: Option<Uuid>,
    title: String,
    pgcc_provider_template_id: Option<String>,
    added_at: DateTime<Utc>,
    last_synced_at: Option<DateTime<Utc>>,
}

fn use_cases(n: usize) -> Vec<UseCaseWire> {
    let at = Utc.with_ymd_and_hms(2026, 11, 21, 12, 0, 0).unwrap();
    let company = Uuid::from_u128(0x1000);
    (0..n)
        .map(|i| UseCaseWire {
            id: Uuid::from_u128(0x2000 + i as u128),
            company_id: company,
            link_id: Some(Uuid::from_u128(0x3000 + (i % 4) as u128)),
            title: format!("Caso de uso número {i:03} — análise de crédito"),
            pgcc_provider_template_id: Some(format!("tpl-bench-{i:03}")),
            added_at: at,
            last_synced_at: Some(at),
        })
        .collect()
}

fn envelope(c: &mut Criterion) {
    let mut g = c.benchmark_group("envelope_serialize");
    for n in [1usize, 100] {
        let env = Envelope::ok(use_cases(n));
        let bytes = serde_json::to_vec(&env).unwrap().len();
        g.throughput(Throughput::Bytes(bytes as u64));
        g.bench_with_input(BenchmarkId::new("use_cases", n), &env, |b, env| {
            b.iter(|| serde_json::to_vec(black_box(env)).unwrap())
        });
    }
    let err = Envelope::failure("a chave de API é inválida", serde_json::Value::Null);
    g.throughput(Throughput::Elements(1));
    g.bench_function("error_no_data", |b| {
        b.iter(|| serde_json::to_vec(black_box(&err)).unwrap())
    });
    g.finish();
}

criterion_group!(benches, cpf, cnpj, envelope);
criterion_main!(benches);
