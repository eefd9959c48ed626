//! The in-process gateway that gateway-core's own tests drive: a
//! [`Gateway`] opened on a config text in a directory (the config file is
//! `<dir>/talon.json`, the state dir `<dir>/state`), called through
//! [`Gateway::call`] like every front end, with no socket and no token.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::auth::Identity;
use crate::gateway::{Gateway, GatewayOptions};
use crate::rpc::RpcError;
use crate::scope::Scope;

/// The identity tests call as: an operator token.
pub(crate) fn operator() -> Identity {
    Identity::new("test-operator", Scope::Operator)
}

/// Write `config` to `<dir>/talon.json` and open a gateway on it.
///
/// # Panics
/// When the file cannot be written or the gateway does not open (a test
/// failure).
#[allow(clippy::expect_used)]
pub(crate) fn open_in(dir: &Path, config: &str) -> Gateway {
    let path = config_path(dir);
    std::fs::write(&path, config).expect("write the test config");
    Gateway::open(GatewayOptions {
        config_path: Some(path),
        state_dir: dir.join("state"),
        bind: None,
        turn_runner: None,
    })
    .expect("open the test gateway")
}

/// Where [`open_in`] writes the config (rewrite it to test a reload).
pub(crate) fn config_path(dir: &Path) -> PathBuf {
    dir.join("talon.json")
}

/// Call `method` as the [`operator`].
pub(crate) async fn call(gw: &Gateway, method: &str, params: Value) -> Result<Value, RpcError> {
    gw.call(&operator(), method, params).await
}
