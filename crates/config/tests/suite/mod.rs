mod errors;
mod hostile;
mod location;
mod openclaw;
mod schema;

use std::path::PathBuf;

/// The path of a fixture file.
pub(crate) fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The issues of a text that must fail validation, as
/// `line:column key_path: message`.
pub(crate) fn issues(text: &str) -> Vec<talon_config::Issue> {
    match talon_config::load_str(text, "talon.json") {
        Err(talon_config::ConfigError::Invalid { issues, .. }) => issues,
        other => panic!("expected validation issues, got {other:?}"),
    }
}
