use std::os::unix::fs::PermissionsExt;

use super::*;
use crate::sections::mcp::{EnvRefError, expand_env_refs};

fn write(dir: &Path, text: &str, mode: u32) {
    let path = dir.join(SECRETS_FILE);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn references_resolve_from_the_file_and_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), r#"{"github": "ghp_s3cret"}"#, 0o600);
    let store = SecretStore::load(dir.path()).unwrap();
    let env = |n: &str| (n == "HOME_X").then(|| "/h".to_owned());
    let lookup = store.lookup(env);
    assert_eq!(
        expand_env_refs("Bearer ${secret:github} ${HOME_X}", &lookup).unwrap(),
        "Bearer ghp_s3cret /h"
    );
    assert_eq!(
        expand_env_refs("${secret:nope}", &lookup),
        Err(EnvRefError::MissingSecret("nope".to_owned()))
    );
    assert!(matches!(
        expand_env_refs("${secret:}", &lookup),
        Err(EnvRefError::InvalidName(_))
    ));
    assert!(!format!("{store:?}").contains("ghp_s3cret"));
}

#[test]
fn an_absent_file_is_empty_and_a_readable_or_malformed_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(SecretStore::load(dir.path()).unwrap().names().count(), 0);
    write(dir.path(), r#"{"a": "b"}"#, 0o644);
    let err = SecretStore::load(dir.path()).unwrap_err();
    assert_eq!(err.code(), "secrets.mode");
    assert!(err.to_string().contains("0644"), "{err}");
    write(dir.path(), r#"{"a": 1}"#, 0o600);
    let err = SecretStore::load(dir.path()).unwrap_err();
    assert_eq!(err.code(), "secrets.malformed");
    write(dir.path(), r#"{"a": "VALUE-NOT-SHOWN", "#, 0o600);
    let err = SecretStore::load(dir.path()).unwrap_err().to_string();
    assert!(!err.contains("VALUE-NOT-SHOWN"), "{err}");
}
