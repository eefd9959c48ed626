use std::sync::Arc;

use base64::Engine as _;
use pretty_assertions::assert_eq;
use serde_json::json;
use talon_tool_catalog::{ContentBlock, Tool, ToolErrorCode};
use talon_tools::{ReadLimits, ReadTool};

use super::support::{TINY_PNG, Ws, call, fail};

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[tokio::test]
async fn reads_a_text_file_as_stored() {
    let ws = Ws::new();
    ws.put("src/main.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    let r = call(&ws.read_tool(), json!({"path": "src/main.rs"}))
        .await
        .unwrap();
    assert_eq!(r.text(), "fn main() {\n    println!(\"hi\");\n}");
    assert_eq!(r.details["totalLines"], 3);
    assert_eq!(r.details["truncated"], false);
    assert_eq!(r.details["nextOffset"], json!(null));
    // The absolute spelling inside the workspace reads the same file.
    let abs = ws.ws().join("src/main.rs").display().to_string();
    let r2 = call(&ws.read_tool(), json!({"path": abs})).await.unwrap();
    assert_eq!(r2.text(), r.text());
}

#[tokio::test]
async fn offset_and_limit_page_with_a_continue_note() {
    let ws = Ws::new();
    ws.put("log.txt", numbered(50));
    let r = call(
        &ws.read_tool(),
        json!({"path": "log.txt", "offset": 10, "limit": 5}),
    )
    .await
    .unwrap();
    assert_eq!(
        r.text(),
        "line 10\nline 11\nline 12\nline 13\nline 14\n\n[36 more lines in the file. Use offset=15 to continue.]"
    );
    assert_eq!(r.details["nextOffset"], 15);
    // Lenient numbers: numeric strings are accepted.
    let r = call(
        &ws.read_tool(),
        json!({"path": "log.txt", "offset": "49", "limit": "10"}),
    )
    .await
    .unwrap();
    assert_eq!(r.text(), "line 49\nline 50");
}

#[tokio::test]
async fn line_and_byte_caps_cut_and_say_how_to_read_on() {
    let ws = Ws::new();
    ws.put("big.txt", numbered(100));
    let tool = ReadTool::new(
        ws.bridge.clone(),
        ReadLimits {
            max_lines: 20,
            max_bytes: 1 << 20,
            ..ReadLimits::default()
        },
    );
    let r = call(&tool, json!({"path": "big.txt"})).await.unwrap();
    assert!(r.text().starts_with("line 1\n"));
    assert!(
        r.text()
            .ends_with("[Showing lines 1-20 of 100 (20 line cap). Use offset=21 to continue.]"),
        "{}",
        r.text()
    );
    assert_eq!(r.details["truncatedBy"], "lines");

    let tool = ReadTool::new(
        ws.bridge.clone(),
        ReadLimits {
            max_bytes: 100,
            ..ReadLimits::default()
        },
    );
    let r = call(&tool, json!({"path": "big.txt", "offset": 21}))
        .await
        .unwrap();
    let shown = r.details["bytes"].as_u64().unwrap();
    assert!(shown <= 100, "{shown}");
    let next = r.details["nextOffset"].as_u64().unwrap();
    assert!(
        r.text()
            .contains(&format!("(100 byte cap). Use offset={next} to continue.")),
        "{}",
        r.text()
    );
    // Following the note reads on from the right line.
    let r = call(&tool, json!({"path": "big.txt", "offset": next}))
        .await
        .unwrap();
    assert!(
        r.text().starts_with(&format!("line {next}\n")),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn the_scan_cap_is_reported() {
    let ws = Ws::new();
    ws.put("huge.txt", numbered(1000));
    let tool = ReadTool::new(
        ws.bridge.clone(),
        ReadLimits {
            max_scan_bytes: 1000,
            max_image_bytes: 10,
            ..ReadLimits::default()
        },
    );
    let r = call(&tool, json!({"path": "huge.txt"})).await.unwrap();
    assert!(r.text().contains("read looks at its first"), "{}", r.text());
    assert!(r.text().contains("Use exec"), "{}", r.text());
    assert_eq!(r.details["totalLinesExact"], false);
    let e = fail(&tool, json!({"path": "huge.txt", "offset": 900})).await;
    assert_eq!(e.param(), Some("offset"));
    assert!(e.to_string().contains("sed -n"), "{e}");
}

#[tokio::test]
async fn images_come_back_as_images() {
    let ws = Ws::new();
    ws.put("img/dot.png", TINY_PNG);
    // The name does not matter: the magic bytes do.
    ws.put("img/dot.dat", TINY_PNG);
    for path in ["img/dot.png", "img/dot.dat"] {
        let r = call(&ws.read_tool(), json!({"path": path})).await.unwrap();
        let image = r
            .content
            .iter()
            .find_map(|b| match b {
                ContentBlock::Image { data, mime_type } => Some((data.clone(), mime_type.clone())),
                ContentBlock::Text { .. } => None,
            })
            .unwrap();
        assert_eq!(image.1, "image/png");
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(image.0)
            .unwrap();
        assert_eq!(decoded, TINY_PNG);
        assert_eq!(r.details["path"], path);
        assert_eq!(r.details["bytes"], TINY_PNG.len());
    }
}

#[tokio::test]
async fn an_image_over_the_cap_is_refused() {
    let ws = Ws::new();
    let mut big = TINY_PNG.to_vec();
    big.extend(std::iter::repeat_n(0u8, 5000));
    ws.put("big.png", &big);
    let tool = ReadTool::new(
        Arc::clone(&ws.bridge),
        ReadLimits {
            max_image_bytes: 1024,
            ..ReadLimits::default()
        },
    );
    let e = fail(&tool, json!({"path": "big.png"})).await;
    assert_eq!(e.param(), Some("path"));
    let m = e.to_string();
    assert!(
        m.contains(&format!(
            "big.png is an image (image/png, {} bytes)",
            big.len()
        )),
        "{m}"
    );
    assert!(m.contains("1024-byte image cap"), "{m}");
}

#[tokio::test]
async fn binary_files_are_refused() {
    let ws = Ws::new();
    ws.put("a.bin", b"\x7fELF\x02\x01\x01\0\0\0\0");
    ws.put("latin1.txt", b"caf\xe9 au lait\n");
    let e = fail(&ws.read_tool(), json!({"path": "a.bin"})).await;
    assert!(
        e.to_string()
            .contains("a.bin is a binary file (it contains a NUL byte at offset 7"),
        "{e}"
    );
    let e = fail(&ws.read_tool(), json!({"path": "latin1.txt"})).await;
    assert!(e.to_string().contains("not UTF-8 text"), "{e}");
    assert_eq!(e.param(), Some("path"));
}

#[tokio::test]
async fn empty_file_says_so() {
    let ws = Ws::new();
    ws.put("empty.txt", "");
    let r = call(&ws.read_tool(), json!({"path": "empty.txt"}))
        .await
        .unwrap();
    assert_eq!(r.text(), "[The file is empty.]");
    assert_eq!(r.details["totalLines"], 0);
}

#[tokio::test]
async fn bad_parameters_name_the_parameter() {
    let ws = Ws::new();
    ws.put("a.txt", "one\ntwo\n");
    let tool = ws.read_tool();
    let cases = [
        (json!({}), "path", "path required"),
        (json!({"path": "   "}), "path", "path is empty"),
        (
            json!({"path": 42}),
            "path",
            "path must be a string, got number",
        ),
        (
            json!({"path": ["a.txt"]}),
            "path",
            "path must be a string, got array",
        ),
        (
            json!({"path": "a.txt", "offset": 0}),
            "offset",
            "offset must be a positive integer",
        ),
        (
            json!({"path": "a.txt", "offset": -3}),
            "offset",
            "offset must be a positive integer",
        ),
        (
            json!({"path": "a.txt", "offset": "ten"}),
            "offset",
            "offset must be a positive integer",
        ),
        (
            json!({"path": "a.txt", "offset": 1.5}),
            "offset",
            "offset must be a positive integer",
        ),
        (
            json!({"path": "a.txt", "limit": true}),
            "limit",
            "limit must be a positive integer",
        ),
        (
            json!({"path": "a.txt", "offset": 3}),
            "offset",
            "offset 3 is past the end of the file: a.txt has 2 lines",
        ),
    ];
    for (args, param, needle) in cases {
        let e = fail(&tool, args.clone()).await;
        assert_eq!(e.param(), Some(param), "{args}: {e}");
        assert!(e.to_string().contains(needle), "{args}: {e}");
        assert_eq!(e.status(), 400);
    }
}

#[tokio::test]
async fn missing_file_and_directory_keep_the_bridge_code() {
    let ws = Ws::new();
    std::fs::create_dir(ws.ws().join("dir")).unwrap();
    let e = fail(&ws.read_tool(), json!({"path": "nope.txt"})).await;
    assert_eq!(e.code(), ToolErrorCode::FsNotFound, "{e}");
    assert_eq!(e.param(), Some("path"));
    let e = fail(&ws.read_tool(), json!({"path": "dir"})).await;
    assert_eq!(e.code(), ToolErrorCode::FsNotAFile, "{e}");
}

#[test]
fn spec_keeps_the_catalog_schema() {
    let ws = Ws::new();
    let tool = ws.read_tool();
    let spec = tool.spec();
    assert_eq!(spec.name, "read");
    assert_eq!(spec.parameters["required"], json!(["path"]));
    for field in ["path", "offset", "limit"] {
        assert!(
            spec.parameters["properties"].get(field).is_some(),
            "{field}"
        );
    }
    assert!(spec.description.contains("offset"), "{}", spec.description);
    assert!(
        spec.description.contains("2000 lines"),
        "{}",
        spec.description
    );
}
