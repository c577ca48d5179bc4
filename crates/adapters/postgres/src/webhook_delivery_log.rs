//! A page of a webhook URL's delivery log (the API's list and the console's filtered log, issue
//! 38 part 5; docs/console.md, "A URL's health"): newest first by `(criado_em, id)`, keyset-paged,
//! each filter read along an index keyed by the URL, then the filter, then the time, so a page
//! reads about its own size in index entries, never the URL's deliveries of the period:
//!
//! | Filter | Index |
//! |---|---|
//! | none (a period or not) | `webhook_entregas_url_criado_em_idx` |
//! | a status | `webhook_entregas_url_status_idx` |
//! | an event type and a status | `webhook_entregas_url_tipo_status_idx` |
//! | an event type | the same, one range per status (four), merged |
//!
//! A filter left out is bound to a value that keeps every row (the statement stays one prepared
//! text per filter): the period from [`EARLIEST`] to [`LATEST`], and before no delivery. The
//! statuses are literals, as `ports::DELIVERY_STATUSES` names them.

use std::collections::HashMap;

use chrono::{DateTime, TimeZone, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use domain::CompanyId;
use ports::{DeliveryAttempt, DeliveryFilter, DeliveryRecord, RepoError};
use uuid::Uuid;

use crate::conn::with_conn;
use crate::fixed_sql::statement;
use crate::models::WebhookTentativaRow;
use crate::schema::{webhook_tentativas as wt, webhook_urls as wu};
use crate::tenant::Tenant;
use crate::PgPool;

/// Before any delivery (the service was written in 2026).
fn earliest() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2000, 1, 1, 0, 0, 0).unwrap()
}

/// After any delivery, within PostgreSQL's and chrono's ranges.
fn latest() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(9999, 12, 31, 0, 0, 0).unwrap()
}

/// The greatest id: with [`latest`], a cursor before every delivery.
const LAST_ID: Uuid = Uuid::max();

/// The conditions every page shares (SQL on `webhook_entregas`): the URL, the period (`$from`
/// included, `$until` excluded) and the keyset cursor, the time's bound also said alone so that
/// an index without `id` still starts its range at the cursor.
macro_rules! of_the_page {
    () => {
        "empresa_id = $empresa_id AND webhook_url_id = $url_id
    AND criado_em >= $from AND criado_em < $until AND criado_em <= $before_at
    AND (criado_em, id) < ($before_at, $before_id)"
    };
}

/// The columns a page reads of `webhook_entregas`.
macro_rules! delivery_columns {
    () => {
        "id, evento_id, status, criado_em, proxima_tentativa_em"
    };
}

/// The page `$chosen` (a query of [`delivery_columns`], at most `$limit` rows), with its event's
/// type and body (cut at `ports::REQUEST_BODY_SHOWN` characters in the database: a page never
/// carries whole payloads), newest first.
macro_rules! log_page {
    ($chosen:expr) => {
        concat!(
            "WITH escolhidas AS MATERIALIZED (",
            $chosen,
            ")
SELECT c.id, c.evento_id, ev.tipo, c.status, c.criado_em, c.proxima_tentativa_em,
       left(ev.payload, 2000) AS corpo
FROM escolhidas c
JOIN webhook_eventos ev ON ev.empresa_id = $empresa_id AND ev.id = c.evento_id
ORDER BY c.criado_em DESC, c.id DESC"
        )
    };
}
const _: () = assert!(ports::REQUEST_BODY_SHOWN == 2000, "log_page's cut");

/// One status's range of an event type's deliveries (for [`ByType`]).
macro_rules! of_type_and_status {
    ($status:literal) => {
        concat!(
            "(SELECT ",
            delivery_columns!(),
            " FROM webhook_entregas WHERE ",
            of_the_page!(),
            " AND tipo_evento = $tipo AND status = '",
            $status,
            "' ORDER BY criado_em DESC, id DESC LIMIT $limit)"
        )
    };
}

statement! {
    /// No status nor type: along `webhook_entregas_url_criado_em_idx`.
    struct Unfiltered {
        empresa_id: Uuid as SqlUuid,
        url_id: Uuid as SqlUuid,
        from: DateTime<Utc> as Timestamptz,
        until: DateTime<Utc> as Timestamptz,
        before_at: DateTime<Utc> as Timestamptz,
        before_id: Uuid as SqlUuid,
        limit: i64 as BigInt,
    }
    log_page!(concat!(
        "SELECT ", delivery_columns!(), " FROM webhook_entregas WHERE ", of_the_page!(),
        " ORDER BY criado_em DESC, id DESC LIMIT $limit"
    ))
}

statement! {
    /// A status: along `webhook_entregas_url_status_idx`, one backward range.
    struct ByStatus<'a> {
        empresa_id: Uuid as SqlUuid,
        url_id: Uuid as SqlUuid,
        from: DateTime<Utc> as Timestamptz,
        until: DateTime<Utc> as Timestamptz,
        before_at: DateTime<Utc> as Timestamptz,
        before_id: Uuid as SqlUuid,
        status: &'a str as Text,
        limit: i64 as BigInt,
    }
    log_page!(concat!(
        "SELECT ", delivery_columns!(), " FROM webhook_entregas WHERE ", of_the_page!(),
        " AND status = $status ORDER BY criado_em DESC, id DESC LIMIT $limit"
    ))
}

