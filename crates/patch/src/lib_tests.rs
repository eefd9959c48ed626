#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;

#[test]
fn parses_every_section_kind() {
    let patch = parse_patch(
        "*** Begin Patch\n\
         *** Add File: docs/new.md\n\
         +# Title\n\
         +\n\
         +body\n\
         *** Update File: src/lib.rs\n\
         *** Move to: src/core.rs\n\
         @@ fn main\n\
         \x20let a = 1;\n\
         -let b = 2;\n\
         +let b = 3;\n\
         @@\n\
         -old tail\n\
         +new tail\n\
         *** End of File\n\
         *** Delete File: old.txt\n\
         *** End Patch\n",
    )
    .unwrap();
    assert_eq!(patch.ops.len(), 3);
    assert_eq!(
        patch.ops[0],
        FileOp::Add {
            path: "docs/new.md".into(),
            content: "# Title\n\nbody\n".into()
        }
    );
    match &patch.ops[1] {
        FileOp::Update {
            path,
            move_to,
            hunks,
        } => {
            assert_eq!(path, "src/lib.rs");
            assert_eq!(move_to.as_deref(), Some("src/core.rs"));
            assert_eq!(hunks.len(), 2);
            assert_eq!(hunks[0].anchors, vec!["fn main".to_owned()]);
            assert_eq!(hunks[0].old_lines(), vec!["let a = 1;", "let b = 2;"]);
            assert_eq!(hunks[0].new_lines(), vec!["let a = 1;", "let b = 3;"]);
            assert!(!hunks[0].end_of_file);
            assert_eq!(hunks[1].number, 2);
            assert!(hunks[1].anchors.is_empty());
            assert!(hunks[1].end_of_file);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        patch.ops[2],
        FileOp::Delete {
            path: "old.txt".into()
        }
    );
}

#[test]
fn first_hunk_may_omit_the_at_line_and_anchors_nest() {
    let patch = parse_patch(
        "*** Begin Patch\n*** Update File: a.py\n x = 1\n-y = 2\n+y = 3\n@@ class A\n@@ def m(self):\n-    pass\n+    return 1\n*** End Patch",
    )
    .unwrap();
    let FileOp::Update { hunks, .. } = &patch.ops[0] else {
        panic!()
    };
    assert_eq!(hunks.len(), 2);
    assert!(hunks[0].anchors.is_empty());
    assert_eq!(
        hunks[1].anchors,
        vec!["class A".to_owned(), "def m(self):".to_owned()]
    );
    assert_eq!(hunks[1].label(), "hunk 2 (`@@ class A`)");
    assert_eq!(hunks[0].label(), "hunk 1 (`x = 1`)");
}

#[test]
fn heredoc_wrapper_crlf_and_blank_lines_are_tolerated() {
    let text = "apply_patch <<'EOF'\r\n*** Begin Patch\r\n*** Update File: a.txt\r\n-a\r\n+b\r\n\r\n\r\n*** Delete File: c.txt\r\n*** End Patch\r\nEOF\r\n";
    let patch = parse_patch(text).unwrap();
    assert_eq!(patch.ops.len(), 2);
    let FileOp::Update { hunks, .. } = &patch.ops[0] else {
        panic!()
    };
    // The blank lines before the next section are spacing, not context.
    assert_eq!(hunks[0].old_lines(), vec!["a"]);
}

#[test]
fn malformed_patches_say_where_and_what() {
    let cases: [(&str, usize, &str); 9] = [
        ("", 1, "empty"),
        (
            "*** Update File: a\n-x\n+y\n*** End Patch",
            1,
            "must start with `*** Begin Patch`",
        ),
        (
            "*** Begin Patch\n*** Update File: a\n-x\n+y\n",
            4,
            "must end with `*** End Patch`",
        ),
        ("*** Begin Patch\n*** End Patch", 1, "no file sections"),
        (
            "*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch",
            3,
            "must start with `+`",
        ),
        (
            "*** Begin Patch\n*** Update File: a\n*** End Patch",
            2,
            "has no hunks",
        ),
        (
            "*** Begin Patch\n*** Update File: a\n@@ fn x\n*** End Patch",
            3,
            "has no ` `, `-` or `+` lines",
        ),
        (
            "*** Begin Patch\n*** Update File: a\n-x\n?what\n*** End Patch",
            4,
            "unexpected line in hunk 1",
        ),
        (
            "*** Begin Patch\n*** Frobnicate File: a\n*** End Patch",
            2,
            "expected `*** Add File: <path>`",
        ),
    ];
    for (text, line, needle) in cases {
        let e = parse_patch(text).unwrap_err();
        assert_eq!(e.line, line, "{text:?}: {e}");
        assert!(e.message.contains(needle), "{text:?}: {e}");
    }
    let e = parse_patch("*** Begin Patch\n*** Add File:   \n+x\n*** End Patch").unwrap_err();
    assert!(e.to_string().contains("needs a path"), "{e}");
}

#[test]
fn move_without_hunks_is_a_rename() {
    let patch =
        parse_patch("*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch").unwrap();
    assert_eq!(
        patch.ops,
        vec![FileOp::Update {
            path: "a".into(),
            move_to: Some("b".into()),
            hunks: vec![]
        }]
    );
}

#[test]
fn empty_add_file_is_an_empty_file() {
    let patch = parse_patch("*** Begin Patch\n*** Add File: e\n*** End Patch").unwrap();
    assert_eq!(
        patch.ops,
        vec![FileOp::Add {
            path: "e".into(),
            content: String::new()
        }]
    );
}
