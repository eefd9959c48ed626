mod call;
mod config;
mod policy;
mod skills;
mod tools;
mod util;
