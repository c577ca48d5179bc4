//! `list`: the company's requests by (criado_em, id), each filter alone and combined, the
//! effective status at `now`, and keyset pages.

mod common;

use std::collections::HashSet;

use chrono::{DateTime, TimeDelta, Utc};
use common::consent::{cpf, tenant, Spec, Tenant, CPF, OTHER_CPF};
use common::{at, pool};
use diesel::RunQueryDsl;
use domain::{ConsentRequest, ConsentStatus};
use ports::{ConsentFilter, ConsentRequestRepository, ListCursor};
use postgres_adapter::PgConsentRequestRepository;
use testkit::TestDb;
use uuid::Uuid;

/// The instant the lists are taken at.
fn now() -> DateTime<Utc> {
    at("2026-06-01T12:00:00Z")
}

fn minutes(n: i64) -> TimeDelta {
    TimeDelta::minutes(n)
}

fn ids(requests: &[ConsentRequest]) -> Vec<Uuid> {
    requests.iter().map(|r| r.id).collect()
}

/// The ids of the requests, in the order of the list.
fn expected(requests: &[&ConsentRequest]) -> Vec<Uuid> {
    let mut sorted: Vec<&ConsentRequest> = requests.to_vec();
    sorted.sort_by_key(|r| (r.created_at, r.id));
    sorted.iter().map(|r| r.id).collect()
}

/// Fields drop in order: the pool before its database.
struct Listing {
    repo: PgConsentRequestRepository,
    acme: Tenant,
    db: TestDb,
}

impl Listing {
    fn new() -> Listing {
        let db = TestDb::new();
        let pool = pool(&db);
        let acme = tenant(&pool, "ACME", "112223330001");
        Listing {
            repo: PgConsentRequestRepository::new(pool),
            acme,
            db,
        }
    }

    fn create(&self, spec: Spec) -> ConsentRequest {
        self.acme.create(&self.repo, &spec)
    }

    fn list(&self, filter: &ConsentFilter) -> Vec<Uuid> {
        ids(&self
            .repo
            .list(self.acme.company.id, filter, None, 500, now())
            .unwrap())
    }
}

#[test]
fn without_filters_the_list_is_the_companys_requests_by_creation_then_id() {
    let listing = Listing::new();
    let globex = tenant(&common::pool(&listing.db), "Globex", "445556660001");
    let t = at("2026-05-01T12:00:00Z");
    let late = listing.create(Spec::new(t + minutes(2)));
    let tied_a = listing.create(Spec::new(t));
    let tied_b = listing.create(Spec::new(t));
    let early = listing.create(Spec::new(t - minutes(2)));
    globex.create(&listing.repo, &Spec::new(t));

    let listed = listing
        .repo
        .list(
            listing.acme.company.id,
            &ConsentFilter::default(),
            None,
            50,
            now(),
        )
        .unwrap();

    assert_eq!(ids(&listed), expected(&[&late, &tied_a, &tied_b, &early]));
    assert_eq!(listed[0], early, "the rows are converted whole");
}

#[test]
fn each_filter_alone() {
    let listing = Listing::new();
    let t = at("2026-05-01T12:00:00Z");
    let base = listing.create(Spec::new(t));
    let tpl2 = listing.create(Spec::new(t + minutes(1)).template("tpl-2"));
    let other_cpf = listing.create(Spec::new(t + minutes(2)).cpf(OTHER_CPF));
    let refused = listing.create(Spec::new(t + minutes(3)).status(ConsentStatus::Refused));
    let all = [&base, &tpl2, &other_cpf, &refused];

    let by_template = ConsentFilter {
        template_id: Some("tpl-2".to_owned()),
        ..ConsentFilter::default()
    };
    assert_eq!(listing.list(&by_template), [tpl2.id]);

    let by_cpf = ConsentFilter {
        subject_cpf: Some(cpf(OTHER_CPF)),
        ..ConsentFilter::default()
    };
    assert_eq!(listing.list(&by_cpf), [other_cpf.id]);

    let by_status = ConsentFilter {
        status: Some(ConsentStatus::Refused),
        ..ConsentFilter::default()
    };
    assert_eq!(listing.list(&by_status), [refused.id]);

    // criado_de is inclusive.
    let from = ConsentFilter {
        created_from: Some(t + minutes(2)),
        ..ConsentFilter::default()
    };
    assert_eq!(listing.list(&from), [other_cpf.id, refused.id]);

    // criado_ate is exclusive.
    let until = ConsentFilter {
        created_until: Some(t + minutes(2)),
        ..ConsentFilter::default()
    };
    assert_eq!(listing.list(&until), [base.id, tpl2.id]);

    assert_eq!(listing.list(&ConsentFilter::default()), expected(&all));
}

