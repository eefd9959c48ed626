//! The media tools through `ToolTable::invoke` from a real config: `pdf`
//! on a PDF in the agent's workspace (real poppler), `tts` writing into
//! the workspace (real espeak-ng), and the generation tools refusing with
//! `media.no_provider`.

use serde_json::{Value, json};
use talon_runtime::{InvokeOutcome, ModelToolCall, RunSpec, RuntimeBuilder, provides_core_tool};
use talon_tool_policy::RunContext;

/// A one-page PDF whose page shows `text`, with a correct xref table.
fn one_page_pdf(text: &str) -> Vec<u8> {
    let stream = format!("BT /F1 24 Tf 72 700 Td ({text}) Tj ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [4 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>".to_owned(),
        format!("<< /Length {} >>\nstream\n{stream}\nendstream", stream.len()),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(b"xref\n0 6\n0000000000 65535 f \n");
    for off in offsets {
        out.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n").as_bytes(),
    );
    out
}

fn completed(out: &InvokeOutcome) -> (String, Value) {
    match out {
        InvokeOutcome::Completed { result, .. } => (result.text(), result.details.clone()),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_media_tools_run_in_the_agent_workspace() {
    for tool in [
        "tts",
        "image",
        "image_generate",
        "music_generate",
        "video_generate",
    ] {
        assert!(provides_core_tool(tool), "{tool}");
    }
    assert!(
        std::path::Path::new("/usr/bin/pdftotext").exists()
            && std::path::Path::new("/usr/bin/espeak-ng").exists(),
        "this test runs poppler and espeak-ng: install Debian's poppler-utils and espeak-ng (`cargo xtask media-install`)"
    );
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("doc.pdf"), one_page_pdf("Quarterly ferry report")).unwrap();
    let loaded = talon_config::load_str(
        r#"{ agents: { defaults: { workspace: "./ws" } } }"#,
        "talon.json",
    )
    .unwrap();
    let runtime =
        RuntimeBuilder::from_config_in(&loaded.config, dir.path(), dir.path().join("state"))
            .unwrap()
            .build()
            .unwrap();
    let mut ctx = RunContext::new("main");
    ctx.sender_is_owner = Some(true);
    let table = runtime.assemble(RunSpec::new(ctx));
    let names = table.names();
    for tool in ["pdf", "tts", "image", "image_generate"] {
        assert!(names.contains(&tool), "{tool} not offered: {names:?}");
    }

    let out = table
        .invoke(ModelToolCall::new("c1", "pdf", json!({"pdf": "doc.pdf"})))
        .await;
    let (text, details) = completed(&out);
    assert!(text.contains("Quarterly ferry report"), "{text}");
    assert_eq!(details["pageCount"], 1);

    let out = table
        .invoke(ModelToolCall::new(
            "c2",
            "tts",
            json!({"text": "Hello there."}),
        ))
        .await;
    let (_, details) = completed(&out);
    assert!(details["durationMs"].as_u64().unwrap() > 0, "{details}");
    assert!(
        details["audioPath"].as_str().unwrap().contains("/tts/"),
        "{details}"
    );
    let wavs: Vec<_> = std::fs::read_dir(ws.join("tts")).unwrap().collect();
    assert_eq!(wavs.len(), 1);

    let out = table
        .invoke(ModelToolCall::new(
            "c3",
            "image_generate",
            json!({"prompt": "a lighthouse"}),
        ))
        .await;
    match out {
        InvokeOutcome::Failed(e) => {
            assert_eq!(e.code().as_str(), "media.no_provider");
            assert!(
                e.to_string()
                    .contains("agents.defaults.imageGenerationModel"),
                "{e}"
            );
        }
        other => panic!("{other:?}"),
    }

    // image: validated (decoded from the workspace), then refused for the
    // missing vision provider; a URL goes through web_fetch's guard.
    std::fs::write(ws.join("dot.png"), ONE_PIXEL_PNG).unwrap();
    for (params, code) in [
        (json!({"image": "dot.png"}), "media.no_provider"),
        (json!({"image": "missing.png"}), "fs.not_found"),
        (
            json!({"image": "http://169.254.169.254/latest/x.png"}),
            "web.metadata_blocked",
        ),
    ] {
        let out = table
            .invoke(ModelToolCall::new("c4", "image", params.clone()))
            .await;
        match out {
            InvokeOutcome::Failed(e) => assert_eq!(e.code().as_str(), code, "{params}: {e}"),
            other => panic!("{other:?}"),
        }
    }
}

/// A 1x1 PNG.
const ONE_PIXEL_PNG: &[u8] = &[
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 4, 0,
    0, 0, 181, 28, 12, 2, 0, 0, 0, 11, 73, 68, 65, 84, 120, 218, 99, 100, 96, 0, 0, 0, 6, 0, 2, 48,
    129, 208, 47, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];
