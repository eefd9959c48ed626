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

/// A one-shot OpenAI-compatible `chat/completions` mock on loopback: it
/// answers every request with `reply` and keeps what it received.
async fn vision_mock(reply: &'static str) -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = std::sync::Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let keep = std::sync::Arc::clone(&keep);
            tokio::spawn(async move {
                let mut got = Vec::new();
                let mut buf = vec![0u8; 65536];
                loop {
                    let n = match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    got.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&got).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let len = text[..end]
                            .lines()
                            .find_map(|l| {
                                let (k, v) = l.split_once(':')?;
                                k.eq_ignore_ascii_case("content-length")
                                    .then(|| v.trim().parse::<usize>().ok())?
                            })
                            .unwrap_or(0);
                        if got.len() >= end + 4 + len {
                            break;
                        }
                    }
                }
                keep.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&got).to_string());
                let body =
                    json!({"choices": [{"message": {"role": "assistant", "content": reply}}]})
                        .to_string();
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(resp.as_bytes()).await;
            });
        }
    });
    (port, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_asks_the_configured_vision_provider_through_the_guard() {
    use std::os::unix::fs::PermissionsExt;
    let (port, seen) = vision_mock("A single grey dot.").await;
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("dot.png"), ONE_PIXEL_PNG).unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let secrets = state.join("secrets.json");
    std::fs::write(&secrets, r#"{"VISION_KEY": "sk-test-123"}"#).unwrap();
    std::fs::set_permissions(&secrets, std::fs::Permissions::from_mode(0o600)).unwrap();

    let table_for = |allow: &str| {
        let text = format!(
            r#"{{ agents: {{ defaults: {{ workspace: "./ws" }} }},
                 tools: {{ imageProvider: {{ baseUrl: "http://127.0.0.1:{port}/v1", model: "vision-mini",
                   apiKey: "${{secret:VISION_KEY}}"{allow} }} }} }}"#
        );
        let loaded = talon_config::load_str(&text, "talon.json").unwrap();
        let runtime = RuntimeBuilder::from_config_in(&loaded.config, dir.path(), state.clone())
            .unwrap()
            .build()
            .unwrap();
        let mut ctx = RunContext::new("main");
        ctx.sender_is_owner = Some(true);
        runtime.assemble(RunSpec::new(ctx))
    };

    // Allowed by the block's explicit allowlist: the answer comes back,
    // the request carried the key, the model and the image.
    let table = table_for(r#", ssrfAllowlist: { cidrs: ["127.0.0.1/32"] }"#);
    let out = table
        .invoke(ModelToolCall::new(
            "v1",
            "image",
            json!({"image": "dot.png", "prompt": "What is this?"}),
        ))
        .await;
    let (text, _) = completed(&out);
    assert!(text.contains("A single grey dot."), "{text}");
    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let req = &requests[0];
    assert!(req.starts_with("POST /v1/chat/completions "), "{req}");
    assert!(
        req.to_ascii_lowercase()
            .contains("authorization: bearer sk-test-123"),
        "{req}"
    );
    assert!(req.contains(r#""model":"vision-mini""#), "{req}");
    assert!(req.contains("data:image/"), "{req}");
    assert!(req.contains("What is this?"), "{req}");

    // Without the allowlist the loopback endpoint is refused by the
    // guard: nothing reaches it.
    let table = table_for("");
    let out = table
        .invoke(ModelToolCall::new(
            "v2",
            "image",
            json!({"image": "dot.png"}),
        ))
        .await;
    match out {
        InvokeOutcome::Failed(e) => {
            assert_eq!(e.code().as_str(), "media.engine_failed", "{e}");
            assert!(
                e.message().contains("imageProvider.ssrfAllowlist"),
                "{}",
                e.message()
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(seen.lock().unwrap().len(), 1);
}
