//! The status worker's round: asks the PGCC about the open requests whose check is due and
//! applies what the subject did there (accepted, refused, revoked) as transitions caused by
//! `pgcc`.
//!
//! Freshness by policy, within a budget (issue 21, part 1): a request is checked when its
//! [`StatusCheckPolicy`] says so, not every period: at once after its creation, then a
//! `pendente` one at growing intervals (the poll period, doubling, up to `pending_max`) and an
//! `ativo` one every `active_every`. Every PGCC status call of every process is taken from one
//! [`PgccCallBudget`], and the ids of a call are shared in turns by the companies with due
//! checks, so one company's million due requests never delay another's first check.
//!
//! Two ways to be due: a young request (its first checks, a `pendente` one while its interval
//! grows) has a row of its own in the narrow schedule, rewritten at each check; a request in its
//! steady rhythm (`ativo`, or `pendente` at `pending_max`) is in its company's sweep of that
//! lane, read in passes in id order, and a check that finds no change writes nothing at all:
//! at 10^7 consents nearly every check is a read (docs/scaling.md).
//!
//! Each request's answer is applied on its own: a status the PGCC names that we do not know
//! skips that request (counted, and its next check backed off), never its batch, so one odd
//! answer cannot keep its neighbours' revocations from reaching us.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};
use domain::{CompanyId, ConsentStatus, Reason, TransitionCause};
use ports::{
    AuditLogRepository, Clock, ConsentRequestRepository, DueStatusChecks, NextStatusCheck,
    PgccCallBudget, PgccConsentStatus, PgccError, PgccGateway, RepoError, ScheduledStatusCheck,
    StatusCheckItem, StatusCheckSchedule, StatusSweepLane, StatusSweepLease,
};

/// The fewest ids a company's turn in a call carries (when it has that many due): a call of
/// `ids_per_call` ids serves at most `ids_per_call / MIN_SHARE` companies, the next call the next
/// ones. Each company served costs statements of its own (its sweep's batch and its return, its
/// young checks' claim and schedule): a call split into a hundred shares of five cost four times
/// the database work of ten shares of fifty (measured, docs/performance.md), and at 10^7 consents
/// those per-company statements were most of the status work's cost (docs/scaling.md). A
/// company's wait for its turn grows with the share: a lap of 1,000 companies with due checks is
/// 200 calls of five, 10 s at the default budget of 20 calls a second.
pub const MIN_SHARE: u32 = 100;

/// The most companies one lap finds (one probe): a lap serves each of them once, in calls of
/// `ids_per_call / MIN_SHARE` companies, before the next probe. More companies with due checks
/// than this are found by the next laps (each probe starts after the last company found).
pub const LAP_COMPANIES: u32 = 1_000;

/// When requests are checked, and how many at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusCheckPolicy {
    /// How often the worker looks for due checks (`workers.status_poll_seconds`); also a
    /// `pendente` request's first interval after its first check.
    pub poll: Duration,
    /// The longest a `pendente` request waits between checks
    /// (`workers.pending_recheck_max_seconds`).
    pub pending_max: Duration,
    /// How often an `ativo` request is checked (`workers.active_recheck_seconds`): the bound
    /// within which a subject's revocation on the PGCC reaches HashConsulta.
    pub active_every: Duration,
    /// The most ids one PGCC status call carries (at most 500, the PGCC's limit).
    pub ids_per_call: u32,
}

impl StatusCheckPolicy {
    /// How long a claimed check is held before another worker may take it (the claiming worker
    /// died or its PGCC call failed).
    pub fn lease(&self) -> Duration {
        self.poll * 2
    }

    /// The interval after a check that left the request in `status`, given the interval its
    /// last check scheduled (0: this was its first check); `None` for a final status.
    pub fn next_interval(&self, status: ConsentStatus, last_seconds: u32) -> Option<Duration> {
        match status {
            ConsentStatus::Pending if last_seconds == 0 => Some(self.poll.min(self.pending_max)),
            ConsentStatus::Pending => {
                Some((Duration::seconds(i64::from(last_seconds)) * 2).min(self.pending_max))
            }
            ConsentStatus::Active => Some(self.active_every),
            _ => None,
        }
    }

    /// The next check after one that left the request in `status`: its own schedule while a
    /// `pendente` request's interval grows, its company's sweep once the interval reaches its
    /// steady value (`pending_max`, or `active_every` for an `ativo` one), never for a final
    /// status.
    pub fn next_check(
        &self,
        status: ConsentStatus,
        last_seconds: u32,
        now: DateTime<Utc>,
    ) -> NextStatusCheck {
        let seconds = |d: Duration| u32::try_from(d.num_seconds()).unwrap_or(u32::MAX);
        match (status, self.next_interval(status, last_seconds)) {
            (_, None) => NextStatusCheck::Never,
            (ConsentStatus::Active, Some(every)) => NextStatusCheck::Sweep {
                lane: StatusSweepLane::Active,
                period_seconds: seconds(every),
                first_pass_at: now + every,
            },
            (_, Some(interval)) if interval >= self.pending_max => NextStatusCheck::Sweep {
                lane: StatusSweepLane::Pending,
                period_seconds: seconds(self.pending_max),
                first_pass_at: now + self.pending_max,
            },
            (_, Some(interval)) => NextStatusCheck::At {
                at: now + interval,
                interval_seconds: seconds(interval),
            },
        }
    }
}

/// The sweep leases among `items`, each once.
fn sweep_leases<'a>(items: impl Iterator<Item = &'a StatusCheckItem>) -> Vec<StatusSweepLease> {
    let mut leases: Vec<StatusSweepLease> = items.filter_map(|item| item.sweep).collect();
    leases.sort();
    leases.dedup();
    leases
}

impl Default for StatusCheckPolicy {
    fn default() -> Self {
        StatusCheckPolicy {
            poll: Duration::seconds(30),
            pending_max: Duration::seconds(300),
            active_every: Duration::seconds(900),
            ids_per_call: 500,
        }
    }
}

/// Told how late each status check ran against its due time.
pub trait StatusCheckObserver: Send + Sync {
    fn status_check_lag(&self, seconds: f64);
}

/// The outcome of one round.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PollReport {
    /// Requests claimed and asked about.
    pub checked: u32,
    /// Requests whose status this round stored a change for.
    pub changed: u32,
    /// Requests for which the PGCC answered a status we do not know (skipped, backed off).
    pub unknown: u32,
    /// Requests whose change could not be stored (skipped: checked again at the time their
    /// claim pushed their next check to; the round went on with the others).
    pub failed: u32,
    /// Claimed checks of requests that had reached a final status: unscheduled, not asked.
    pub closed: u32,
    /// Integrity incidents recorded this round: confirmed requests the PGCC has said it does not
    /// know for longer than `workers.reconcile_not_found_seconds` (issue 36).
    pub integrity_incidents: u32,
    /// Checks were due but the PGCC budget had no call left: ask again after this long.
    pub throttled: Option<std::time::Duration>,
    /// More checks may be due now: the call was full, or companies with due checks were left
    /// for the next call's turn.
    pub more_due: bool,
}

/// The longest a request the PGCC keeps answering an unknown status for waits between checks.
/// Bounded so that once the PGCC answers sense again (say, a revocation), it reaches us within
/// this long.
pub const UNKNOWN_STATUS_MAX_BACKOFF_SECONDS: i64 = 3600;

#[derive(Debug, thiserror::Error)]
pub enum PollError {
    /// The PGCC could not answer; the claimed requests are checked again once their lease ends.
    #[error(transparent)]
    Pgcc(PgccError),
    #[error(transparent)]
    Repo(#[from] RepoError),
}

#[derive(Clone)]
pub struct PollConsentStatuses {
    /// The requests: a status the PGCC reports is stored as their transition.
    consent_requests: Arc<dyn ConsentRequestRepository>,
    /// When each request is checked: the claims, and the next check after each.
    schedule: Arc<dyn StatusCheckSchedule>,
    pgcc: Arc<dyn PgccGateway>,
    budget: Arc<dyn PgccCallBudget>,
    clock: Arc<dyn Clock>,
    policy: StatusCheckPolicy,
    observer: Option<Arc<dyn StatusCheckObserver>>,
    /// Where a request the PGCC does not know is noted, and how long "not found" may last before
    /// it is an integrity incident (`workers.reconcile_not_found_seconds`).
    incidents: Option<(Arc<dyn AuditLogRepository>, Duration)>,
    /// Where the turns stand: the next call's start after the last company served.
    turns: Arc<Mutex<Turns>>,
}

/// Where the turns among companies stand between calls.
///
/// A drain goes in laps: one probe finds the companies with due checks (and which kinds), and
/// the calls take them from the front of the lap, `companies_per_call` at a time, until the
/// lap is empty. Finding them once per lap instead of once per call matters at 10^7: the probe
/// was the status work's costliest statement (docs/scaling.md).
#[derive(Debug, Default)]
struct Turns {
    /// The last company the last probe found: the next lap starts after it.
    last: Option<CompanyId>,
    /// This lap's companies not served yet, with the kinds their probe found due.
    lap: VecDeque<DueStatusChecks>,
    /// A company served this lap may have more due (its claim came back with all it asked
    /// for): once the lap is done, the drain goes on with a new one.
    more: bool,
}

impl PollConsentStatuses {
    pub fn new(
        consent_requests: Arc<dyn ConsentRequestRepository>,
        schedule: Arc<dyn StatusCheckSchedule>,
        pgcc: Arc<dyn PgccGateway>,
        budget: Arc<dyn PgccCallBudget>,
        clock: Arc<dyn Clock>,
        policy: StatusCheckPolicy,
    ) -> Self {
        Self {
            consent_requests,
            schedule,
            pgcc,
            budget,
            clock,
            policy,
            observer: None,
            incidents: None,
            turns: Arc::default(),
        }
    }

