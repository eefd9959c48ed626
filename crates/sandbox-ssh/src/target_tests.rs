#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn settings_without_a_host_or_with_an_option_for_a_host_are_refused() {
    let mut settings = SshSettings::default();
    let err = SshTarget::from_settings(&settings, None).unwrap_err();
    assert!(err.to_string().contains("needs a host"), "{err}");
    settings.host = Some("-oProxyCommand=touch /tmp/x".into());
    let err = SshTarget::from_settings(&settings, None).unwrap_err();
    assert!(err.to_string().contains("sandbox.ssh.host"), "{err}");
    settings.host = Some("build.example".into());
    settings.user = Some("-l root".into());
    assert!(SshTarget::from_settings(&settings, None).is_err());
}

#[test]
fn home_is_expanded_in_key_paths() {
    let settings = SshSettings {
        host: Some("h".into()),
        identity_file: Some("~/.ssh/id".into()),
        keepalive_seconds: 0,
        ..Default::default()
    };
    let t = SshTarget::from_settings(&settings, Some(Path::new("/home/u"))).unwrap();
    assert_eq!(
        t.identity_file.as_deref(),
        Some(Path::new("/home/u/.ssh/id"))
    );
    assert_eq!(t.keepalive, None);
    assert_eq!(t.display(), "h:22");
    assert_eq!(t.sandbox_dir("s"), "/tmp/talon-sandboxes/s");
}
