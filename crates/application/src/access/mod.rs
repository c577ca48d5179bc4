//! Access: companies, their API keys and authentication, and the record of who read personal
//! data.

pub mod access_log;
pub mod api_keys;
pub mod authenticate;
pub mod register_company;
