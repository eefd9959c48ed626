mod dispatch;
mod scanner_corpus;
mod snapshot_config;
