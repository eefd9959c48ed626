mod dispatch;
mod snapshot_config;
