mod common;
mod limits;
mod recovery;
mod schedule;
mod service;
mod webhook;
