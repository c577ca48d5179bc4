//! The HTTP gateway against a real simulator, over HTTP.

mod create;
mod errors;
mod find;
mod helpers;
mod list;
mod revoke;
mod statuses;
