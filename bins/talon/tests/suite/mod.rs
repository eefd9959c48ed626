mod call;
mod config;
mod policy;
mod tools;
mod util;
