mod common;
mod engines;
mod limits;
mod recovery;
mod schedule;
mod service;
mod store;
mod webhook;
