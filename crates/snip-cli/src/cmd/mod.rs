pub mod config;
pub mod demo;
pub mod filter;
pub mod run;
