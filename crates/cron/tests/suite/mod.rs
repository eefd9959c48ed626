mod common;
mod recovery;
mod schedule;
mod service;
