use std::path::Path;

use super::*;

fn host_env() -> Vec<(String, String)> {
    [
        ("PATH", "/usr/bin"),
        ("HOME", "/home/op"),
        ("SSH_AUTH_SOCK", "/run/agent.sock"),
        ("OPENAI_API_KEY", "sk-fake"),
        ("TALON_GATEWAY_TOKEN", "gw"),
        ("AWS_SECRET_ACCESS_KEY", "aws"),
        ("UNRELATED", "x"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect()
}

#[test]
fn the_master_gets_the_core_base_and_the_agent_socket_only() {
    let env = master_env(host_env());
    assert_eq!(
        env.keys().map(String::as_str).collect::<Vec<_>>(),
        ["HOME", "PATH", "SSH_AUTH_SOCK"]
    );
}

#[test]
fn without_an_agent_socket_none_is_invented() {
    let host: Vec<_> = host_env()
        .into_iter()
        .filter(|(k, _)| k != "SSH_AUTH_SOCK")
        .collect();
    assert!(!master_env(host).contains_key("SSH_AUTH_SOCK"));
}

#[test]
fn forwarding_and_local_commands_are_off_and_the_host_comes_last() {
    // A host like this is refused by `from_settings`; the command line
    // still never reads it as an option.
    let mut target = SshTarget::new("build.example", 22, None);
    target.host = "-oProxyCommand=evil".to_owned();
    let args: Vec<String> = master_args(&target, Path::new("/ctl"))
        .into_iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    for fixed in FIXED_OPTIONS {
        let at = args.iter().position(|a| a == fixed).unwrap();
        assert_eq!(args[at - 1], "-o", "{args:?}");
    }
    assert_eq!(
        &args[args.len() - 2..],
        ["--", "-oProxyCommand=evil"],
        "{args:?}"
    );
    assert!(args.contains(&"/ctl/master".to_owned()), "{args:?}");
}

#[test]
fn a_host_key_refusal_in_the_log_is_its_own_kind_with_the_same_text() {
    let refused = MasterError::from_log("Warning: ...\nHost key verification failed.\n".to_owned());
    assert!(matches!(refused, MasterError::HostKey(_)));
    assert_eq!(
        refused.to_string(),
        "ssh failed: Warning: ...\nHost key verification failed."
    );
    let other = MasterError::from_log("Permission denied (publickey).\n".to_owned());
    assert!(matches!(other, MasterError::Failed(_)));
    let io = MasterError::Io(std::io::Error::other("no ssh"));
    assert!(std::error::Error::source(&io).is_some());
}