#[test]
fn filters_combine_with_and() {
    let listing = Listing::new();
    let t = at("2026-05-01T12:00:00Z");
    let spec = || {
        Spec::new(t + minutes(5))
            .template("tpl-2")
            .cpf(OTHER_CPF)
            .status(ConsentStatus::Active)
    };
    let hit = listing.create(spec());
    let hit_too = listing.create(spec().status(ConsentStatus::Active));
    // Each of these misses exactly one condition.
    listing.create(spec().template("tpl-1"));
    listing.create(spec().cpf(CPF));
    listing.create(spec().status(ConsentStatus::Revoked));
    listing.create(spec().expira_em(now())); // effectively expirado at `now`
    listing.create(Spec {
        criado_em: t,
        ..spec()
    });
    listing.create(Spec {
        criado_em: t + minutes(10),
        ..spec()
    });

    let filter = ConsentFilter {
        status: Some(ConsentStatus::Active),
        template_id: Some("tpl-2".to_owned()),
        subject_cpf: Some(cpf(OTHER_CPF)),
        created_from: Some(t + minutes(1)),
        created_until: Some(t + minutes(10)),
        ..ConsentFilter::default()
    };

    assert_eq!(listing.list(&filter), expected(&[&hit, &hit_too]));
}

#[test]
fn the_updated_filters_find_what_changed_in_a_window_whenever_it_was_created() {
    let listing = Listing::new();
    let t = at("2026-05-01T12:00:00Z");
    let old = listing.create(Spec::new(t + minutes(1)));
    let changed = listing.create(Spec::new(t + minutes(2)));
    let recent = listing.create(Spec::new(t + minutes(3)));
    // a status change of `changed` later on moved its atualizado_em (as every change does)
    diesel::sql_query(format!(
        "UPDATE solicitacoes_consentimento SET atualizado_em = '{}' WHERE id = '{}'",
        (t + minutes(60)).to_rfc3339(),
        changed.id
    ))
    .execute(&mut listing.db.conn())
    .unwrap();

    // atualizado_de is inclusive, atualizado_ate exclusive
    let since = ConsentFilter {
        updated_from: Some(t + minutes(3)),
        ..ConsentFilter::default()
    };
    assert_eq!(listing.list(&since), [changed.id, recent.id]);
    let until = ConsentFilter {
        updated_until: Some(t + minutes(3)),
        ..ConsentFilter::default()
    };
    assert_eq!(listing.list(&until), [old.id]);
    let window = ConsentFilter {
        updated_from: Some(t + minutes(30)),
        updated_until: Some(t + minutes(61)),
        ..ConsentFilter::default()
    };
    assert_eq!(listing.list(&window), [changed.id]);
}

#[test]
fn the_status_filter_is_the_effective_status_at_now() {
    let listing = Listing::new();
    let t = at("2026-05-01T12:00:00Z");
    let mut n = 0;
    let mut insert = |status, expira_em| {
        n += 1;
        listing.create(
            Spec::new(t + minutes(n))
                .status(status)
                .expira_em(expira_em),
        )
    };
    let before = now() - TimeDelta::microseconds(1);
    let after = now() + TimeDelta::microseconds(1);
    let ativo_live = insert(ConsentStatus::Active, after);
    let ativo_at_now = insert(ConsentStatus::Active, now());
    let ativo_past = insert(ConsentStatus::Active, before);
    let pendente_live = insert(ConsentStatus::Pending, after);
    let pendente_at_now = insert(ConsentStatus::Pending, now());
    let pendente_past = insert(ConsentStatus::Pending, before);
    let expirado = insert(ConsentStatus::Expired, before);
    let recusado_past = insert(ConsentStatus::Refused, before);
    let recusado_live = insert(ConsentStatus::Refused, after);
    let revogado_past = insert(ConsentStatus::Revoked, before);
    let revogado_live = insert(ConsentStatus::Revoked, after);
    let of = |status| {
        listing.list(&ConsentFilter {
            status: Some(status),
            ..ConsentFilter::default()
        })
    };

    assert_eq!(of(ConsentStatus::Active), [ativo_live.id]);
    assert_eq!(of(ConsentStatus::Pending), [pendente_live.id]);
    assert_eq!(
        of(ConsentStatus::Expired),
        expected(&[
            &ativo_at_now,
            &ativo_past,
            &pendente_at_now,
            &pendente_past,
            &expirado
        ])
    );
    assert_eq!(
        of(ConsentStatus::Refused),
        expected(&[&recusado_past, &recusado_live])
    );
    assert_eq!(
        of(ConsentStatus::Revoked),
        expected(&[&revogado_past, &revogado_live])
    );
    // Listed a day earlier, the same rows are still live.
    let earlier = listing
        .repo
        .list(
            listing.acme.company.id,
            &ConsentFilter {
                status: Some(ConsentStatus::Active),
                ..ConsentFilter::default()
            },
            None,
            50,
            now() - TimeDelta::days(1),
        )
        .unwrap();
    assert_eq!(
        ids(&earlier),
        expected(&[&ativo_live, &ativo_at_now, &ativo_past])
    );
}