statement! {
    /// An event type and a status: along `webhook_entregas_url_tipo_status_idx`, one backward
    /// range.
    struct ByTypeAndStatus<'a> {
        empresa_id: Uuid as SqlUuid,
        url_id: Uuid as SqlUuid,
        from: DateTime<Utc> as Timestamptz,
        until: DateTime<Utc> as Timestamptz,
        before_at: DateTime<Utc> as Timestamptz,
        before_id: Uuid as SqlUuid,
        tipo: &'a str as Text,
        status: &'a str as Text,
        limit: i64 as BigInt,
    }
    log_page!(concat!(
        "SELECT ", delivery_columns!(), " FROM webhook_entregas WHERE ", of_the_page!(),
        " AND tipo_evento = $tipo AND status = $status ORDER BY criado_em DESC, id DESC \
         LIMIT $limit"
    ))
}

statement! {
    /// An event type: along `webhook_entregas_url_tipo_status_idx`, the newest `$limit` of each
    /// status (four ranges), merged and cut at `$limit`: at most four pages of entries.
    struct ByType<'a> {
        empresa_id: Uuid as SqlUuid,
        url_id: Uuid as SqlUuid,
        from: DateTime<Utc> as Timestamptz,
        until: DateTime<Utc> as Timestamptz,
        before_at: DateTime<Utc> as Timestamptz,
        before_id: Uuid as SqlUuid,
        tipo: &'a str as Text,
        limit: i64 as BigInt,
    }
    log_page!(concat!(
        "SELECT ", delivery_columns!(), " FROM (",
        of_type_and_status!("pendente"), " UNION ALL ",
        of_type_and_status!("entregue"), " UNION ALL ",
        of_type_and_status!("falhou"), " UNION ALL ",
        of_type_and_status!("cancelada"),
        ") por_status ORDER BY criado_em DESC, id DESC LIMIT $limit"
    ))
}

// the four literals are the statuses there are
const _: () = assert!(ports::DELIVERY_STATUSES.len() == 4, "ByType's ranges");

/// A delivery of a page with its event's type and body.
#[derive(QueryableByName)]
struct LoggedRow {
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = SqlUuid)]
    evento_id: Uuid,
    #[diesel(sql_type = Text)]
    tipo: String,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = Timestamptz)]
    criado_em: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    proxima_tentativa_em: Option<DateTime<Utc>>,
    #[diesel(sql_type = Text)]
    corpo: String,
}

/// The page's deliveries by the statement of its filter.
fn deliveries(
    conn: &mut PgConnection,
    empresa: CompanyId,
    url_id: Uuid,
    filter: &DeliveryFilter,
    limit: i64,
) -> QueryResult<Vec<LoggedRow>> {
    let from = filter.created_from.unwrap_or_else(earliest);
    let until = filter.created_until.unwrap_or_else(latest);
    let (before_at, before_id) = filter.before.unwrap_or((latest(), LAST_ID));
    let empresa_id = empresa.0;
    match (filter.event_type.as_deref(), filter.status.as_deref()) {
        (None, None) => Unfiltered {
            empresa_id,
            url_id,
            from,
            until,
            before_at,
            before_id,
            limit,
        }
        .load(conn),
        (None, Some(status)) => ByStatus {
            empresa_id,
            url_id,
            from,
            until,
            before_at,
            before_id,
            status,
            limit,
        }
        .load(conn),
        (Some(tipo), Some(status)) => ByTypeAndStatus {
            empresa_id,
            url_id,
            from,
            until,
            before_at,
            before_id,
            tipo,
            status,
            limit,
        }
        .load(conn),
        (Some(tipo), None) => ByType {
            empresa_id,
            url_id,
            from,
            until,
            before_at,
            before_id,
            tipo,
            limit,
        }
        .load(conn),
    }
}

/// In one read-only `REPEATABLE READ` transaction (so the attempts match the deliveries read):
/// the URL's ownership (any removal state), at most `limit` deliveries matching `filter`, newest
/// first, then their attempts in one query, oldest first. `None` when the URL is not the
/// company's.
pub(crate) fn page(
    pool: &PgPool,
    empresa: CompanyId,
    url_id: Uuid,
    filter: &DeliveryFilter,
    limit: u32,
) -> Result<Option<Vec<DeliveryRecord>>, RepoError> {
    const OPERATION: &str = "listing webhook deliveries";
    let found = with_conn(pool, OPERATION, |conn| {
        conn.build_transaction()
            .repeatable_read()
            .read_only()
            .run(|conn| {
                let owned = wu::table::row(empresa, url_id)
                    .select(wu::id)
                    .first::<Uuid>(conn)
                    .optional()?;
                if owned.is_none() {
                    return Ok(None);
                }
                let rows = deliveries(conn, empresa, url_id, filter, i64::from(limit))?;
                let ids: Vec<Uuid> = rows.iter().map(|d| d.id).collect();
                let attempts = if ids.is_empty() {
                    Vec::new()
                } else {
                    wt::table::of(empresa)
                        .filter(wt::entrega_id.eq_any(&ids))
                        .order((wt::entrega_id, wt::em, wt::id))
                        .select(WebhookTentativaRow::as_select())
                        .load(conn)?
                };
                Ok(Some((rows, attempts)))
            })
    })?;
    let Some((rows, attempts)) = found else {
        return Ok(None);
    };
    let mut by_delivery: HashMap<Uuid, Vec<DeliveryAttempt>> = HashMap::new();
    for row in attempts {
        let entrega_id = row.entrega_id;
        let attempt = row
            .try_into_domain()
            .map_err(|e| RepoError::Unexpected(e.context(OPERATION)))?;
        by_delivery.entry(entrega_id).or_default().push(attempt);
    }
    Ok(Some(
        rows.into_iter()
            .map(|d| DeliveryRecord {
                attempts: by_delivery.remove(&d.id).unwrap_or_default(),
                id: d.id,
                event_id: d.evento_id,
                event_type: d.tipo,
                status: d.status,
                created_at: d.criado_em,
                next_attempt_at: d.proxima_tentativa_em,
                request_body: d.corpo,
            })
            .collect(),
    ))
}
