//! The thread that keeps the in-process caches honest: it follows the database's change
//! notifications and feeds the services' change tracker (see `application::cache`).

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use application::cache::{follow_changes, ChangeTracker};
use postgres_adapter::{PgChangeFeed, PgPool};

use crate::settings::Settings;
use crate::workers::Stop;

/// Back-off after a failure (database down): the caches are bypassed meanwhile.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Starts following changes when caching is on; `None` when it is off. The feed listens on
/// `cache.feed_url` and proves itself with probes sent through `pool` (the requests' path).
pub fn start(
    settings: &Settings,
    pool: PgPool,
    tracker: Arc<ChangeTracker>,
    stop: &Stop,
) -> Option<JoinHandle<()>> {
    if !tracker.is_enabled() {
        tracing::info!("in-process caches off (cache.enabled = false)");
        return None;
    }
    let mut feed = PgChangeFeed::new(settings.feed_url(), pool)
        .with_session(settings.session())
        .with_probe_timeout(settings.cache.max_silence());
    let wait = settings.cache.feed_wait();
    let stop = stop.clone();
    let thread = std::thread::Builder::new()
        .name("change-feed".into())
        .spawn(move || {
            let mut healthy = None;
            while !stop.is_stopped() {
                match follow_changes(&mut feed, &tracker, wait) {
                    Ok(_) => {
                        if healthy != Some(true) {
                            tracing::info!("change feed connected: in-process caches in use");
                            healthy = Some(true);
                        }
                    }
                    Err(e) => {
                        if healthy != Some(false) {
                            // the whole chain: "database unavailable" alone does not say
                            // whether the database is down or the probe never came back
                            tracing::warn!(
                                error = format!("{:#}", anyhow::Error::new(e)),
                                "change feed down: in-process caches bypassed until it is back"
                            );
                            healthy = Some(false);
                        }
                        if stop.sleep(RETRY_AFTER) {
                            break;
                        }
                    }
                }
            }
        })
        .expect("spawn the change-feed thread");
    Some(thread)
}
