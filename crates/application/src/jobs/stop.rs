//! [`Stop`]: the signal that ends the jobs gracefully.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Asks the job threads to stop. Cheap to clone; every clone is the same signal.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<(Mutex<bool>, Condvar)>);

impl Stop {
    pub fn new() -> Stop {
        Stop::default()
    }

    /// From now on every job exits after its current round; sleeping jobs wake up and exit.
    pub fn stop(&self) {
        let (flag, wake) = &*self.0;
        *flag.lock().unwrap_or_else(|p| p.into_inner()) = true;
        wake.notify_all();
    }

    pub fn is_stopped(&self) -> bool {
        *self.0 .0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sleeps up to `duration`, waking early on [`Stop::stop`]; true when stopped.
    pub fn sleep(&self, duration: Duration) -> bool {
        let (flag, wake) = &*self.0;
        let guard = flag.lock().unwrap_or_else(|p| p.into_inner());
        let (guard, _) = wake
            .wait_timeout_while(guard, duration, |stopped| !*stopped)
            .unwrap_or_else(|p| p.into_inner());
        *guard
    }
}
