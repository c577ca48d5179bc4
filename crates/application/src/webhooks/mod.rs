//! Webhooks: the company's URLs, the event list, the delivery log, the sender, the test send and
//! the signatures.

pub mod deliver;
pub mod deliveries;
pub mod event_cursor;
pub mod events;
pub mod fair_share;
pub mod signing;
pub mod test_url;
pub mod urls;
