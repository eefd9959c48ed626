#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::path::PathBuf;

use super::*;

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

#[test]
fn args_round_trip() {
    let rules = FileRules {
        read_only: vec![PathBuf::from("/usr")],
        read_write: vec![PathBuf::from("/workspace"), PathBuf::from("/tmp")],
        list_only: vec![PathBuf::from("/")],
        require: true,
        check: false,
        egress: Some(PathBuf::from("/.talon/egress.sock")),
        argv: Vec::new(),
    };
    let mut args = rules.to_args();
    args.extend(os(&["/bin/sh", "-c", "true"]));
    let parsed = FileRules::parse(args).unwrap();
    assert_eq!(parsed.read_write, rules.read_write);
    assert_eq!(parsed.read_only, rules.read_only);
    assert_eq!(parsed.list_only, rules.list_only);
    assert!(parsed.require);
    assert_eq!(parsed.egress, rules.egress);
    assert_eq!(parsed.argv, os(&["/bin/sh", "-c", "true"]));
}

#[test]
fn bad_command_lines_are_refused() {
    for bad in [
        &["--ro"][..],
        &["--ro", "relative", "--", "true"],
        &["--rw", "/tmp"],
        &["--rw", "/tmp", "--"],
        &["--check", "--", "true"],
        &["--bogus", "--", "true"],
        &["--egress", "relative.sock", "--", "true"],
        &["--egress"],
    ] {
        let err = FileRules::parse(os(bad)).unwrap_err();
        assert!(matches!(err, FileRulesError::Usage(_)), "{bad:?}: {err}");
    }
    assert!(
        FileRules::parse(os(&["--ro", "/usr", "--check"]))
            .unwrap()
            .check
    );
}

#[test]
fn status_lines_round_trip() {
    for report in [
        LandlockReport {
            enforcement: Enforcement::Full,
            abi: Some("7".to_owned()),
        },
        LandlockReport {
            enforcement: Enforcement::None,
            abi: None,
        },
    ] {
        assert_eq!(LandlockReport::parse(&report.to_string()), Some(report));
    }
    assert_eq!(LandlockReport::parse("landlock=full"), None);
    assert_eq!(LandlockReport::parse("landlock=full abi=x7"), None);
    assert_eq!(LandlockReport::parse("landlock=full abi=7 extra"), None);
}
