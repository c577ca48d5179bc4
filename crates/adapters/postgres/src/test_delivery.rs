//! The delivery of a test event (`POST /api/webhook-urls/{id}/testar`): written already claimed
//! by the caller, who sends it at once, so no background sender takes it meanwhile.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Text, Timestamptz, Uuid as SqlUuid};
use domain::WebhookEvent;
use ports::{DueDelivery, RepoError};
use uuid::Uuid;

use crate::conn::with_conn;
use crate::models::DueDeliveryRow;
use crate::outbox;

/// In one statement (one implicit transaction): for the company's URL $1 of company $2 that is
/// not removed (disabled or not: a test is how a company checks a receiver before re-enabling
/// it), the event ($3 id, $4 body, at $5) and its one delivery to that URL, `pendente`, leased
/// with a new token until $6 (the background claim skips it until then), answered with what
/// sending needs, as `claim_due` answers it. No row when there is no such URL.
const BEGIN_TEST: &str = "\
WITH alvo AS (
    SELECT id, empresa_id, url, segredo_cifrado,
           CASE WHEN segredo_anterior_ate > $5 THEN segredo_anterior_cifrado END
               AS segredo_anterior_cifrado
    FROM webhook_urls
    WHERE id = $1 AND empresa_id = $2 AND removido_em IS NULL
), evento AS (
    INSERT INTO webhook_eventos (id, empresa_id, tipo, payload, criado_em)
    SELECT $3, empresa_id, 'webhook.teste', $4, $5 FROM alvo
    RETURNING id
), entrega AS (
    INSERT INTO webhook_entregas (id, evento_id, webhook_url_id, empresa_id, status, tentativas,
                                  proxima_tentativa_em, criado_em, atualizado_em,
                                  token_reivindicacao, tipo_evento)
    SELECT gen_random_uuid(), ev.id, a.id, a.empresa_id, 'pendente', 0, $6, $5, $5,
           gen_random_uuid(), 'webhook.teste'
    FROM alvo a CROSS JOIN evento ev
    RETURNING id, empresa_id, webhook_url_id, evento_id, tentativas, token_reivindicacao
)
SELECT e.id, e.empresa_id, e.webhook_url_id, a.url, e.evento_id, $4::text AS payload,
       e.tentativas, a.segredo_cifrado, a.segredo_anterior_cifrado, e.token_reivindicacao,
       NULL::text AS traceparent
FROM entrega e JOIN alvo a ON a.id = e.webhook_url_id";

/// See [`BEGIN_TEST`]; `event` is the `webhook.teste` event of the company.
pub(crate) fn begin_test(
    pool: &crate::PgPool,
    webhook_url_id: Uuid,
    event: &WebhookEvent,
    lease_until: DateTime<Utc>,
) -> Result<Option<DueDelivery>, RepoError> {
    const OPERATION: &str = "writing a test delivery";
    let row = with_conn(pool, OPERATION, |conn| {
        let payload = outbox::payload(event)?;
        diesel::sql_query(BEGIN_TEST)
            .bind::<SqlUuid, _>(webhook_url_id)
            .bind::<SqlUuid, _>(event.company_id.0)
            .bind::<SqlUuid, _>(event.id)
            .bind::<Text, _>(payload)
            .bind::<Timestamptz, _>(event.timestamp)
            .bind::<Timestamptz, _>(lease_until)
            .get_result::<DueDeliveryRow>(conn)
            .optional()
    })?;
    row.map(DueDeliveryRow::try_into_domain)
        .transpose()
        .map_err(|e| RepoError::Unexpected(e.context(OPERATION)))
}
