//! Webhooks: the company's URLs, the delivery log, the sender and the signatures.

pub mod deliver;
pub mod deliveries;
pub mod signing;
pub mod urls;
