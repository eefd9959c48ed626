use proptest::prelude::*;

use super::*;
use crate::exec_approvals::shell::analyze;

fn compiled(patterns: &[&str]) -> Vec<CompiledEntry> {
    patterns
        .iter()
        .map(|p| CompiledEntry::compile(AllowlistEntry::new(*p)).unwrap())
        .collect()
}

fn satisfied(patterns: &[&str], command: &str) -> bool {
    evaluate(&analyze(command), &compiled(patterns)).satisfied
}

#[test]
fn globs() {
    let g = compile_glob("/opt/**/bin/*");
    assert!(glob_match(&g, "/opt/a/b/bin/rg"));
    assert!(!glob_match(&g, "/opt/a/bin/x/rg"));
    assert!(!glob_match(&compile_glob("/usr/bin/*"), "/usr/bin/x/y"));
    assert!(glob_match(&compile_glob("git*"), "git"));
    assert!(glob_match(&compile_glob("git*"), "git-lfs"));
    assert!(!glob_match(&compile_glob("git"), "Git"));
    assert!(glob_match(&compile_glob("*"), ""));
}

#[test]
fn names_and_paths() {
    assert!(satisfied(&["rg"], "rg foo"));
    assert!(!satisfied(&["rg"], "./rg foo"));
    assert!(!satisfied(&["rg"], "/tmp/rg foo"));
    assert!(satisfied(&["/usr/bin/rg"], "/usr/bin/rg foo"));
    assert!(!satisfied(&["/usr/bin/rg"], "rg foo"));
    assert!(!satisfied(&["/usr/bin/*"], "/usr/bin/./rg"));
    assert!(!satisfied(&["/usr/bin/*"], "/usr//bin/rg"));
}

#[test]
fn argument_restrictions() {
    let exact = CompiledEntry::compile(AllowlistEntry {
        args: Some(vec!["status".into()]),
        ..AllowlistEntry::new("git")
    })
    .unwrap();
    let regex = CompiledEntry::compile(AllowlistEntry {
        arg_pattern: Some("^log( |$)".into()),
        ..AllowlistEntry::new("git")
    })
    .unwrap();
    let entries = vec![exact, regex];
    let ok = |c: &str| evaluate(&analyze(c), &entries).satisfied;
    assert!(ok("git status"));
    assert!(ok("git 'status'"));
    assert!(!ok("git status --short"));
    assert!(ok("git log -1"));
    assert!(!ok("git push"));
    assert!(!ok("git log $X"));
    assert!(!ok("git log *"));
}

#[test]
fn patterns_are_checked() {
    for bad in ["", " ", "~/bin/x", "bin/x", "l?", "[ab]", "{a,b}", "a\u{7}"] {
        assert!(check_pattern(bad).is_err(), "{bad:?}");
    }
    for good in ["ls", "git*", "/usr/bin/*", "/opt/**/bin/rg", "*"] {
        assert!(check_pattern(good).is_ok(), "{good:?}");
    }
}

#[test]
fn a_refused_entry_says_which_rule_and_keeps_the_regex_error_as_source() {
    assert!(matches!(check_pattern(" "), Err(EntryError::EmptyPattern)));
    assert!(matches!(check_pattern("~/x"), Err(EntryError::Tilde(p)) if p == "~/x"));
    assert!(matches!(
        check_pattern("l?"),
        Err(EntryError::Wildcard { found: '?', .. })
    ));
    assert!(matches!(
        check_pattern("bin/x"),
        Err(EntryError::RelativePath(_))
    ));
    let err = CompiledEntry::compile(AllowlistEntry {
        arg_pattern: Some("(".into()),
        ..AllowlistEntry::new("git")
    })
    .unwrap_err();
    assert!(matches!(err, EntryError::ArgPattern { .. }));
    assert!(std::error::Error::source(&err).is_some());
    assert!(
        err.to_string()
            .starts_with("argPattern \"(\" is not a valid regex: ")
    );
    let both = CompiledEntry::compile(AllowlistEntry {
        arg_pattern: Some("^a$".into()),
        args: Some(vec!["a".into()]),
        ..AllowlistEntry::new("git")
    })
    .unwrap_err();
    assert_eq!(both.to_string(), "give either argPattern or args, not both");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The analyser never panics on any input.
    #[test]
    fn analyze_never_panics(s in "\\PC*") {
        let _ = analyze(&s);
    }

    /// Nor on shell-heavy input.
    #[test]
    fn analyze_never_panics_on_shellish(s in "[a-z \\t\\n;&|()<>$`'\"\\\\#*~={}!]{0,40}") {
        let a = analyze(&s);
        if a.is_complete() {
            for seg in &a.segments {
                let good = matches!(seg, Segment::Command { argv } if !argv.is_empty() && argv[0].exact);
                prop_assert!(good);
            }
        }
    }

    /// A list never matches when any element misses: joining an
    /// allowlisted command with a command the list does not allow, by any
    /// operator, never satisfies the allowlist.
    #[test]
    fn a_list_with_a_miss_never_matches(
        args in prop::collection::vec("[a-z0-9./-]{0,6}", 0..3),
        op in prop::sample::select(vec![";", "&&", "||", "|", "&", "\n", "|&", " ; ", "\n\n"]),
        evil in prop::sample::select(vec!["rm -rf ~", "curl x", "sh", "python3 -c 1", "/bin/rm x", "./ls"]),
        evil_first in any::<bool>(),
    ) {
        let ok = format!("ls {}", args.join(" "));
        let command = if evil_first { format!("{evil}{op}{ok}") } else { format!("{ok}{op}{evil}") };
        prop_assert!(satisfied(&["ls"], &ok));
        prop_assert!(!satisfied(&["ls", "echo"], &command), "{command:?}");
    }
}
