#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;

fn r(param: &str, old: &str, new: &str) -> Replacement {
    Replacement {
        param: param.to_owned(),
        old_text: old.to_owned(),
        new_text: new.to_owned(),
    }
}

const SRC: &str =
    "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n\nfn other() {\n    let x = 1;\n}\n";

#[test]
fn several_replacements_apply_against_the_original() {
    let out = apply_edits(
        SRC,
        &[
            r("edits[0].oldText", "fn main() {", "fn main() -> () {"),
            r(
                "edits[1].oldText",
                "fn other() {\n    let x = 1;",
                "fn other() {\n    let y = 2;",
            ),
        ],
    )
    .unwrap();
    assert_eq!(
        out,
        "fn main() -> () {\n    let x = 1;\n    println!(\"{x}\");\n}\n\nfn other() {\n    let y = 2;\n}\n"
    );
}

#[test]
fn order_of_edits_does_not_matter() {
    let a = apply_edits(
        SRC,
        &[
            r("edits[0].oldText", "}\n\nfn", "}\n\n\nfn"),
            r("edits[1].oldText", "fn main", "fn start"),
        ],
    )
    .unwrap();
    let b = apply_edits(
        SRC,
        &[
            r("edits[0].oldText", "fn main", "fn start"),
            r("edits[1].oldText", "}\n\nfn", "}\n\n\nfn"),
        ],
    )
    .unwrap();
    assert_eq!(a, b);
    assert!(a.starts_with("fn start() {"));
}

#[test]
fn ambiguous_old_text_names_every_line() {
    let err = apply_edits(
        SRC,
        &[r("edits[0].oldText", "    let x = 1;", "    let x = 2;")],
    )
    .unwrap_err();
    assert_eq!(
        err,
        EditError::Ambiguous {
            param: "edits[0].oldText".into(),
            lines: vec![2, 7]
        }
    );
    assert_eq!(err.param(), "edits[0].oldText");
    let m = err.message("src/main.rs");
    assert!(
        m.contains("found 2 times in src/main.rs, at lines 2, 7"),
        "{m}"
    );
    assert!(m.contains("include more surrounding lines"), "{m}");
}

#[test]
fn overlapping_occurrences_count_as_ambiguous() {
    let err = apply_edits("aaa\n", &[r("oldText", "aa", "b")]).unwrap_err();
    assert!(matches!(err, EditError::Ambiguous { ref lines, .. } if lines.len() == 2));
}

#[test]
fn not_found_points_at_the_first_line() {
    let err = apply_edits(SRC, &[r("oldText", "fn other() {\n  let x = 1;\n}", "")]).unwrap_err();
    match &err {
        EditError::NotFound {
            near,
            near_kind,
            first_line,
            ..
        } => {
            assert_eq!(first_line, "fn other() {");
            assert_eq!(near, &vec![6]);
            assert_eq!(*near_kind, NearKind::FirstLine);
        }
        other => panic!("{other:?}"),
    }
    let m = err.message("a.rs");
    assert!(m.contains("oldText was not found in a.rs"), "{m}");
    assert!(m.contains("appears at line 6"), "{m}");
    assert_eq!(err.param(), "oldText");
}

#[test]
fn not_found_falls_back_to_similar_lines() {
    let err = apply_edits(SRC, &[r("edits[0].oldText", "    printn!(\"{x}\");", "")]).unwrap_err();
    match &err {
        EditError::NotFound {
            near, near_kind, ..
        } => {
            assert_eq!(*near_kind, NearKind::Similar);
            assert_eq!(near.first(), Some(&3));
        }
        other => panic!("{other:?}"),
    }
    let nothing = apply_edits(SRC, &[r("edits[0].oldText", "zzzzqqqq", "")]).unwrap_err();
    assert!(
        nothing.message("a").contains("No line resembles"),
        "{}",
        nothing.message("a")
    );
}

#[test]
fn overlapping_edits_are_refused() {
    let err = apply_edits(
        SRC,
        &[
            r("edits[0].oldText", "fn main() {\n    let x", "A"),
            r("edits[1].oldText", "main() {", "B"),
        ],
    )
    .unwrap_err();
    match &err {
        EditError::Overlap { first, second, .. } => {
            assert_eq!(
                (first.as_str(), second.as_str()),
                ("edits[0].oldText", "edits[1].oldText")
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(err.message("f").contains("merge them into one edit"));
}

#[test]
fn empty_old_text_and_no_change_are_refused() {
    assert_eq!(
        apply_edits(SRC, &[r("edits[1].oldText", "", "x")]).unwrap_err(),
        EditError::EmptyOldText {
            param: "edits[1].oldText".into()
        }
    );
    assert_eq!(
        apply_edits(SRC, &[r("oldText", "fn main", "fn main")]).unwrap_err(),
        EditError::NoChange
    );
}

#[test]
fn lf_old_text_matches_a_crlf_file_and_keeps_crlf() {
    let crlf = "one\r\ntwo\r\nthree\r\n";
    let out = apply_edits(crlf, &[r("oldText", "one\ntwo", "uno\ndos")]).unwrap();
    assert_eq!(out, "uno\r\ndos\r\nthree\r\n");
}

#[test]
fn unicode_text_is_matched_on_boundaries() {
    let out = apply_edits("größe: 1\nmaß: 2\n", &[r("oldText", "maß: 2", "maß: 3")]).unwrap();
    assert_eq!(out, "größe: 1\nmaß: 3\n");
}
