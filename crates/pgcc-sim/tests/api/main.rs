//! Black-box tests of the simulator over real HTTP.

mod admin;
mod auth;
mod binary;
mod faults;
mod helpers;
mod seed;
mod solicitacoes;
mod status;
