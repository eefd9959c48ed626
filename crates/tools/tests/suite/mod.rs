mod exec;
mod files;
#[cfg(feature = "web")]
mod web;
