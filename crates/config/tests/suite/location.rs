use std::ffi::OsString;

use pretty_assertions::assert_eq;
use talon_config::{ConfigError, ConfigLocation, resolve_config_path_from};

#[test]
fn the_default_file_is_found_under_home() {
    let home = tempfile::tempdir().unwrap();
    let location = resolve_config_path_from(None, None, None, Some(home.path().to_path_buf()));
    assert_eq!(
        location,
        ConfigLocation::Default(home.path().join(".talon/talon.json"))
    );
    // Missing: empty config.
    assert_eq!(
        location.load().unwrap().config,
        talon_config::TalonConfig::default()
    );
    std::fs::create_dir_all(home.path().join(".talon")).unwrap();
    std::fs::write(
        home.path().join(".talon/talon.json"),
        "{ tools: { deny: ['exec'] } }",
    )
    .unwrap();
    let loaded = location.load().unwrap();
    assert_eq!(
        loaded.config.policy_config().tools.deny,
        Some(vec!["exec".to_owned()])
    );
    assert!(loaded.origin.ends_with("talon.json"));
}

#[test]
fn explicit_and_env_files_must_exist() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let explicit = resolve_config_path_from(Some(&missing), None, None, None);
    match explicit.load() {
        Err(ConfigError::Io { path, source }) => {
            assert_eq!(path, missing);
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("{other:?}"),
    }
    let env = resolve_config_path_from(None, Some(OsString::from(&missing)), None, None);
    assert!(matches!(env.load(), Err(ConfigError::Io { .. })));
    let err = env.load().unwrap_err();
    assert!(
        err.to_string().starts_with("cannot read config file "),
        "{err}"
    );
}

#[test]
fn a_broken_default_file_is_an_error_not_empty() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".talon")).unwrap();
    std::fs::write(home.path().join(".talon/talon.json"), "{ tools: ").unwrap();
    let location = resolve_config_path_from(None, None, None, Some(home.path().to_path_buf()));
    assert!(matches!(location.load(), Err(ConfigError::Syntax { .. })));
}
