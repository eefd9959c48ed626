mod call;
mod config;
mod policy;
mod sandbox;
mod skills;
mod tools;
mod util;
