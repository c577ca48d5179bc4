pub mod api_key;
pub mod audit;
pub mod company;
pub mod config;
pub mod migrate;
pub mod serve;
pub mod worker;
