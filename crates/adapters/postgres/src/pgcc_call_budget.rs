//! [`PgPgccCallBudget`]: the PGCC calls every process shares, as a token bucket in
//! `orcamento_pgcc` (one row per kind of call).

use std::time::Duration;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Double, Text, Timestamptz};
use ports::{PgccCallBudget, RepoError};

use crate::conn::with_conn;
use crate::fixed_sql::statement;
use crate::PgPool;

statement! {
    /// Takes one call: refills the bucket for the time since its last take (at `rate` a second,
    /// up to `burst`), then takes 1 if that leaves at least 0. The row is created full on the
    /// first take. The application's clock (`now`), never the database's in the `SET`; a clock
    /// behind the row's refills nothing. No row back: the bucket is empty.
    struct TakeCall<'a> {
        nome: &'a str as Text,
        now: DateTime<Utc> as Timestamptz,
        rate: f64 as Double,
        burst: f64 as Double,
    }
    "INSERT INTO orcamento_pgcc AS o (nome, fichas, atualizado_em)
VALUES ($nome, $burst - 1, $now)
ON CONFLICT (nome) DO UPDATE SET
    fichas = least($burst, o.fichas
        + greatest(0, extract(epoch FROM ($now - o.atualizado_em)))::float8 * $rate) - 1,
    atualizado_em = greatest(o.atualizado_em, $now)
WHERE least($burst, o.fichas
        + greatest(0, extract(epoch FROM ($now - o.atualizado_em)))::float8 * $rate) >= 1
RETURNING o.fichas"
}

#[derive(QueryableByName)]
struct Left {
    #[diesel(sql_type = Double)]
    #[allow(dead_code)] // the row's presence is the answer
    fichas: f64,
}

/// One kind of PGCC call's budget: `rate` calls a second for every process together, with
/// bursts of one second's worth.
#[derive(Clone)]
pub struct PgPgccCallBudget {
    pool: PgPool,
    name: &'static str,
    rate: f64,
}

impl PgPgccCallBudget {
    pub fn new(pool: PgPool, name: &'static str, calls_per_second: u32) -> Self {
        Self {
            pool,
            name,
            rate: f64::from(calls_per_second.max(1)),
        }
    }
}

impl PgccCallBudget for PgPgccCallBudget {
    fn try_take(&self, now: DateTime<Utc>) -> Result<Option<Duration>, RepoError> {
        let granted = with_conn(&self.pool, "taking a PGCC call from the budget", |conn| {
            TakeCall {
                nome: self.name,
                now,
                rate: self.rate,
                burst: self.rate,
            }
            .load::<Left>(conn)
        })?;
        Ok(if granted.is_empty() {
            // a whole call refills in 1/rate seconds at most
            Some(Duration::from_secs_f64(1.0 / self.rate))
        } else {
            None
        })
    }
}
