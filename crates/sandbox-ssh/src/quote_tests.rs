#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn quotes_hostile_text_as_one_word() {
    assert_eq!(shell_quote("a b").unwrap(), "'a b'");
    assert_eq!(shell_quote("it's").unwrap(), "'it'\\''s'");
    assert_eq!(shell_quote("$(id)`id`\n").unwrap(), "'$(id)`id`\n'");
    assert!(shell_quote("a\0b").is_err());
}

#[test]
fn quoted_words_survive_a_real_shell() {
    let hostile = [
        "plain",
        "it's",
        "$(touch /tmp/talon-pwned)",
        "`touch /tmp/talon-pwned`",
        "line1\nline2",
        "\"dq\" \\ back",
        "",
        "*",
    ];
    let args: Vec<String> = hostile.iter().map(|s| (*s).to_owned()).collect();
    let line = command_line("printf '%s\\0'", &args).unwrap();
    let out = talon_proc_tree::ChildCommand::new(
        "/bin/sh",
        talon_proc_tree::ChildEnv::empty(),
        talon_proc_tree::ProcessGroup::Parent,
    )
    .arg("-c")
    .arg(&line)
    .output()
    .unwrap();
    let got: Vec<String> = out
        .stdout
        .split(|b| *b == 0)
        .filter(|_| true)
        .map(|s| String::from_utf8(s.to_vec()).unwrap())
        .collect();
    // printf prints a trailing NUL, so the last split is empty.
    assert_eq!(&got[..hostile.len()], &args[..]);
}
