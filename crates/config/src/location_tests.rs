use std::ffi::OsString;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use super::*;

fn home() -> Option<PathBuf> {
    Some(PathBuf::from("/home/u"))
}

#[test]
fn precedence() {
    assert_eq!(
        resolve_config_path_from(
            Some(Path::new("/x.json")),
            Some(OsString::from("/env.json")),
            None,
            home()
        ),
        ConfigLocation::Explicit(PathBuf::from("/x.json"))
    );
    assert_eq!(
        resolve_config_path_from(None, Some(OsString::from("/env.json")), None, home()),
        ConfigLocation::Env(PathBuf::from("/env.json"))
    );
    assert_eq!(
        resolve_config_path_from(None, Some(OsString::new()), None, home()),
        ConfigLocation::Default(PathBuf::from("/home/u/.talon/talon.json"))
    );
    assert_eq!(
        resolve_config_path_from(None, Some(OsString::from("~/cfg/t.json")), None, home()),
        ConfigLocation::Env(PathBuf::from("/home/u/cfg/t.json"))
    );
    assert_eq!(
        resolve_config_path_from(None, None, None, None),
        ConfigLocation::Unresolved
    );
    // The config moves with the state directory (`--state-dir` sets
    // TALON_STATE_DIR); TALON_CONFIG and --config still win.
    assert_eq!(
        resolve_config_path_from(None, None, Some(OsString::from("/srv/talon")), home()),
        ConfigLocation::Default(PathBuf::from("/srv/talon/talon.json"))
    );
    assert_eq!(
        resolve_config_path_from(None, None, Some(OsString::from("~/other")), home()),
        ConfigLocation::Default(PathBuf::from("/home/u/other/talon.json"))
    );
    assert_eq!(
        resolve_config_path_from(None, None, Some(OsString::new()), home()),
        ConfigLocation::Default(PathBuf::from("/home/u/.talon/talon.json"))
    );
    assert_eq!(
        resolve_config_path_from(
            None,
            Some(OsString::from("/env.json")),
            Some(OsString::from("/srv/talon")),
            home()
        ),
        ConfigLocation::Env(PathBuf::from("/env.json"))
    );
    assert_eq!(
        resolve_config_path_from(None, None, Some(OsString::from("/srv/talon")), None),
        ConfigLocation::Default(PathBuf::from("/srv/talon/talon.json"))
    );
}

#[test]
fn location_properties() {
    let explicit = ConfigLocation::Explicit(PathBuf::from("/a"));
    assert!(explicit.must_exist());
    assert_eq!(explicit.path(), Some(Path::new("/a")));
    assert!(ConfigLocation::Env(PathBuf::from("/a")).must_exist());
    assert!(!ConfigLocation::Default(PathBuf::from("/a")).must_exist());
    assert_eq!(ConfigLocation::Unresolved.path(), None);
}

#[test]
fn missing_files() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.json");
    let loaded = ConfigLocation::Default(missing.clone()).load().unwrap();
    assert_eq!(loaded.config, TalonConfig::default());
    assert_eq!(loaded.origin, missing.display().to_string());
    assert!(matches!(
        ConfigLocation::Explicit(missing.clone()).load(),
        Err(ConfigError::Io { .. })
    ));
    assert!(matches!(
        ConfigLocation::Env(missing).load(),
        Err(ConfigError::Io { .. })
    ));
    assert_eq!(
        ConfigLocation::Unresolved.load().unwrap().config,
        TalonConfig::default()
    );
}

#[test]
fn state_dir_rules() {
    assert_eq!(
        state_dir_from(Some(OsString::from("/var/talon")), home()),
        PathBuf::from("/var/talon")
    );
    assert_eq!(
        state_dir_from(Some(OsString::from("~")), home()),
        PathBuf::from("/home/u")
    );
    assert_eq!(
        state_dir_from(Some(OsString::new()), home()),
        PathBuf::from("/home/u/.talon")
    );
    assert_eq!(
        state_dir_from(None, home()),
        PathBuf::from("/home/u/.talon")
    );
    assert_eq!(state_dir_from(None, None), PathBuf::from(".talon"));
    assert_eq!(
        state_dir_from(Some(OsString::from("~other/x")), home()),
        PathBuf::from("~other/x")
    );
}