    /// Reads and writes the requests through `consent_requests` and the schedule through
    /// `schedule` instead (the status job's own pool: docs/scaling.md).
    pub fn with_repositories(
        mut self,
        consent_requests: Arc<dyn ConsentRequestRepository>,
        schedule: Arc<dyn StatusCheckSchedule>,
    ) -> Self {
        self.consent_requests = consent_requests;
        self.schedule = schedule;
        self
    }

    /// Reports each check's lag to `observer` (the metrics).
    pub fn with_observer(mut self, observer: Arc<dyn StatusCheckObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Notes each confirmed request the PGCC says it does not know in `log`, and records an
    /// integrity incident (its `auditoria.incidente` event with it) when "not found" still holds
    /// `window` after the first (docs/auditoria.md, "Integrity incidents").
    pub fn with_integrity_incidents(
        mut self,
        log: Arc<dyn AuditLogRepository>,
        window: Duration,
    ) -> Self {
        self.incidents = Some((log, window));
        self
    }

    pub fn policy(&self) -> StatusCheckPolicy {
        self.policy
    }

    /// One PGCC call's worth of due checks: finds the companies with due checks (in turns,
    /// after the last one served), takes one call from the budget (none left: `throttled`,
    /// nothing claimed), claims up to `ids_per_call` checks shared among those companies, asks
    /// the PGCC about all of them in one call, stores each status that differs as the
    /// transition the state machine names, and schedules each request's next check by the
    /// policy. A status the machine cannot reach from the stored one (the PGCC says `pendente`
    /// for an `ativo` request) is logged and skipped; so is a request the PGCC does not know,
    /// which is also noted and, once "not found" has held for the configured window, recorded as
    /// an integrity incident (see [`Self::with_integrity_incidents`]). A
    /// status we do not know is skipped for that request alone, counted in `unknown`, and its
    /// next check pushed back (see [`unknown_status_backoff`]). A change that cannot be stored
    /// is that request's failure alone, counted in `failed` (checked again when its lease
    /// ends). Log lines carry ids and statuses only, never personal data.
    pub fn run_once(&self) -> Result<PollReport, PollError> {
        let now = self.clock.now();
        let companies = self.companies_in_turn(now)?;
        if companies.is_empty() {
            self.lock_turns().more = false;
            return Ok(PollReport::default());
        }
        if let Some(wait) = self.budget.try_take(now)? {
            // their turn is not lost: they are the next call's
            let mut turns = self.lock_turns();
            for due in companies.into_iter().rev() {
                turns.lap.push_front(due);
            }
            return Ok(PollReport {
                throttled: Some(wait),
                ..PollReport::default()
            });
        }
        let (claimed, more_left) = self.claim_in_turns(&companies, now)?;
        // Companies of this lap not served yet keep the drain going. Once the lap is done, a
        // full call or a company that got all it asked for may leave more due: a new lap. A
        // call that is none of these ends the drain: what falls due meanwhile waits for the
        // next poll, in full calls, instead of a stream of small ones.
        let more_due = {
            let mut turns = self.lock_turns();
            turns.more |= more_left || claimed.len() >= self.policy.ids_per_call as usize;
            if turns.lap.is_empty() {
                std::mem::take(&mut turns.more)
            } else {
                true
            }
        };
        if let Some(observer) = &self.observer {
            for item in &claimed {
                observer.status_check_lag(
                    (now - item.due_at).num_milliseconds().max(0) as f64 / 1000.0,
                );
            }
        }
        // a request that reached a final status since it was scheduled has nothing to ask
        let (open, closed): (Vec<StatusCheckItem>, Vec<StatusCheckItem>) =
            claimed.into_iter().partition(|item| {
                matches!(item.status, ConsentStatus::Pending | ConsentStatus::Active)
            });
        let leases = sweep_leases(open.iter().chain(&closed));
        let mut schedules: Vec<ScheduledStatusCheck> = closed
            .iter()
            .filter_map(|item| self.schedule(item, item.status, now))
            .collect();
        let closed = u32::try_from(closed.len()).unwrap_or(u32::MAX);
        if open.is_empty() {
            self.schedule.schedule_status_checks(&schedules)?;
            self.advance_sweeps(&leases, now)?;
            return Ok(PollReport {
                closed,
                more_due,
                ..PollReport::default()
            });
        }
        let pgcc_ids: Vec<String> = open.iter().map(|item| item.pgcc_id.clone()).collect();
        let answers = self
            .pgcc
            .consent_statuses(&pgcc_ids)
            .inspect_err(|e| {
                tracing::warn!(requests = open.len(), error = %e, "status poll: PGCC failed");
            })
            .map_err(PollError::Pgcc)?;
        let mut by_pgcc_id: HashMap<&str, &PgccConsentStatus> =
            HashMap::with_capacity(answers.len());
        for answer in &answers {
            // the first answer for an id wins, as the PGCC answers a repeated id once
            by_pgcc_id.entry(answer.pgcc_id.as_str()).or_insert(answer);
        }

        let mut failed_sweeps: Vec<StatusSweepLease> = Vec::new();
        let mut report = PollReport {
            checked: u32::try_from(open.len()).unwrap_or(u32::MAX),
            closed,
            more_due,
            ..PollReport::default()
        };
        // the requests the PGCC answered, by company: a "not found" noted earlier is forgotten
        let mut known: HashMap<CompanyId, Vec<uuid::Uuid>> = HashMap::new();
        for item in &open {
            let Some(answer) = by_pgcc_id.get(item.pgcc_id.as_str()) else {
                tracing::warn!(
                    empresa_id = %item.company_id,
                    solicitacao_id = %item.id,
                    pgcc_id = %item.pgcc_id,
                    "status poll: the PGCC does not know this request"
                );
                report.integrity_incidents += self.note_not_found(item, now);
                schedules.extend(self.schedule(item, item.status, now));
                continue;
            };
            known.entry(item.company_id).or_default().push(item.id);
            let (reason, hint) = (answer.reason.as_deref(), answer.next_change_at);
            let Some(reported) = answer.status else {
                report.unknown += 1;
                self.back_off_unknown_status(item, now);
                continue;
            };
            if item.unknown_status_since.is_some() {
                // sense again: a later oddity starts its backoff afresh
                if let Err(e) = self.schedule.clear_unknown_status(item.company_id, item.id) {
                    tracing::warn!(
                        solicitacao_id = %item.id,
                        error = format!("{e:#}"),
                        "status poll: could not forget an earlier unknown status"
                    );
                }
            }
            if reported == item.status {
                schedules.extend(self.schedule_told(item, item.status, hint, now));
                continue;
            }
            if ConsentStatus::event_towards(item.status, reported).is_none() {
                tracing::warn!(
                    empresa_id = %item.company_id,
                    solicitacao_id = %item.id,
                    pgcc_id = %item.pgcc_id,
                    stored = %item.status,
                    reported = %reported,
                    "status poll: the PGCC reports a status our state machine cannot reach; skipped"
                );
                schedules.extend(self.schedule(item, item.status, now));
                continue;
            }
            let moved = self.consent_requests.transition(
                item.company_id,
                item.id,
                item.status,
                reported,
                TransitionCause::Pgcc,
                // the subject's reason, as the PGCC reports it (cut to what we keep)
                Reason::from_pgcc(reason),
                now,
            );
            // One request's failure is that request's: its neighbours' changes (another
            // company's revocations among them) are applied all the same, and it is checked again
            // when its lease ends. The error names no personal data.
            let moved = match moved {
                Ok(moved) => moved,
                Err(e) => {
                    report.failed += 1;
                    if let Some(lease) = item.sweep {
                        // its batch is read again when the lease ends, this request with it
                        failed_sweeps.push(lease);
                    }
                    tracing::warn!(
                        empresa_id = %item.company_id,
                        solicitacao_id = %item.id,
                        de = %item.status,
                        para = %reported,
                        error = format!("{e:#}"),
                        "status poll: could not store this request's change; checked again later"
                    );
                    continue;
                }
            };
            // moved or not (another process stored the same change first), the request is
            // now `reported` as far as the PGCC knows
            schedules.extend(self.schedule_told(item, reported, hint, now));
            if moved {
                report.changed += 1;
                tracing::info!(
                    empresa_id = %item.company_id,
                    solicitacao_id = %item.id,
                    de = %item.status,
                    para = %reported,
                    "consent request status changed on the PGCC"
                );
            }
        }
        if let Some((log, _)) = &self.incidents {
            for (company, ids) in &known {
                if let Err(e) = log.forget_pgcc_not_found(*company, ids) {
                    tracing::warn!(
                        empresa_id = %company,
                        error = format!("{e:#}"),
                        "status poll: could not forget the PGCC's earlier not found"
                    );
                }
            }
        }
        // without this the checks come back when their lease ends: earlier than the policy
        // says, never later
        self.schedule.schedule_status_checks(&schedules)?;
        let advanced: Vec<StatusSweepLease> = leases
            .into_iter()
            .filter(|lease| !failed_sweeps.contains(lease))
            .collect();
        self.advance_sweeps(&advanced, now)?;
        Ok(report)
    }

    /// Notes that the PGCC does not know `item`; 1 when that made it an integrity incident.
    fn note_not_found(&self, item: &StatusCheckItem, now: DateTime<Utc>) -> u32 {
        let Some((log, window)) = &self.incidents else {
            return 0;
        };
        match log.note_pgcc_not_found(item.company_id, item.id, now, *window) {
            Ok(Some(incident)) => {
                tracing::error!(
                    empresa_id = %item.company_id,
                    solicitacao_id = %item.id,
                    pgcc_id = %item.pgcc_id,
                    desde = %incident.not_found_since,
                    "integrity incident: a confirmed request the PGCC does not know (auditoria.incidente)"
                );
                1
            }
            Ok(None) => 0,
            Err(e) => {
                tracing::warn!(
                    solicitacao_id = %item.id,
                    error = format!("{e:#}"),
                    "status poll: could not note that the PGCC does not know this request"
                );
                0
            }
        }
    }

    fn lock_turns(&self) -> std::sync::MutexGuard<'_, Turns> {
        self.turns.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many companies one call serves at most: `ids_per_call / MIN_SHARE`, at least one.
    fn companies_per_call(&self) -> u32 {
        (self.policy.ids_per_call / MIN_SHARE).max(1)
    }

    /// The companies with due checks this call serves (at most
    /// [`companies_per_call`](Self::companies_per_call)), from the front of the lap; an empty
    /// lap is found first (see [`find_lap`](Self::find_lap)). Every company with due checks is
    /// served within `companies / companies_per_call` calls of its lap.
    fn companies_in_turn(&self, now: DateTime<Utc>) -> Result<Vec<DueStatusChecks>, RepoError> {
        let per_call = self.companies_per_call() as usize;
        if self.lock_turns().lap.is_empty() {
            let found = self.find_lap(now)?;
            let mut turns = self.lock_turns();
            turns.last = found.last().map(|due| due.company_id).or(turns.last);
            turns.lap = found.into();
        }
        let mut turns = self.lock_turns();
        let take = per_call.min(turns.lap.len());
        Ok(turns.lap.drain(..take).collect())
    }

    /// Up to [`LAP_COMPANIES`] companies with due checks, starting after the last company the
    /// previous probe found and wrapping around: one probe for a lap.
    fn find_lap(&self, now: DateTime<Utc>) -> Result<Vec<DueStatusChecks>, RepoError> {
        let after = self.lock_turns().last;
        self.schedule
            .companies_with_due_status_checks(now, after, LAP_COMPANIES)
    }

    /// Claims up to `ids_per_call` due checks among `companies`: an equal share each, then what
    /// is left of the call to those that had more, in the same order.
    ///
    /// Also answers whether some company may have more due: its last claim came back with all
    /// it asked for (a pass of its sweep with more batches to go, say), so the drain goes on.
    fn claim_in_turns(
        &self,
        companies: &[DueStatusChecks],
        now: DateTime<Utc>,
    ) -> Result<(Vec<StatusCheckItem>, bool), RepoError> {
        let capacity = self.policy.ids_per_call.max(1) as usize;
        let share = (capacity / companies.len()).max(1);
        let lease_until = now + self.policy.lease();
        let mut claimed = Vec::with_capacity(capacity);
        let mut with_more = Vec::new();
        for due in companies {
            let room = capacity - claimed.len();
            if room == 0 {
                break;
            }
            let take = share.min(room);
            let got = self
                .schedule
                .claim_status_checks(*due, take as u32, now, lease_until)?;
            if got.len() == take {
                with_more.push(*due);
            }
            claimed.extend(got);
        }
        let mut more_left = false;
        for due in with_more {
            let room = capacity - claimed.len();
            if room == 0 {
                more_left = true;
                break;
            }
            let got = self
                .schedule
                .claim_status_checks(due, room as u32, now, lease_until)?;
            // a sweep hands out one batch a call: a full share may be followed by an empty
            // second claim while its pass still has batches to go
            more_left |= got.len() == room || got.is_empty();
            claimed.extend(got);
        }
        Ok((claimed, more_left))
    }

    /// Hands back the sweep batches this call checked (none: no statement).
    fn advance_sweeps(
        &self,
        leases: &[StatusSweepLease],
        now: DateTime<Utc>,
    ) -> Result<(), RepoError> {
        if leases.is_empty() {
            return Ok(());
        }
        self.schedule.advance_status_sweeps(leases, now)
    }

    /// What to write about `item`'s next check, which the check left in `status`: nothing for
    /// a swept request that stays in its lane (the point of the sweep).
    fn schedule(
        &self,
        item: &StatusCheckItem,
        status: ConsentStatus,
        now: DateTime<Utc>,
    ) -> Option<ScheduledStatusCheck> {
        let next = self.policy.next_check(status, item.interval_seconds, now);
        if let (Some(lease), NextStatusCheck::Sweep { lane, .. }) = (item.sweep, next) {
            if lease.lane == lane {
                return None;
            }
        }
        Some(ScheduledStatusCheck {
            company_id: item.company_id,
            id: item.id,
            next,
        })
    }

    /// As [`Self::schedule`], unless the PGCC told when the request moves next
    /// ([`PgccConsentStatus::next_change_at`], the sandbox's timeline) and that comes before the
    /// check the policy would make: then the request is checked at that time, by its own row.
    fn schedule_told(
        &self,
        item: &StatusCheckItem,
        status: ConsentStatus,
        next_change_at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Option<ScheduledStatusCheck> {
        let open = matches!(status, ConsentStatus::Pending | ConsentStatus::Active);
        let policy_at = self
            .policy
            .next_interval(status, item.interval_seconds)
            .map(|interval| now + interval);
        match (next_change_at, policy_at) {
            (Some(at), Some(policy_at)) if open && at < policy_at => Some(ScheduledStatusCheck {
                company_id: item.company_id,
                id: item.id,
                next: NextStatusCheck::At {
                    at: at.max(now),
                    // the interval that brought it here, so a pendente's growth goes on after
                    interval_seconds: item.interval_seconds,
                },
            }),
            _ => self.schedule(item, status, now),
        }
    }

    /// Skips `item` this round and checks it again later, later each time the PGCC keeps
    /// answering a status we do not know. A failure to store the backoff is logged only: the
    /// request is then checked when its lease ends, and its neighbours are applied all the same.
    fn back_off_unknown_status(&self, item: &StatusCheckItem, now: DateTime<Utc>) {
        let since = item.unknown_status_since.unwrap_or(now);
        let next_check_at = now + unknown_status_backoff(now - since, self.policy.poll);
        tracing::warn!(
            empresa_id = %item.company_id,
            solicitacao_id = %item.id,
            pgcc_id = %item.pgcc_id,
            desde = %since,
            proxima_verificacao = %next_check_at,
            "status poll: the PGCC answered a status we do not know; skipped, checked again later"
        );
        if let Err(e) =
            self.schedule
                .defer_status_check(item.company_id, item.id, since, next_check_at)
        {
            tracing::warn!(
                solicitacao_id = %item.id,
                error = format!("{e:#}"),
                "status poll: could not back off a request with an unknown status"
            );
        }
    }
}

/// How long to wait before asking again about a request whose status the PGCC has answered
/// unknown for `unknown_for`: twice the usual interval at first, then as long as it has lasted
/// (so the wait doubles from check to check), at most [`UNKNOWN_STATUS_MAX_BACKOFF_SECONDS`].
pub fn unknown_status_backoff(unknown_for: Duration, recheck_after: Duration) -> Duration {
    let max = Duration::seconds(UNKNOWN_STATUS_MAX_BACKOFF_SECONDS);
    (recheck_after * 2).max(unknown_for).min(max)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use chrono::{DateTime, Utc};
    use domain::CompanyId;
    use mockall::predicate::eq;
    use ports::{
        MockConsentRequestRepository, MockPgccCallBudget, MockPgccGateway, MockStatusCheckSchedule,
        PgccConsentStatus,
    };
    use uuid::Uuid;

    use super::*;
    use crate::test_support::{fixed_clock, now};

    /// The poller's two stores, mocked: the requests (their transitions) and the schedule (the
    /// claims and what each check leaves for the next).
    #[derive(Default)]
    struct Stores {
        requests: MockConsentRequestRepository,
        schedule: MockStatusCheckSchedule,
    }

    fn item(n: u128, status: ConsentStatus) -> StatusCheckItem {
        StatusCheckItem {
            id: Uuid::from_u128(n),
            company_id: CompanyId(Uuid::from_u128(0xe0 + n % 2)),
            pgcc_id: format!("pgcc-{n}"),
            status,
            unknown_status_since: None,
            due_at: now() - Duration::seconds(1),
            interval_seconds: 0,
            sweep: None,
        }
    }

    /// `item`, claimed by its company's sweep of `lane`.
    fn swept(n: u128, status: ConsentStatus, lane: StatusSweepLane) -> StatusCheckItem {
        let item = item(n, status);
        StatusCheckItem {
            sweep: Some(StatusSweepLease {
                company_id: item.company_id,
                lane,
                token: now() + Duration::seconds(60),
            }),
            ..item
        }
    }

    /// Expects one `schedule_status_checks` call and keeps what it was given.
    fn recording_schedules(
        schedule: &mut MockStatusCheckSchedule,
    ) -> Arc<Mutex<Vec<ScheduledStatusCheck>>> {
        let scheduled: Arc<Mutex<Vec<ScheduledStatusCheck>>> = Arc::default();
        let recorded = scheduled.clone();
        schedule
            .expect_schedule_status_checks()
            .times(1)
            .returning(move |s| {
                recorded.lock().unwrap().extend(s.to_vec());
                Ok(())
            });
        scheduled
    }

    /// The recorded schedules as (request number, next check), by request.
    fn by_id(scheduled: &Mutex<Vec<ScheduledStatusCheck>>) -> Vec<(u128, NextStatusCheck)> {
        let mut by_id: Vec<(u128, NextStatusCheck)> = scheduled
            .lock()
            .unwrap()
            .iter()
            .map(|s| (s.id.as_u128(), s.next))
            .collect();
        by_id.sort_by_key(|(id, _)| *id);
        by_id
    }

    fn policy() -> StatusCheckPolicy {
        StatusCheckPolicy {
            poll: Duration::seconds(30),
            pending_max: Duration::seconds(300),
            active_every: Duration::seconds(900),
            ids_per_call: 200,
        }
    }

    /// A budget that always has a call left.
    fn open_budget() -> MockPgccCallBudget {
        let mut budget = MockPgccCallBudget::new();
        budget.expect_try_take().returning(|_| Ok(None));
        budget
    }

    fn answer(n: u128, status: ConsentStatus) -> PgccConsentStatus {
        PgccConsentStatus {
            pgcc_id: format!("pgcc-{n}"),
            status: Some(status),
            reason: None,
            next_change_at: None,
            company_cnpj: None,
        }
    }

    /// The PGCC names a status we do not know for request `n`.
    fn odd_answer(n: u128) -> PgccConsentStatus {
        PgccConsentStatus {
            pgcc_id: format!("pgcc-{n}"),
            status: None,
            reason: None,
            next_change_at: None,
            company_cnpj: None,
        }
    }

    type TransitionCall = (
        CompanyId,
        Uuid,
        ConsentStatus,
        ConsentStatus,
        TransitionCause,
        Option<Reason>,
        DateTime<Utc>,
    );

    /// A repository whose due checks are `claimed` (their companies have due checks; each
    /// company hands out its own, leased until now + 60 s), answering each transition with
    /// `moved(id)`, recording it, and taking any schedule.
    fn repository(
        claimed: Vec<StatusCheckItem>,
        moved: fn(Uuid) -> Result<bool, RepoError>,
        transitions: Arc<Mutex<Vec<TransitionCall>>>,
    ) -> Stores {
        let mut stores = claiming(claimed);
        stores.requests.expect_transition().returning(
            move |company, id, from, to, cause, reason, at| {
                transitions
                    .lock()
                    .unwrap()
                    .push((company, id, from, to, cause, reason, at));
                moved(id)
            },
        );
        stores
            .schedule
            .expect_schedule_status_checks()
            .returning(|_| Ok(()));
        stores
    }

    /// A repository whose due checks are `claimed` (sweeps advance without a word).
    fn claiming(claimed: Vec<StatusCheckItem>) -> Stores {
        let mut stores = claiming_only(claimed);
        stores
            .schedule
            .expect_advance_status_sweeps()
            .returning(|_, _| Ok(()));
        stores
    }

    /// A repository whose due checks are `claimed`, with no expectation on the sweeps.
    fn claiming_only(claimed: Vec<StatusCheckItem>) -> Stores {
        let mut stores = Stores::default();
        let mut companies: Vec<DueStatusChecks> = claimed
            .iter()
            .map(|i| DueStatusChecks::all(i.company_id))
            .collect();
        companies.sort();
        companies.dedup();
        stores
            .schedule
            .expect_companies_with_due_status_checks()
            .withf(|at, after, _| *at == now() && after.is_none())
            .times(1)
            .returning(move |_, _, _| Ok(companies.clone()));
        let mut left = claimed;
        stores
            .schedule
            .expect_claim_status_checks()
            .withf(|_, _, at, lease| *at == now() && *lease == now() + Duration::seconds(60))
            .returning(move |due, limit, _, _| {
                let (mine, rest): (Vec<_>, Vec<_>) =
                    left.drain(..).partition(|i| i.company_id == due.company_id);
                left = rest;
                let (taken, kept) = mine.split_at(mine.len().min(limit as usize));
                left.extend(kept.to_vec());
                Ok(taken.to_vec())
            });
        stores
    }

    /// A PGCC answering `answers` once, recording the ids it was asked about.
    fn pgcc(
        answers: Result<Vec<PgccConsentStatus>, PgccError>,
        asked: Arc<Mutex<Vec<Vec<String>>>>,
    ) -> MockPgccGateway {
        let mut pgcc = MockPgccGateway::new();
        let mut answers = Some(answers);
        pgcc.expect_consent_statuses()
            .times(1)
            .returning(move |ids| {
                asked.lock().unwrap().push(ids.to_vec());
                answers.take().unwrap()
            });
        pgcc.expect_revoke_consent_request().times(0);
        pgcc.expect_create_consent_request().times(0);
        pgcc
    }

    fn run(stores: Stores, pgcc: MockPgccGateway) -> Result<PollReport, PollError> {
        PollConsentStatuses::new(
            Arc::new(stores.requests),
            Arc::new(stores.schedule),
            Arc::new(pgcc),
            Arc::new(open_budget()),
            fixed_clock(),
            policy(),
        )
        .run_once()
    }

    fn always_moved(_: Uuid) -> Result<bool, RepoError> {
        Ok(true)
    }

    #[test]
    fn every_difference_the_pgcc_reports_is_stored_as_a_pgcc_transition() {
        use ConsentStatus::*;
        let claimed = vec![
            item(1, Pending),
            item(2, Pending),
            item(3, Active),
            item(4, Pending),
            item(5, Active),
        ];
        let transitions = Arc::new(Mutex::new(Vec::new()));
        let asked = Arc::new(Mutex::new(Vec::new()));

        let report = run(
            repository(claimed.clone(), always_moved, transitions.clone()),
            pgcc(
                Ok(vec![
                    answer(1, Active),
                    answer(2, Refused),
                    answer(3, Revoked),
                    answer(4, Expired),
                    answer(5, Expired),
                ]),
                asked.clone(),
            ),
        )
        .unwrap();

        assert_eq!(
            report,
            PollReport {
                checked: 5,
                changed: 5,
                unknown: 0,
                failed: 0,
                closed: 0,
                integrity_incidents: 0,
                throttled: None,
                more_due: false,
            }
        );
        // one call; the companies' checks come in turns, so in no particular order
        let mut asked = asked.lock().unwrap().clone();
        asked[0].sort();
        assert_eq!(
            asked,
            vec![vec!["pgcc-1", "pgcc-2", "pgcc-3", "pgcc-4", "pgcc-5"]]
        );
        let expected: Vec<TransitionCall> = [
            (1, Pending, Active),
            (2, Pending, Refused),
            (3, Active, Revoked),
            (4, Pending, Expired),
            (5, Active, Expired),
        ]
        .into_iter()
        .map(|(n, from, to)| {
            let it = item(n, from);
            (
                it.company_id,
                it.id,
                from,
                to,
                TransitionCause::Pgcc,
                None,
                now(),
            )
        })
        .collect();
        let mut stored = transitions.lock().unwrap().clone();
        stored.sort_by_key(|t| t.1);
        assert_eq!(stored, expected);
    }

    #[test]
    fn the_reason_the_pgcc_reports_is_stored_with_the_change_cut_to_500_characters() {
        use ConsentStatus::*;
        let transitions = Arc::new(Mutex::new(Vec::new()));
        let mut refused = answer(1, Refused);
        refused.reason = Some("não reconheço esta empresa".to_owned());
        let mut revoked = answer(2, Revoked);
        revoked.reason = Some("x".repeat(600));
        let mut withdrawn = answer(3, Revoked);
        withdrawn.reason = Some("   ".to_owned());

        run(
            repository(
                vec![item(1, Pending), item(2, Active), item(3, Pending)],
                always_moved,
                transitions.clone(),
            ),
            pgcc(Ok(vec![refused, revoked, withdrawn]), Arc::default()),
        )
        .unwrap();

        let mut stored = transitions.lock().unwrap().clone();
        stored.sort_by_key(|t| t.1);
        let reasons: Vec<Option<String>> = stored
            .iter()
            .map(|t| t.5.as_ref().map(|m| m.as_str().to_owned()))
            .collect();
        assert_eq!(
            reasons,
            [
                Some("não reconheço esta empresa".to_owned()),
                Some("x".repeat(500)),
                None
            ]
        );
    }

    #[test]
    fn an_unchanged_status_stores_nothing_but_is_counted_as_checked() {
        let transitions = Arc::new(Mutex::new(Vec::new()));

        let report = run(
            repository(
                vec![
                    item(1, ConsentStatus::Active),
                    item(2, ConsentStatus::Pending),
                ],
                always_moved,
                transitions.clone(),
            ),
            pgcc(
                Ok(vec![
                    answer(1, ConsentStatus::Active),
                    answer(2, ConsentStatus::Pending),
                ]),
                Arc::new(Mutex::new(Vec::new())),
            ),
        )
        .unwrap();

        assert_eq!(
            report,
            PollReport {
                checked: 2,
                changed: 0,
                unknown: 0,
                failed: 0,
                closed: 0,
                integrity_incidents: 0,
                throttled: None,
                more_due: false,
            }
        );
        assert!(transitions.lock().unwrap().is_empty());
    }

    #[test]
    fn nothing_due_is_an_empty_round_without_a_pgcc_call() {
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_consent_statuses().times(0);
        let transitions = Arc::new(Mutex::new(Vec::new()));

        let report = run(
            repository(Vec::new(), always_moved, transitions.clone()),
            pgcc,
        )
        .unwrap();

        assert_eq!(report, PollReport::default());
        assert!(transitions.lock().unwrap().is_empty());
    }

    #[test]
    fn a_status_the_state_machine_cannot_reach_is_skipped_and_the_others_applied() {
        use ConsentStatus::*;
        let transitions = Arc::new(Mutex::new(Vec::new()));

        let report = run(
            repository(
                vec![item(1, Active), item(2, Active), item(3, Pending)],
                always_moved,
                transitions.clone(),
            ),
            pgcc(
                Ok(vec![
                    answer(1, Pending),
                    answer(2, Refused),
                    answer(3, Active),
                ]),
                Arc::new(Mutex::new(Vec::new())),
            ),
        )
        .unwrap();

        assert_eq!(
            report,
            PollReport {
                checked: 3,
                changed: 1,
                unknown: 0,
                failed: 0,
                closed: 0,
                integrity_incidents: 0,
                throttled: None,
                more_due: false,
            }
        );
        let transitions = transitions.lock().unwrap();
        assert_eq!(transitions.len(), 1);
        assert_eq!(transitions[0].1, Uuid::from_u128(3));
        assert_eq!((transitions[0].2, transitions[0].3), (Pending, Active));
    }

    #[test]
    fn a_request_the_pgcc_does_not_know_is_skipped_and_the_others_applied() {
        let transitions = Arc::new(Mutex::new(Vec::new()));

        let report = run(
            repository(
                vec![
                    item(1, ConsentStatus::Pending),
                    item(2, ConsentStatus::Pending),
                ],
                always_moved,
                transitions.clone(),
            ),
            pgcc(
                Ok(vec![answer(2, ConsentStatus::Active)]),
                Arc::new(Mutex::new(Vec::new())),
            ),
        )
        .unwrap();

        assert_eq!(
            report,
            PollReport {
                checked: 2,
                changed: 1,
                unknown: 0,
                failed: 0,
                closed: 0,
                integrity_incidents: 0,
                throttled: None,
                more_due: false,
            }
        );
        assert_eq!(transitions.lock().unwrap()[0].1, Uuid::from_u128(2));
    }

    #[test]
    fn a_request_the_pgcc_does_not_know_is_noted_and_an_incident_counted_once_the_window_passed() {
        let window = Duration::seconds(600);
        let mut log = ports::MockAuditLogRepository::new();
        log.expect_note_pgcc_not_found()
            .withf(move |_, id, at, w| *id == Uuid::from_u128(1) && *at == now() && *w == window)
            .times(1)
            .returning(|_, id, at, _| {
                Ok(Some(ports::IntegrityIncident {
                    request: id,
                    pgcc_id: "pgcc-1".to_owned(),
                    not_found_since: at - Duration::seconds(700),
                    recorded_at: at,
                }))
            });
        // the one the PGCC answered: an earlier "not found" of it is forgotten
        log.expect_forget_pgcc_not_found()
            .withf(|_, ids| ids.to_vec() == vec![Uuid::from_u128(2)])
            .times(1)
            .returning(|_, _| Ok(()));
        let stores = repository(
            vec![
                item(1, ConsentStatus::Active),
                item(2, ConsentStatus::Active),
            ],
            always_moved,
            Arc::new(Mutex::new(Vec::new())),
        );
        let report = PollConsentStatuses::new(
            Arc::new(stores.requests),
            Arc::new(stores.schedule),
            Arc::new(pgcc(
                Ok(vec![answer(2, ConsentStatus::Active)]),
                Arc::new(Mutex::new(Vec::new())),
            )),
            Arc::new(open_budget()),
            fixed_clock(),
            policy(),
        )
        .with_integrity_incidents(Arc::new(log), window)
        .run_once()
        .unwrap();

        assert_eq!((report.checked, report.integrity_incidents), (2, 1));
    }

    #[test]
    fn answers_about_requests_not_claimed_are_ignored() {
        let transitions = Arc::new(Mutex::new(Vec::new()));

        let report = run(
            repository(
                vec![item(1, ConsentStatus::Pending)],
                always_moved,
                transitions.clone(),
            ),
            pgcc(
                Ok(vec![
                    answer(9, ConsentStatus::Active),
                    answer(1, ConsentStatus::Pending),
                ]),
                Arc::new(Mutex::new(Vec::new())),
            ),
        )
        .unwrap();

        assert_eq!(
            report,
            PollReport {
                checked: 1,
                changed: 0,
                unknown: 0,
                failed: 0,
                closed: 0,
                integrity_incidents: 0,
                throttled: None,
                more_due: false,
            }
        );
        assert!(transitions.lock().unwrap().is_empty());
    }

    #[test]
    fn a_transition_lost_to_another_process_is_not_counted() {
        let transitions = Arc::new(Mutex::new(Vec::new()));

        let report = run(
            repository(
                vec![
                    item(1, ConsentStatus::Pending),
                    item(2, ConsentStatus::Active),
                ],
                |id| Ok(id != Uuid::from_u128(1)),
                transitions.clone(),
            ),
            pgcc(
                Ok(vec![
                    answer(1, ConsentStatus::Active),
                    answer(2, ConsentStatus::Revoked),
                ]),
                Arc::new(Mutex::new(Vec::new())),
            ),
        )
        .unwrap();

        assert_eq!(
            report,
            PollReport {
                checked: 2,
                changed: 1,
                unknown: 0,
                failed: 0,
                closed: 0,
                integrity_incidents: 0,
                throttled: None,
                more_due: false,
            }
        );
        assert_eq!(transitions.lock().unwrap().len(), 2);
    }

    #[test]
    fn a_pgcc_failure_fails_the_round_and_stores_nothing() {
        let transitions = Arc::new(Mutex::new(Vec::new()));

        let result = run(
            repository(
                vec![item(1, ConsentStatus::Pending)],
                always_moved,
                transitions.clone(),
            ),
            pgcc(
                Err(PgccError::Failed { status: 503 }),
                Arc::new(Mutex::new(Vec::new())),
            ),
        );

        assert!(
            matches!(
                result,
                Err(PollError::Pgcc(PgccError::Failed { status: 503 }))
            ),
            "{result:?}"
        );
        assert!(transitions.lock().unwrap().is_empty());
    }

    #[test]
    fn a_failing_claim_fails_the_round_without_a_pgcc_call() {
        let mut stores = Stores::default();
        stores
            .schedule
            .expect_companies_with_due_status_checks()
            .returning(|_, _, _| Ok(vec![DueStatusChecks::all(CompanyId(Uuid::from_u128(0xe0)))]));
        stores
            .schedule
            .expect_claim_status_checks()
            .times(1)
            .returning(|_, _, _, _| Err(RepoError::Unavailable(anyhow::anyhow!("pool timeout"))));
        stores.requests.expect_transition().times(0);
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_consent_statuses().times(0);

        let result = run(stores, pgcc);

        assert!(
            matches!(result, Err(PollError::Repo(RepoError::Unavailable(_)))),
            "{result:?}"
        );
    }

    #[test]
    fn a_failing_transition_is_that_requests_alone_and_the_round_goes_on() {
        let transitions = Arc::new(Mutex::new(Vec::new()));

        let report = run(
            repository(
                vec![
                    item(1, ConsentStatus::Active),
                    item(2, ConsentStatus::Active),
                    item(3, ConsentStatus::Pending),
                ],
                |id| {
                    if id == Uuid::from_u128(1) {
                        Err(RepoError::Unexpected(anyhow::anyhow!(
                            "invalid byte sequence for encoding \"UTF8\": 0x00"
                        )))
                    } else {
                        Ok(true)
                    }
                },
                transitions.clone(),
            ),
            pgcc(
                Ok(vec![
                    answer(1, ConsentStatus::Revoked),
                    answer(2, ConsentStatus::Revoked),
                    answer(3, ConsentStatus::Active),
                ]),
                Arc::new(Mutex::new(Vec::new())),
            ),
        )
        .unwrap();

        assert_eq!(
            report,
            PollReport {
                checked: 3,
                changed: 2,
                unknown: 0,
                failed: 1,
                closed: 0,
                integrity_incidents: 0,
                throttled: None,
                more_due: false,
            }
        );
        assert_eq!(transitions.lock().unwrap().len(), 3, "all three were tried");
    }

    type Deferral = (CompanyId, Uuid, DateTime<Utc>, DateTime<Utc>);

    #[test]
    fn an_unknown_status_skips_that_request_alone_counts_it_and_backs_it_off() {
        use ConsentStatus::*;
        let transitions = Arc::new(Mutex::new(Vec::new()));
        let deferred: Arc<Mutex<Vec<Deferral>>> = Arc::default();
        let mut stores = repository(
            vec![item(1, Pending), item(2, Active), item(3, Pending)],
            always_moved,
            transitions.clone(),
        );
        let recorded = deferred.clone();
        stores
            .schedule
            .expect_defer_status_check()
            .times(1)
            .returning(move |company, id, since, next| {
                recorded.lock().unwrap().push((company, id, since, next));
                Ok(true)
            });
        stores.schedule.expect_clear_unknown_status().times(0);

        let report = run(
            stores,
            pgcc(
                Ok(vec![answer(1, Active), odd_answer(2), answer(3, Refused)]),
                Arc::new(Mutex::new(Vec::new())),
            ),
        )
        .unwrap();

        assert_eq!(
            report,
            PollReport {
                checked: 3,
                changed: 2,
                unknown: 1,
                failed: 0,
                closed: 0,
                integrity_incidents: 0,
                throttled: None,
                more_due: false,
            }
        );
        let moved: Vec<_> = transitions
            .lock()
            .unwrap()
            .iter()
            .map(|t| (t.1, t.3))
            .collect();
        assert_eq!(
            moved,
            [(Uuid::from_u128(1), Active), (Uuid::from_u128(3), Refused)],
            "its neighbours are applied"
        );
        let odd = item(2, Active);
        assert_eq!(
            *deferred.lock().unwrap(),
            [(odd.company_id, odd.id, now(), now() + Duration::seconds(60))],
            "first time: since now, checked again after twice the interval"
        );
    }

    #[test]
    fn a_lasting_unknown_status_waits_longer_each_time_up_to_the_cap() {
        let thirty = Duration::seconds(30);
        assert_eq!(
            unknown_status_backoff(Duration::zero(), thirty),
            Duration::seconds(60)
        );
        assert_eq!(
            unknown_status_backoff(Duration::seconds(60), thirty),
            Duration::seconds(60)
        );
        assert_eq!(
            unknown_status_backoff(Duration::seconds(120), thirty),
            Duration::seconds(120)
        );
        assert_eq!(
            unknown_status_backoff(Duration::seconds(240), thirty),
            Duration::seconds(240)
        );
        assert_eq!(
            unknown_status_backoff(Duration::days(3), thirty),
            Duration::seconds(UNKNOWN_STATUS_MAX_BACKOFF_SECONDS)
        );

        let mut odd = item(2, ConsentStatus::Active);
        odd.unknown_status_since = Some(now() - Duration::seconds(240));
        let deferred: Arc<Mutex<Vec<Deferral>>> = Arc::default();
        let mut stores = repository(vec![odd.clone()], always_moved, Arc::default());
        let recorded = deferred.clone();
        stores
            .schedule
            .expect_defer_status_check()
            .times(1)
            .returning(move |company, id, since, next| {
                recorded.lock().unwrap().push((company, id, since, next));
                Ok(true)
            });

        run(stores, pgcc(Ok(vec![odd_answer(2)]), Arc::default())).unwrap();

        assert_eq!(
            *deferred.lock().unwrap(),
            [(
                odd.company_id,
                odd.id,
                now() - Duration::seconds(240),
                now() + Duration::seconds(240)
            )],
            "the first sighting is kept; the wait doubles"
        );
    }

    #[test]
    fn a_failing_backoff_is_logged_and_the_neighbours_are_applied_all_the_same() {
        let transitions = Arc::new(Mutex::new(Vec::new()));
        let mut stores = repository(
            vec![
                item(1, ConsentStatus::Active),
                item(2, ConsentStatus::Pending),
            ],
            always_moved,
            transitions.clone(),
        );
        stores
            .schedule
            .expect_defer_status_check()
            .times(1)
            .returning(|_, _, _, _| Err(RepoError::Unavailable(anyhow::anyhow!("gone"))));

        let report = run(
            stores,
            pgcc(
                Ok(vec![odd_answer(1), answer(2, ConsentStatus::Active)]),
                Arc::default(),
            ),
        )
        .unwrap();

        assert_eq!((report.changed, report.unknown), (1, 1));
        assert_eq!(transitions.lock().unwrap()[0].1, Uuid::from_u128(2));
    }

    #[test]
    fn a_known_status_again_forgets_the_oddity_and_is_applied() {
        let mut back = item(1, ConsentStatus::Active);
        back.unknown_status_since = Some(now() - Duration::seconds(600));
        let transitions = Arc::new(Mutex::new(Vec::new()));
        let mut stores = repository(vec![back.clone()], always_moved, transitions.clone());
        stores
            .schedule
            .expect_clear_unknown_status()
            .with(eq(back.company_id), eq(back.id))
            .times(1)
            .returning(|_, _| Ok(()));
        stores.schedule.expect_defer_status_check().times(0);

        let report = run(
            stores,
            pgcc(Ok(vec![answer(1, ConsentStatus::Revoked)]), Arc::default()),
        )
        .unwrap();

        assert_eq!((report.changed, report.unknown), (1, 0));
        assert_eq!(transitions.lock().unwrap()[0].3, ConsentStatus::Revoked);
    }

    #[test]
    fn a_pending_request_waits_longer_each_check_up_to_the_cap_and_an_active_one_the_fixed_period()
    {
        use ConsentStatus::*;
        let policy = policy();
        let mut last = 0;
        let mut waits = Vec::new();
        for _ in 0..6 {
            let next = policy.next_interval(Pending, last).unwrap();
            last = next.num_seconds() as u32;
            waits.push(last);
        }
        assert_eq!(waits, [30, 60, 120, 240, 300, 300]);
        assert_eq!(
            policy.next_interval(Active, 0),
            Some(Duration::seconds(900))
        );
        assert_eq!(
            policy.next_interval(Active, 240),
            Some(Duration::seconds(900))
        );
        for done in [Refused, Expired, Revoked] {
            assert_eq!(policy.next_interval(done, 30), None);
        }
    }

    #[test]
    fn each_check_is_scheduled_by_the_status_it_leaves_and_a_final_one_is_unscheduled() {
        use ConsentStatus::*;
        let mut stores = claiming(vec![
            item(1, Active),
            StatusCheckItem {
                interval_seconds: 60,
                ..item(2, Pending)
            },
            item(3, Pending),
            item(4, Active),
            // revoked through the API since it was scheduled: not asked about
            item(5, Revoked),
        ]);
        stores
            .requests
            .expect_transition()
            .returning(|_, _, _, _, _, _, _| Ok(true));
        let scheduled = recording_schedules(&mut stores.schedule);
        let asked = Arc::new(Mutex::new(Vec::new()));

        run(
            stores,
            pgcc(
                Ok(vec![
                    answer(1, Active),
                    answer(2, Pending),
                    answer(3, Active),
                    answer(4, Revoked),
                ]),
                asked.clone(),
            ),
        )
        .unwrap();

        assert_eq!(
            asked.lock().unwrap()[0].len(),
            4,
            "the revoked one is not asked"
        );
        let by_id = by_id(&scheduled);
        let active = NextStatusCheck::Sweep {
            lane: StatusSweepLane::Active,
            period_seconds: 900,
            first_pass_at: now() + Duration::seconds(900),
        };
        assert_eq!(
            by_id,
            [
                (1, active),
                (
                    2,
                    NextStatusCheck::At {
                        at: now() + Duration::seconds(120),
                        interval_seconds: 120
                    }
                ),
                (3, active),
                (4, NextStatusCheck::Never),
                (5, NextStatusCheck::Never)
            ]
        );
    }

    #[test]
    fn a_move_the_pgcc_announces_is_checked_at_its_time_and_only_when_sooner_than_the_policy() {
        use ConsentStatus::*;
        use StatusSweepLane as Lane;
        let mut stores = claiming(vec![
            // swept, active, its subject revokes in 5 s (the sandbox's timeline)
            swept(1, Active, Lane::Active),
            // accepted now, revoked in 5 s
            item(2, Pending),
            // an announced move later than the policy's own check changes nothing
            item(3, Pending),
            // a final status is never checked again, announced or not
            item(4, Pending),
        ]);
        stores
            .requests
            .expect_transition()
            .returning(|_, _, _, _, _, _, _| Ok(true));
        stores
            .schedule
            .expect_advance_status_sweeps()
            .returning(|_, _| Ok(()));
        let scheduled = recording_schedules(&mut stores.schedule);
        let told = |n: u128, status: ConsentStatus, seconds: i64| PgccConsentStatus {
            next_change_at: Some(now() + Duration::seconds(seconds)),
            ..answer(n, status)
        };

        run(
            stores,
            pgcc(
                Ok(vec![
                    told(1, Active, 5),
                    told(2, Active, 5),
                    told(3, Pending, 3_600),
                    told(4, Refused, 5),
                ]),
                Arc::default(),
            ),
        )
        .unwrap();

        let by_id = by_id(&scheduled);
        let in_5_s = NextStatusCheck::At {
            at: now() + Duration::seconds(5),
            interval_seconds: 0,
        };
        assert_eq!(
            by_id,
            [
                (1, in_5_s),
                (2, in_5_s),
                (
                    3,
                    NextStatusCheck::At {
                        at: now() + Duration::seconds(30),
                        interval_seconds: 30
                    }
                ),
                (4, NextStatusCheck::Never),
            ]
        );
    }

    #[test]
    fn a_pending_request_joins_its_companys_sweep_once_its_interval_reaches_the_cap() {
        use ConsentStatus::*;
        let policy = policy();
        let mut last = 0;
        let mut nexts = Vec::new();
        for _ in 0..5 {
            let next = policy.next_check(Pending, last, now());
            if let NextStatusCheck::At {
                interval_seconds, ..
            } = next
            {
                last = interval_seconds;
            }
            nexts.push(next);
        }
        let at = |s: i64| NextStatusCheck::At {
            at: now() + Duration::seconds(s),
            interval_seconds: s as u32,
        };
        let pending_sweep = NextStatusCheck::Sweep {
            lane: StatusSweepLane::Pending,
            period_seconds: 300,
            first_pass_at: now() + Duration::seconds(300),
        };
        assert_eq!(
            nexts,
            [at(30), at(60), at(120), at(240), pending_sweep],
            "the growing intervals, then the sweep at the cap"
        );
        assert_eq!(policy.next_check(Revoked, 0, now()), NextStatusCheck::Never);
    }

    #[test]
    fn a_swept_check_that_finds_no_change_writes_nothing_and_its_sweep_moves_on() {
        use ConsentStatus::*;
        use StatusSweepLane as Lane;
        let mut stores = claiming_only(vec![
            swept(1, Active, Lane::Active),
            swept(3, Active, Lane::Active),
            // pendente in the sweep, found accepted: moves to the active lane
            swept(5, Pending, Lane::Pending),
            // revoked through the API since: leaves the sweep
            swept(7, Revoked, Lane::Active),
        ]);
        stores
            .requests
            .expect_transition()
            .returning(|_, _, _, _, _, _, _| Ok(true));
        let scheduled = recording_schedules(&mut stores.schedule);
        let advanced: Arc<Mutex<Vec<StatusSweepLease>>> = Arc::default();
        let seen = advanced.clone();
        stores
            .schedule
            .expect_advance_status_sweeps()
            .times(1)
            .returning(move |leases, _| {
                seen.lock().unwrap().extend(leases.to_vec());
                Ok(())
            });

        let report = run(
            stores,
            pgcc(
                Ok(vec![
                    answer(1, Active),
                    answer(3, Active),
                    answer(5, Active),
                ]),
                Arc::default(),
            ),
        )
        .unwrap();

        assert_eq!(report.checked, 3);
        let mut written: Vec<(u128, NextStatusCheck)> = scheduled
            .lock()
            .unwrap()
            .iter()
            .map(|s| (s.id.as_u128(), s.next))
            .collect();
        written.sort_by_key(|(id, _)| *id);
        assert_eq!(
            written,
            [
                (
                    5,
                    NextStatusCheck::Sweep {
                        lane: Lane::Active,
                        period_seconds: 900,
                        first_pass_at: now() + Duration::seconds(900)
                    }
                ),
                (7, NextStatusCheck::Never)
            ],
            "the unchanged ones (1 and 3) write nothing"
        );
        let mut lanes: Vec<(u128, StatusSweepLane)> = advanced
            .lock()
            .unwrap()
            .iter()
            .map(|l| (l.company_id.0.as_u128(), l.lane))
            .collect();
        lanes.sort();
        assert_eq!(
            lanes,
            [(0xe1, Lane::Pending), (0xe1, Lane::Active)],
            "each batch handed back once"
        );
    }

    #[test]
    fn a_swept_batch_with_a_failing_change_is_not_handed_back_so_it_is_read_again() {
        use ConsentStatus::*;
        let mut stores = claiming_only(vec![
            swept(1, Active, StatusSweepLane::Active),
            swept(2, Active, StatusSweepLane::Active),
        ]);
        stores
            .requests
            .expect_transition()
            .returning(|_, id, _, _, _, _, _| {
                if id.as_u128() == 1 {
                    Err(RepoError::Unexpected(anyhow::anyhow!("refused")))
                } else {
                    Ok(true)
                }
            });
        stores
            .schedule
            .expect_schedule_status_checks()
            .returning(|_| Ok(()));
        let advanced: Arc<Mutex<Vec<StatusSweepLease>>> = Arc::default();
        let seen = advanced.clone();
        stores
            .schedule
            .expect_advance_status_sweeps()
            .returning(move |leases, _| {
                seen.lock().unwrap().extend(leases.to_vec());
                Ok(())
            });

        let report = run(
            stores,
            pgcc(
                Ok(vec![answer(1, Revoked), answer(2, Revoked)]),
                Arc::default(),
            ),
        )
        .unwrap();

        assert_eq!((report.changed, report.failed), (1, 1));
        let lanes: Vec<u128> = advanced
            .lock()
            .unwrap()
            .iter()
            .map(|l| l.company_id.0.as_u128())
            .collect();
        assert_eq!(
            lanes,
            [0xe0],
            "request 2's batch moves on; request 1's is read again when its lease ends"
        );
    }

    #[test]
    fn a_call_is_shared_in_turns_so_a_company_with_a_backlog_never_delays_anothers_first_check() {
        let big = CompanyId(Uuid::from_u128(0xe0));
        let small = CompanyId(Uuid::from_u128(0xe1));
        // 250 due checks of one company, 1 of the other; a call carries 200 ids
        let backlog: Vec<StatusCheckItem> = (0..250)
            .map(|n| StatusCheckItem {
                company_id: big,
                ..item(100 + n, ConsentStatus::Active)
            })
            .chain([StatusCheckItem {
                company_id: small,
                ..item(1, ConsentStatus::Pending)
            }])
            .collect();
        let asked = Arc::new(Mutex::new(Vec::new()));

        run(
            repository(backlog, always_moved, Arc::default()),
            pgcc(Ok(Vec::new()), asked.clone()),
        )
        .unwrap();

        let ids = asked.lock().unwrap()[0].clone();
        assert_eq!(ids.len(), 200, "one full call");
        assert!(
            ids.contains(&"pgcc-1".to_owned()),
            "the small company's check: {ids:?}"
        );
    }

    #[test]
    fn a_call_serves_one_company_per_min_share_ids_and_the_next_call_the_next_companies_of_one_lap()
    {
        for (ids_per_call, per_call) in [(500, 5), (1000, 10), (200, 2), (60, 1), (10, 1)] {
            let probes = Arc::new(Mutex::new(Vec::new()));
            let claims = Arc::new(Mutex::new(Vec::new()));
            let (recorded_probes, recorded_claims) = (probes.clone(), claims.clone());
            let companies: Vec<DueStatusChecks> = (1..=25)
                .map(|n| DueStatusChecks::all(CompanyId(Uuid::from_u128(n))))
                .collect();
            let mut stores = Stores::default();
            stores
                .schedule
                .expect_companies_with_due_status_checks()
                .returning(move |_, after, limit| {
                    recorded_probes.lock().unwrap().push((after, limit));
                    Ok(companies.clone())
                });
            stores
                .schedule
                .expect_schedule_status_checks()
                .returning(|_| Ok(()));
            stores
                .schedule
                .expect_claim_status_checks()
                .returning(move |due, _, _, _| {
                    recorded_claims
                        .lock()
                        .unwrap()
                        .push(due.company_id.0.as_u128());
                    Ok(Vec::new())
                });
            let service = PollConsentStatuses::new(
                Arc::new(stores.requests),
                Arc::new(stores.schedule),
                Arc::new(MockPgccGateway::new()),
                Arc::new(open_budget()),
                fixed_clock(),
                StatusCheckPolicy {
                    ids_per_call,
                    ..policy()
                },
            );

            let first = service.run_once().unwrap();
            let served_first = claims.lock().unwrap().clone();
            service.run_once().unwrap();
            let served = claims.lock().unwrap().clone();

            let per_call_u128 = per_call as u128;
            assert_eq!(
                served_first,
                (1..=per_call_u128).collect::<Vec<_>>(),
                "{ids_per_call} ids a call: the lap's first companies"
            );
            assert_eq!(
                served[per_call..],
                (per_call_u128 + 1..=2 * per_call_u128).collect::<Vec<_>>(),
                "the second call: the lap's next companies"
            );
            assert!(first.more_due, "the lap has companies left");
            assert_eq!(
                probes.lock().unwrap().clone(),
                [(None, LAP_COMPANIES)],
                "one probe for the lap, not one a call"
            );
        }
    }

    #[test]
    fn a_drain_goes_on_until_every_company_of_its_lap_had_its_turn_then_stops() {
        // five companies with one due check each, one company a call (10 ids): no call is full,
        // yet the drain must reach all five before it stops (the lap started mid-way)
        let companies: Vec<CompanyId> = (1..=5).map(|n| CompanyId(Uuid::from_u128(n))).collect();
        let all = companies.clone();
        let probes = Arc::new(Mutex::new(0));
        let claims = Arc::new(Mutex::new(Vec::new()));
        let (recorded_probes, recorded_claims) = (probes.clone(), claims.clone());
        let mut stores = Stores::default();
        stores
            .schedule
            .expect_companies_with_due_status_checks()
            .returning(move |_, after, limit| {
                *recorded_probes.lock().unwrap() += 1;
                // in id order from after `after`, wrapping around
                let (before, rest): (Vec<CompanyId>, Vec<CompanyId>) =
                    all.iter().partition(|c| after.is_some_and(|a| **c <= a));
                Ok(rest
                    .into_iter()
                    .chain(before)
                    .take(limit as usize)
                    .map(DueStatusChecks::all)
                    .collect())
            });
        stores
            .schedule
            .expect_claim_status_checks()
            .returning(move |due, _, _, _| {
                let company = due.company_id;
                recorded_claims.lock().unwrap().push(company.0.as_u128());
                Ok(vec![StatusCheckItem {
                    company_id: company,
                    ..item(company.0.as_u128() * 2, ConsentStatus::Pending)
                }])
            });
        stores
            .schedule
            .expect_schedule_status_checks()
            .returning(|_| Ok(()));
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_consent_statuses().returning(|_| Ok(Vec::new()));
        let service = PollConsentStatuses::new(
            Arc::new(stores.requests),
            Arc::new(stores.schedule),
            Arc::new(pgcc),
            Arc::new(open_budget()),
            fixed_clock(),
            StatusCheckPolicy {
                ids_per_call: 10,
                ..policy()
            },
        );
        // a previous lap ended after company 3
        service.lock_turns().last = Some(companies[2]);

        let more: Vec<bool> = (0..5)
            .map(|_| service.run_once().unwrap().more_due)
            .collect();

        assert_eq!(
            claims.lock().unwrap().clone(),
            [4, 5, 1, 2, 3],
            "every company once, in turns"
        );
        assert_eq!(
            more,
            [true, true, true, true, false],
            "the lap's last company ends the drain: none got all it asked for"
        );
        assert_eq!(*probes.lock().unwrap(), 1, "one probe for the lap");
        let report = service.run_once().unwrap();
        assert!(report.more_due, "a new drain begins a new lap");
        assert_eq!(*probes.lock().unwrap(), 2, "found by a new probe");
    }

    #[test]
    fn a_company_is_asked_only_for_the_kinds_its_probe_found_due() {
        let company = CompanyId(Uuid::from_u128(0xe0));
        let mut stores = Stores::default();
        stores
            .schedule
            .expect_companies_with_due_status_checks()
            .returning(move |_, _, _| {
                Ok(vec![DueStatusChecks {
                    company_id: company,
                    scheduled: false,
                    swept: true,
                }])
            });
        stores
            .schedule
            .expect_schedule_status_checks()
            .returning(|_| Ok(()));
        stores
            .schedule
            .expect_claim_status_checks()
            .withf(move |due, _, _, _| {
                *due == DueStatusChecks {
                    company_id: company,
                    scheduled: false,
                    swept: true,
                }
            })
            .times(1)
            .returning(|_, _, _, _| Ok(Vec::new()));

        run(stores, MockPgccGateway::new()).unwrap();
    }

    #[test]
    fn a_throttled_call_keeps_its_companies_turn_for_the_next_call() {
        let companies: Vec<DueStatusChecks> = (1..=3)
            .map(|n| DueStatusChecks::all(CompanyId(Uuid::from_u128(n))))
            .collect();
        let claims = Arc::new(Mutex::new(Vec::new()));
        let recorded = claims.clone();
        let mut stores = Stores::default();
        stores
            .schedule
            .expect_companies_with_due_status_checks()
            .times(1)
            .returning(move |_, _, _| Ok(companies.clone()));
        stores
            .schedule
            .expect_schedule_status_checks()
            .returning(|_| Ok(()));
        stores
            .schedule
            .expect_claim_status_checks()
            .returning(move |due, _, _, _| {
                recorded.lock().unwrap().push(due.company_id.0.as_u128());
                Ok(Vec::new())
            });
        let mut budget = MockPgccCallBudget::new();
        let mut calls = 0;
        budget.expect_try_take().returning(move |_| {
            calls += 1;
            Ok((calls == 1).then_some(std::time::Duration::from_millis(50)))
        });
        let service = PollConsentStatuses::new(
            Arc::new(stores.requests),
            Arc::new(stores.schedule),
            Arc::new(MockPgccGateway::new()),
            Arc::new(budget),
            fixed_clock(),
            StatusCheckPolicy {
                ids_per_call: 200,
                ..policy()
            },
        );

        assert!(service.run_once().unwrap().throttled.is_some());
        service.run_once().unwrap();

        assert_eq!(claims.lock().unwrap().clone(), [1, 2], "the same companies");
    }

    #[test]
    fn no_call_left_in_the_budget_claims_nothing_and_says_how_long_to_wait() {
        let mut stores = Stores::default();
        stores
            .schedule
            .expect_companies_with_due_status_checks()
            .returning(|_, _, _| Ok(vec![DueStatusChecks::all(CompanyId(Uuid::from_u128(0xe0)))]));
        stores.schedule.expect_claim_status_checks().times(0);
        let mut pgcc = MockPgccGateway::new();
        pgcc.expect_consent_statuses().times(0);
        let mut budget = MockPgccCallBudget::new();
        budget
            .expect_try_take()
            .with(eq(now()))
            .times(1)
            .returning(|_| Ok(Some(std::time::Duration::from_millis(50))));

        let report = PollConsentStatuses::new(
            Arc::new(stores.requests),
            Arc::new(stores.schedule),
            Arc::new(pgcc),
            Arc::new(budget),
            fixed_clock(),
            policy(),
        )
        .run_once()
        .unwrap();

        assert_eq!(report.throttled, Some(std::time::Duration::from_millis(50)));
        assert_eq!(report.checked, 0);
    }

    #[test]
    fn nothing_due_takes_nothing_from_the_budget() {
        let mut stores = Stores::default();
        stores
            .schedule
            .expect_companies_with_due_status_checks()
            .returning(|_, _, _| Ok(Vec::new()));
        let mut budget = MockPgccCallBudget::new();
        budget.expect_try_take().times(0);

        let report = PollConsentStatuses::new(
            Arc::new(stores.requests),
            Arc::new(stores.schedule),
            Arc::new(MockPgccGateway::new()),
            Arc::new(budget),
            fixed_clock(),
            policy(),
        )
        .run_once()
        .unwrap();

        assert_eq!(report, PollReport::default());
    }

    #[test]
    fn the_error_message_is_the_causes_own() {
        let e = PollError::Pgcc(PgccError::Timeout);
        assert_eq!(e.to_string(), "the PGCC timed out");
    }
}
