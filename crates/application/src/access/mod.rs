//! Access: companies, their API keys and authentication.

pub mod api_keys;
pub mod authenticate;
pub mod register_company;