#[test]
fn keyset_pages_give_every_row_once_in_order() {
    let listing = Listing::new();
    let t = at("2026-05-01T12:00:00Z");
    // 120 rows, three per instant: the id breaks the ties, also across page boundaries.
    let mut all: Vec<ConsentRequest> = (0..120)
        .map(|i| listing.create(Spec::new(t + TimeDelta::seconds(i / 3))))
        .collect();
    all.sort_by_key(|r| (r.created_at, r.id));

    let mut pages = Vec::new();
    let mut cursor = None;
    loop {
        let page = listing
            .repo
            .list(
                listing.acme.company.id,
                &ConsentFilter::default(),
                cursor,
                50,
                now(),
            )
            .unwrap();
        if page.is_empty() {
            break;
        }
        let last = page.last().unwrap();
        cursor = Some(ListCursor {
            created_at: last.created_at,
            id: last.id,
        });
        pages.push(page);
        assert!(pages.len() <= 3, "too many pages");
    }

    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [50, 50, 20]);
    let listed: Vec<Uuid> = pages.concat().iter().map(|r| r.id).collect();
    assert_eq!(listed, ids(&all));
    assert_eq!(listed.iter().collect::<HashSet<_>>().len(), 120);
}

#[test]
fn a_page_resumes_strictly_after_the_cursor_even_when_rows_arrive_meanwhile() {
    let listing = Listing::new();
    let t = at("2026-05-01T12:00:00Z");
    let first: Vec<ConsentRequest> = (0..4)
        .map(|i| listing.create(Spec::new(t + minutes(i))))
        .collect();
    let page_one = listing
        .repo
        .list(
            listing.acme.company.id,
            &ConsentFilter::default(),
            None,
            2,
            now(),
        )
        .unwrap();
    let last = page_one.last().unwrap();
    // Created meanwhile: one before the cursor (never seen by this paging), one after.
    listing.create(Spec::new(t - minutes(1)));
    let newest = listing.create(Spec::new(t + minutes(10)));

    let page_two = listing
        .repo
        .list(
            listing.acme.company.id,
            &ConsentFilter::default(),
            Some(ListCursor {
                created_at: last.created_at,
                id: last.id,
            }),
            50,
            now(),
        )
        .unwrap();

    assert_eq!(ids(&page_one), [first[0].id, first[1].id]);
    assert_eq!(ids(&page_two), [first[2].id, first[3].id, newest.id]);
}

#[test]
fn a_cursor_between_two_rows_of_the_same_instant_resumes_by_id() {
    let listing = Listing::new();
    let t = at("2026-05-01T12:00:00Z");
    let a = listing.create(Spec::new(t));
    let b = listing.create(Spec::new(t));
    let (low, high) = if a.id < b.id { (a, b) } else { (b, a) };

    let after_low = listing
        .repo
        .list(
            listing.acme.company.id,
            &ConsentFilter::default(),
            Some(ListCursor {
                created_at: t,
                id: low.id,
            }),
            50,
            now(),
        )
        .unwrap();

    assert_eq!(ids(&after_low), [high.id]);
}

#[test]
fn a_zero_limit_lists_nothing() {
    let listing = Listing::new();
    listing.create(Spec::new(at("2026-05-01T12:00:00Z")));

    let listed = listing
        .repo
        .list(
            listing.acme.company.id,
            &ConsentFilter::default(),
            None,
            0,
            now(),
        )
        .unwrap();

    assert_eq!(listed, []);
}
