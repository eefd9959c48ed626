use pretty_assertions::assert_eq;
use serde_json::json;
use talon_tool_catalog::{Tool, ToolErrorCode};

use super::support::{Ws, call, fail};

const SRC: &str =
    "fn main() {\n    let x = 1;\n    run(x);\n}\n\nfn helper() {\n    let x = 1;\n}\n";

#[tokio::test]
async fn several_edits_apply_together_with_a_diff() {
    let ws = Ws::new();
    ws.put("src/main.rs", SRC);
    let r = call(
        &ws.edit_tool(),
        json!({"path": "src/main.rs", "edits": [
            {"oldText": "    run(x);", "newText": "    run(x + 1);"},
            {"oldText": "fn helper() {\n    let x = 1;", "newText": "fn helper() {\n    let y = 2;"}
        ]}),
    )
    .await
    .unwrap();
    assert_eq!(
        ws.get("src/main.rs"),
        "fn main() {\n    let x = 1;\n    run(x + 1);\n}\n\nfn helper() {\n    let y = 2;\n}\n"
    );
    assert_eq!(r.details["replacements"], 2);
    assert_eq!(r.details["firstChangedLine"], 3);
    let diff = r.details["diff"].as_str().unwrap();
    assert!(diff.contains("-    run(x);\n+    run(x + 1);"), "{diff}");
    assert!(diff.contains("+++ b/src/main.rs"), "{diff}");
    assert!(
        r.text()
            .starts_with("Edited src/main.rs: 2 replacements (+2 -2 lines"),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn the_single_pair_form_and_snake_case_work() {
    let ws = Ws::new();
    ws.put("a.txt", "alpha\nbeta\n");
    call(
        &ws.edit_tool(),
        json!({"path": "a.txt", "oldText": "beta", "newText": "gamma"}),
    )
    .await
    .unwrap();
    assert_eq!(ws.get("a.txt"), "alpha\ngamma\n");
    call(
        &ws.edit_tool(),
        json!({"path": "a.txt", "old_text": "alpha\n", "new_text": ""}),
    )
    .await
    .unwrap();
    assert_eq!(ws.get("a.txt"), "gamma\n");
}

#[tokio::test]
async fn an_ambiguous_edit_lists_the_lines_and_writes_nothing() {
    let ws = Ws::new();
    ws.put("src/main.rs", SRC);
    let before = ws.snapshot();
    let e = fail(
        &ws.edit_tool(),
        json!({"path": "src/main.rs", "edits": [
            {"oldText": "    run(x);", "newText": "    go(x);"},
            {"oldText": "    let x = 1;", "newText": "    let x = 2;"}
        ]}),
    )
    .await;
    assert_eq!(e.param(), Some("edits[1].oldText"));
    assert!(
        e.to_string()
            .contains("edits[1].oldText was found 2 times in src/main.rs, at lines 2, 7"),
        "{e}"
    );
    // The first (valid) edit was not applied either.
    assert_eq!(ws.snapshot(), before);
}

#[tokio::test]
async fn a_not_found_edit_points_at_the_nearest_lines() {
    let ws = Ws::new();
    ws.put("src/main.rs", SRC);
    let before = ws.snapshot();
    let e = fail(
        &ws.edit_tool(),
        json!({"path": "src/main.rs", "oldText": "fn helper() {\n  let x = 1;", "newText": "x"}),
    )
    .await;
    assert_eq!(e.param(), Some("oldText"));
    let m = e.to_string();
    assert!(m.contains("oldText was not found in src/main.rs"), "{m}");
    assert!(m.contains("`fn helper() {` appears at line 6"), "{m}");
    let e = fail(
        &ws.edit_tool(),
        json!({"path": "src/main.rs", "oldText": "    rnu(x);", "newText": "x"}),
    )
    .await;
    assert!(e.to_string().contains("most like its first line"), "{e}");
    assert!(e.to_string().contains("are 3"), "{e}");
    assert_eq!(ws.snapshot(), before);
}

#[tokio::test]
async fn overlapping_and_no_op_edits_are_refused() {
    let ws = Ws::new();
    ws.put("a.txt", SRC);
    let before = ws.snapshot();
    let e = fail(
        &ws.edit_tool(),
        json!({"path": "a.txt", "edits": [
            {"oldText": "fn main() {\n    let x", "newText": "a"},
            {"oldText": "main() {", "newText": "b"}
        ]}),
    )
    .await;
    assert!(e.to_string().contains("overlap"), "{e}");
    let e = fail(
        &ws.edit_tool(),
        json!({"path": "a.txt", "oldText": "run(x)", "newText": "run(x)"}),
    )
    .await;
    assert!(e.to_string().contains("unchanged"), "{e}");
    assert_eq!(ws.snapshot(), before);
}

#[tokio::test]
async fn bad_parameters_name_the_parameter() {
    let ws = Ws::new();
    ws.put("a.txt", "abc\n");
    let before = ws.snapshot();
    let tool = ws.edit_tool();
    let cases = [
        (
            json!({"oldText": "a", "newText": "b"}),
            "path",
            "path required",
        ),
        (json!({"path": "a.txt"}), "edits", "edits required"),
        (
            json!({"path": "a.txt", "edits": []}),
            "edits",
            "edits required",
        ),
        (
            json!({"path": "a.txt", "edits": "abc"}),
            "edits",
            "edits must be an array",
        ),
        (
            json!({"path": "a.txt", "edits": ["abc"]}),
            "edits[0]",
            "edits[0] must be an object",
        ),
        (
            json!({"path": "a.txt", "edits": [{"oldText": "a"}]}),
            "edits[0].newText",
            "edits[0].newText required",
        ),
        (
            json!({"path": "a.txt", "edits": [{"oldText": 1, "newText": "b"}]}),
            "edits[0].oldText",
            "must be a string, got number",
        ),
        (
            json!({"path": "a.txt", "oldText": "a"}),
            "newText",
            "newText required",
        ),
        (
            json!({"path": "a.txt", "newText": "a"}),
            "oldText",
            "oldText required",
        ),
        (
            json!({"path": "a.txt", "oldText": "", "newText": "a"}),
            "oldText",
            "oldText is empty",
        ),
        (
            json!({"path": "a.txt", "oldText": ["a"], "newText": "b"}),
            "oldText",
            "oldText must be a string, got array",
        ),
    ];
    for (args, param, needle) in cases {
        let e = fail(&tool, args.clone()).await;
        assert_eq!(e.param(), Some(param), "{args}: {e}");
        assert!(e.to_string().contains(needle), "{args}: {e}");
    }
    assert_eq!(ws.snapshot(), before);
}

#[tokio::test]
async fn missing_and_binary_files_are_refused() {
    let ws = Ws::new();
    ws.put("bin.dat", b"\xff\xfe\x00abc");
    let e = fail(
        &ws.edit_tool(),
        json!({"path": "nope.txt", "oldText": "a", "newText": "b"}),
    )
    .await;
    assert_eq!(e.code(), ToolErrorCode::FsNotFound, "{e}");
    let e = fail(
        &ws.edit_tool(),
        json!({"path": "bin.dat", "oldText": "abc", "newText": "b"}),
    )
    .await;
    assert_eq!(e.param(), Some("path"));
    assert!(e.to_string().contains("not UTF-8 text"), "{e}");
    assert_eq!(
        std::fs::read(ws.ws().join("bin.dat")).unwrap(),
        b"\xff\xfe\x00abc"
    );
}

#[tokio::test]
async fn crlf_files_accept_lf_old_text() {
    let ws = Ws::new();
    ws.put("win.txt", "one\r\ntwo\r\nthree\r\n");
    call(
        &ws.edit_tool(),
        json!({"path": "win.txt", "oldText": "one\ntwo", "newText": "1\n2"}),
    )
    .await
    .unwrap();
    assert_eq!(ws.get("win.txt"), "1\r\n2\r\nthree\r\n");
}

#[test]
fn spec_accepts_both_forms() {
    let ws = Ws::new();
    let tool = ws.edit_tool();
    let props = &tool.spec().parameters["properties"];
    for field in ["path", "edits", "oldText", "newText"] {
        assert!(props.get(field).is_some(), "{field}");
    }
}
