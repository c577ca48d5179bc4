//! Black-box tests of the simulator over real HTTP.

mod admin;
mod auth;
mod binary;
mod faults;
mod helpers;
mod memoria;
mod por_referencia;
mod seed;
mod solicitacoes;
mod status;
mod webhooks;
