mod fallback;
mod limits;
mod sweep;
mod tree;
mod util;
mod watchdog;
