//! In-process caches shared safely across instances: what they hold is stamped before it is
//! read from the database, and is used only while the [`ChangeTracker`] — fed by the database's
//! change notifications — says nothing of that company changed since the stamp.
//!
//! - [`ChangeTracker`]: which companies changed, as told by a [`ports::ChangeFeed`], and
//!   whether the feed is alive (if not, every cache is bypassed).
//! - [`StampedCache`]: a bounded map whose entries are valid only under the tracker's verdict.
//! - [`UnknownKeys`]: hashes of keys the database does not know, for a short while.
//! - [`follow_changes`]: one step of the loop that feeds the tracker.

mod change_tracker;
mod follow_changes;
mod stamped_cache;
mod unknown_keys;

pub use change_tracker::{ChangeTracker, Stamp};
pub use follow_changes::follow_changes;
pub use stamped_cache::{CacheStats, StampedCache, Weighted};
pub use unknown_keys::UnknownKeys;
