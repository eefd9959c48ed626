#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;
use talon_patch::{FileOp, parse_patch};

fn hunks(body: &str) -> Vec<Hunk> {
    let text = format!("*** Begin Patch\n*** Update File: f\n{body}\n*** End Patch");
    match parse_patch(&text).unwrap().ops.remove(0) {
        FileOp::Update { hunks, .. } => hunks,
        other => panic!("{other:?}"),
    }
}

const FILE: &str = "fn a() {\n    x();\n}\n\nfn b() {\n    x();\n}\n";

#[test]
fn a_unique_hunk_applies() {
    let out = apply_hunks(FILE, &hunks(" fn a() {\n-    x();\n+    y();")).unwrap();
    assert_eq!(out, "fn a() {\n    y();\n}\n\nfn b() {\n    x();\n}\n");
}

#[test]
fn an_ambiguous_hunk_is_refused_with_its_places() {
    let err = apply_hunks(FILE, &hunks("-    x();\n+    y();")).unwrap_err();
    assert_eq!(err.failure, HunkFailure::Ambiguous { lines: vec![2, 6] });
    let m = err.message("src/f.rs");
    assert!(
        m.contains("`Update File: src/f.rs`, hunk 1 (`    x();`): ambiguous"),
        "{m}"
    );
    assert!(m.contains("lines 2, 6"), "{m}");
}

#[test]
fn an_anchor_disambiguates() {
    let out = apply_hunks(FILE, &hunks("@@ fn b() {\n-    x();\n+    y();")).unwrap();
    assert_eq!(out, "fn a() {\n    x();\n}\n\nfn b() {\n    y();\n}\n");
    // The anchor may also be repeated as the first context line.
    let out = apply_hunks(FILE, &hunks("@@ fn b() {\n fn b() {\n-    x();\n+    z();")).unwrap();
    assert!(out.ends_with("fn b() {\n    z();\n}\n"), "{out}");
}

#[test]
fn hunks_apply_in_order_after_each_other() {
    let out = apply_hunks(
        FILE,
        &hunks(" fn a() {\n-    x();\n+    p();\n@@\n fn b() {\n-    x();\n+    q();"),
    )
    .unwrap();
    assert_eq!(out, "fn a() {\n    p();\n}\n\nfn b() {\n    q();\n}\n");
}

#[test]
fn missing_context_and_missing_anchor_are_named() {
    let err = apply_hunks(FILE, &hunks(" fn a() {\n-    nope();\n+    y();")).unwrap_err();
    assert_eq!(
        err.failure,
        HunkFailure::ContextNotFound {
            first_line_at: vec![1]
        }
    );
    assert!(err.message("f").contains("context not found"));
    assert!(err.message("f").contains("matches line 1"));
    let err = apply_hunks(FILE, &hunks("@@ fn zzz()\n-    x();\n+    y();")).unwrap_err();
    assert_eq!(
        err.failure,
        HunkFailure::AnchorNotFound {
            anchor: "fn zzz()".into()
        }
    );
    assert!(
        err.message("f")
            .contains("@@ line `fn zzz()` was not found")
    );
}

#[test]
fn trailing_whitespace_is_the_only_fuzz() {
    let file = "alpha   \nbeta\n";
    let out = apply_hunks(file, &hunks("-alpha\n+gamma")).unwrap();
    assert_eq!(out, "gamma\nbeta\n");
    // Leading whitespace is not fuzzed.
    assert!(apply_hunks("  alpha\n", &hunks("-alpha\n+gamma")).is_err());
}

#[test]
fn end_of_file_hunks_match_at_the_end_only() {
    let file = "x\ny\nx\n";
    let out = apply_hunks(file, &hunks("-x\n+z\n*** End of File")).unwrap();
    assert_eq!(out, "x\ny\nz\n");
    assert!(apply_hunks("x\ny\n", &hunks("-x\n+z\n*** End of File")).is_err());
}

#[test]
fn pure_additions_go_after_the_anchor_or_at_the_end() {
    let out = apply_hunks(FILE, &hunks("@@ fn a() {\n+    first();")).unwrap();
    assert!(
        out.starts_with("fn a() {\n    first();\n    x();\n"),
        "{out}"
    );
    let out = apply_hunks("a\nb\n", &hunks("+c")).unwrap();
    assert_eq!(out, "a\nb\nc\n");
}

#[test]
fn line_ends_and_final_newline_are_kept() {
    let out = apply_hunks("a\r\nb\r\n", &hunks("-a\n+z")).unwrap();
    assert_eq!(out, "z\r\nb\r\n");
    let out = apply_hunks("a\nb", &hunks("-b\n+c")).unwrap();
    assert_eq!(out, "a\nc");
    let out = apply_hunks("", &hunks("+first")).unwrap();
    assert_eq!(out, "first\n");
}

#[test]
fn loosely_matched_context_keeps_the_files_own_text() {
    let out = apply_hunks("keep   \nold\n", &hunks(" keep\n-old\n+new")).unwrap();
    assert_eq!(out, "keep   \nnew\n");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    /// Hostile patch bodies never panic the parser or the applier.
    #[test]
    fn parser_and_applier_are_total(
        body in proptest::collection::vec(
            proptest::prop_oneof![
                "[ +-][a-c ]{0,4}",
                proptest::strategy::Just("@@".to_owned()),
                "@@ [a-c]{1,3}",
                proptest::strategy::Just("*** End of File".to_owned()),
                proptest::strategy::Just(String::new()),
            ],
            0..16,
        ),
        file in "([a-c ]{0,4}\\n){0,12}",
    ) {
        let text = format!("*** Begin Patch\n*** Update File: f\n{}\n*** End Patch", body.join("\n"));
        if let Ok(patch) = parse_patch(&text)
            && let Some(FileOp::Update { hunks, .. }) = patch.ops.first()
        {
            let _ = apply_hunks(&file, hunks);
        }
    }
}
