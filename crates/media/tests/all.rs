//! The media tools on real engines: poppler on PDFs written by hand here,
//! espeak-ng speaking into a real workspace through a mount bridge.
#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "test helpers panic on setup failures"
)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use serde_json::{Map, Value, json};
use talon_fs_bridge::{FsBridge, Mount, MountBridge};
use talon_media::{
    EngineLimits, EngineRunner, EspeakProvider, GenerateTool, GenerationKind, IMAGE_MODEL_KEY,
    ImageLimits, ImageTool, OpenAiVision, PdfLimits, PdfTool, PreparedImage, TtsTool, VisionLimits,
    VisionProvider, WavInfo,
};
use talon_tool_catalog::{
    CancellationToken, ContentBlock, Tool, ToolCall, ToolContext, ToolError, ToolErrorCode,
    ToolResult,
};

/// Panic, naming the fix, unless the engines are installed.
fn require_engines() {
    for (binary, package) in [
        ("/usr/bin/pdftotext", "poppler-utils"),
        ("/usr/bin/pdftoppm", "poppler-utils"),
        ("/usr/bin/pdfinfo", "poppler-utils"),
        ("/usr/bin/espeak-ng", "espeak-ng"),
    ] {
        assert!(
            Path::new(binary).exists(),
            "{binary} is missing: these tests run the real engine; install Debian's {package} (`cargo xtask media-install`)"
        );
    }
}

fn runner() -> EngineRunner {
    let env = BTreeMap::from([
        ("PATH".to_owned(), "/usr/bin:/bin".to_owned()),
        ("LANG".to_owned(), "C.UTF-8".to_owned()),
    ]);
    EngineRunner::new(env, EngineLimits::default())
}

fn workspace() -> (tempfile::TempDir, Arc<dyn FsBridge>) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("ws")).expect("mkdir");
    let bridge = MountBridge::new(
        vec![Mount::writable("/workspace", dir.path().join("ws"))],
        "/workspace",
    )
    .expect("bridge");
    (dir, Arc::new(bridge))
}

/// A PDF with one page per entry of `pages` (each a line of text), with
/// a correct xref table; `extra_trailer` is added to the trailer (an
/// `/Encrypt` entry) and `extra_objects` appended after the pages.
fn pdf(pages: &[&str], extra_objects: &[&str], extra_trailer: &str) -> Vec<u8> {
    let n = pages.len();
    // 1: catalog, 2: pages, 3: font, then (page, content) pairs.
    let mut objects: Vec<String> = Vec::new();
    objects.push("<< /Type /Catalog /Pages 2 0 R >>".to_owned());
    let kids: Vec<String> = (0..n).map(|i| format!("{} 0 R", 4 + 2 * i)).collect();
    objects.push(format!(
        "<< /Type /Pages /Kids [{}] /Count {n} >>",
        kids.join(" ")
    ));
    objects.push("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_owned());
    for (i, text) in pages.iter().enumerate() {
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            5 + 2 * i
        ));
        let stream = format!("BT /F1 24 Tf 72 700 Td ({text}) Tj ET");
        objects.push(format!(
            "<< /Length {} >>\nstream\n{stream}\nendstream",
            stream.len()
        ));
    }
    objects.extend(extra_objects.iter().map(|s| (*s).to_owned()));
    let mut out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for off in offsets {
        out.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R {extra_trailer} >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

fn call(name: &str, params: Value) -> ToolCall {
    let params: Map<String, Value> = params.as_object().cloned().unwrap_or_default();
    ToolCall {
        id: "call-1".to_owned(),
        name: name.to_owned(),
        params,
    }
}

async fn run(tool: &dyn Tool, params: Value) -> Result<ToolResult, ToolError> {
    tool.execute(
        &call(&tool.spec().name, params),
        &ToolContext::default(),
        &CancellationToken::new(),
    )
    .await
}

fn pdf_tool(bridge: &Arc<dyn FsBridge>) -> PdfTool {
    PdfTool::new(Arc::clone(bridge), runner(), PdfLimits::default())
}

/// Panic, naming the fix, unless bubblewrap is installed (poppler runs
/// in it).
fn require_bwrap() {
    assert!(
        Path::new(talon_media::DEFAULT_BWRAP).exists(),
        "{} is missing: poppler runs in bubblewrap without network, and these tests check it; install Debian's bubblewrap (`cargo xtask test` does)",
        talon_media::DEFAULT_BWRAP
    );
}

#[tokio::test]
async fn poppler_runs_in_bubblewrap_without_network_or_host_files() {
    require_engines();
    require_bwrap();
    let runner = runner();
    // bubblewrap works on this host, so poppler runs in it.
    assert_eq!(
        runner.isolation_in_use().await.as_deref(),
        Some(Path::new(talon_media::DEFAULT_BWRAP))
    );
    let host = tempfile::tempdir().expect("tempdir");
    std::fs::write(host.path().join("secret.txt"), "HOST-SECRET").expect("secret");
    let work = tempfile::tempdir().expect("work dir");
    std::fs::write(work.path().join("mine.txt"), "MINE").expect("own file");
    let abort = talon_tool_catalog::CancellationToken::new();
    let sh = |script: &str| vec!["-c".to_owned(), script.to_owned()];
    // Only loopback: no interface to reach anything.
    let out = runner
        .run_isolated(
            "sh",
            "dash",
            &sh("cat /proc/net/dev"),
            work.path(),
            Vec::new(),
            &abort,
        )
        .await
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    let interfaces: Vec<&str> = text
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next())
        .map(str::trim)
        .collect();
    assert_eq!(interfaces, ["lo"], "{text}");
    // Its own dir is there (and writable); a host file elsewhere is not,
    // and the system is read-only.
    let script = format!(
        "cat mine.txt; echo out > made.txt; cat {} 2>/dev/null && echo LEAK; touch /usr/x 2>/dev/null && echo RW; true",
        host.path().join("secret.txt").display()
    );
    let out = runner
        .run_isolated("sh", "dash", &sh(&script), work.path(), Vec::new(), &abort)
        .await
        .expect("run");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "MINE", "{out:?}");
    assert_eq!(
        std::fs::read_to_string(work.path().join("made.txt")).expect("written"),
        "out\n"
    );
    // Isolation off runs on the host (the same script leaks the file).
    let open = runner.clone().with_isolation(talon_media::Isolation::Off);
    assert_eq!(open.isolation_in_use().await, None);
    let out = open
        .run_isolated("sh", "dash", &sh(&script), work.path(), Vec::new(), &abort)
        .await
        .expect("run");
    assert!(String::from_utf8_lossy(&out.stdout).contains("HOST-SECRET"));
    // A bubblewrap that cannot run: Auto falls back, Bwrap refuses.
    let missing = host.path().join("no-bwrap");
    let auto = runner
        .clone()
        .with_isolation(talon_media::Isolation::Auto(missing.clone()));
    assert_eq!(auto.isolation_in_use().await, None);
    let forced = runner.with_isolation(talon_media::Isolation::Bwrap(missing));
    assert!(
        forced
            .run_isolated("sh", "dash", &sh("true"), work.path(), Vec::new(), &abort)
            .await
            .is_err()
    );
}

#[tokio::test]
async fn pdf_text_of_a_page_range() {
    require_engines();
    let (_dir, bridge) = workspace();
    let bytes = pdf(
        &["First page words", "Second page words", "Third page words"],
        &[],
        "",
    );
    bridge
        .write("doc.pdf", &bytes, Default::default())
        .await
        .expect("write pdf");
    let tool = pdf_tool(&bridge);

    let all = run(&tool, json!({"pdf": "doc.pdf"}))
        .await
        .expect("pdf text");
    let text = all.text();
    for expected in ["First page words", "Second page words", "Third page words"] {
        assert!(text.contains(expected), "{expected} missing from {text}");
    }
    assert_eq!(all.details["pageCount"], 3);

    let two = run(
        &tool,
        json!({"pdf": "/workspace/doc.pdf", "pages": "2-3", "layout": true}),
    )
    .await
    .expect("pdf pages 2-3");
    let text = two.text();
    assert!(!text.contains("First page words"), "{text}");
    assert!(
        text.contains("--- page 2 ---") && text.contains("Third page words"),
        "{text}"
    );
    assert_eq!(two.details["pages"], json!({"from": 2, "to": 3}));

    let cut = run(&tool, json!({"pdf": "doc.pdf", "maxChars": 10}))
        .await
        .expect("cut");
    assert_eq!(cut.details["text"]["truncated"], true);
    assert!(cut.text().contains("[text cut at 10 of"), "{}", cut.text());

    let beyond = run(&tool, json!({"pdf": "doc.pdf", "pages": "7"}))
        .await
        .unwrap_err();
    assert_eq!(beyond.param(), Some("pages"));
    assert!(
        beyond.message().contains("has 3 pages"),
        "{}",
        beyond.message()
    );
    let bad = run(&tool, json!({"pdf": "doc.pdf", "pages": "3-1"}))
        .await
        .unwrap_err();
    assert_eq!(bad.code(), ToolErrorCode::InputInvalid);
}

/// Checks a PNG chunk by chunk (signature, CRC of every chunk, IHDR
/// first, IDAT present, IEND last) and returns its width and height.
fn png_size(png: &[u8]) -> (u32, u32) {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = 0xffff_ffffu32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xedb8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG signature");
    let be = |i: usize| u32::from_be_bytes(png[i..i + 4].try_into().expect("4 bytes"));
    let mut at = 8;
    let mut names = Vec::new();
    while at < png.len() {
        let len = be(at) as usize;
        let kind = &png[at + 4..at + 8];
        let crc = be(at + 8 + len);
        assert_eq!(
            crc32(&png[at + 4..at + 8 + len]),
            crc,
            "bad CRC in {kind:?}"
        );
        names.push(String::from_utf8_lossy(kind).into_owned());
        at += 12 + len;
    }
    assert_eq!(names.first().map(String::as_str), Some("IHDR"));
    assert_eq!(names.last().map(String::as_str), Some("IEND"));
    assert!(
        names.iter().any(|n| n == "IDAT"),
        "no image data: {names:?}"
    );
    (be(16), be(20))
}

#[tokio::test]
async fn pdf_page_renders_to_a_png_of_the_expected_size() {
    require_engines();
    let (_dir, bridge) = workspace();
    bridge
        .write("doc.pdf", &pdf(&["Rendered"], &[], ""), Default::default())
        .await
        .expect("write");
    let tool = pdf_tool(&bridge);
    let result = run(
        &tool,
        json!({"pdf": "doc.pdf", "mode": "images", "resolution": 72}),
    )
    .await
    .expect("render");
    let images: Vec<&String> = result
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Image { data, mime_type } if mime_type == "image/png" => Some(data),
            _ => None,
        })
        .collect();
    assert_eq!(images.len(), 1);
    let png = base64::engine::general_purpose::STANDARD
        .decode(images[0])
        .expect("base64");
    // US Letter (612 x 792 pt) at 72 DPI.
    assert_eq!(png_size(&png), (612, 792));

    // The resolution is capped (200 DPI): 1700 x 2200.
    let capped = run(
        &tool,
        json!({"pdf": "doc.pdf", "mode": "both", "resolution": 5000}),
    )
    .await
    .expect("capped render");
    assert_eq!(capped.details["resolution"], 200);
    assert!(capped.text().contains("Rendered"));
    let png = capped
        .content
        .iter()
        .find_map(|b| match b {
            ContentBlock::Image { data, .. } => Some(data.clone()),
            _ => None,
        })
        .expect("image block");
    let png = base64::engine::general_purpose::STANDARD
        .decode(png)
        .expect("base64");
    assert_eq!(png_size(&png), (1700, 2200));

    // Nothing was written into the workspace.
    let names: Vec<String> = bridge
        .list("/workspace")
        .await
        .expect("list")
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(names, vec!["doc.pdf".to_owned()]);
}

#[tokio::test]
async fn pdf_bad_input_is_a_clear_error() {
    require_engines();
    let (_dir, bridge) = workspace();
    let tool = pdf_tool(&bridge);

    // Encrypted with a user password nobody gave (the /U check fails).
    let encrypted = pdf(
        &["Secret"],
        &[&format!(
            "<< /Filter /Standard /V 1 /R 2 /O <{}> /U <{}> /P -4 >>",
            "11".repeat(32),
            "22".repeat(32)
        )],
        &format!("/Encrypt 6 0 R /ID [<{0}> <{0}>]", "ab".repeat(16)),
    );
    bridge
        .write("enc.pdf", &encrypted, Default::default())
        .await
        .expect("write");
    let e = run(&tool, json!({"pdf": "enc.pdf"})).await.unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::MediaInvalid, "{e:?}");
    assert!(e.message().contains("encrypted"), "{}", e.message());
    assert_eq!(e.param(), Some("pdf"));

    // A header and garbage.
    bridge
        .write(
            "broken.pdf",
            b"%PDF-1.7\nthis is not a pdf at all",
            Default::default(),
        )
        .await
        .expect("write");
    let e = run(&tool, json!({"pdf": "broken.pdf"})).await.unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::MediaInvalid, "{e:?}");
    assert!(e.message().contains("malformed"), "{}", e.message());

    // Not a PDF at all.
    bridge
        .write("notes.txt", b"hello", Default::default())
        .await
        .expect("write");
    let e = run(&tool, json!({"pdf": "notes.txt"})).await.unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::MediaInvalid);
    assert!(e.message().contains("%PDF-"), "{}", e.message());

    // Over the byte limit: refused before poppler runs.
    let small = PdfTool::new(
        Arc::clone(&bridge),
        runner(),
        PdfLimits {
            max_bytes: 100,
            ..PdfLimits::default()
        },
    );
    bridge
        .write("doc.pdf", &pdf(&["x"], &[], ""), Default::default())
        .await
        .expect("write");
    let e = run(&small, json!({"pdf": "doc.pdf"})).await.unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::MediaTooLarge);
    assert!(
        e.message().contains("over the limit of 100"),
        "{}",
        e.message()
    );

    // Outside the workspace: the bridge refuses.
    let e = run(&tool, json!({"pdf": "../../etc/passwd"}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::FsOutsideMounts);

    // Bounded memory: poppler under a 4 MiB address-space limit fails
    // cleanly instead of running.
    let starved = PdfTool::new(
        Arc::clone(&bridge),
        runner().with_limits(EngineLimits {
            memory_bytes: 4 * 1024 * 1024,
            ..EngineLimits::default()
        }),
        PdfLimits::default(),
    );
    let e = run(&starved, json!({"pdf": "doc.pdf"})).await.unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::MediaEngineFailed, "{e:?}");
    assert!(e.message().contains("limit"), "{}", e.message());

    // A page range over the image page cap.
    let e = run(
        &tool,
        json!({"pdf": "doc.pdf", "mode": "images", "pages": "1-50"}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::MediaTooLarge);
}

#[tokio::test]
async fn a_missing_engine_names_the_package() {
    let (_dir, bridge) = workspace();
    bridge
        .write("doc.pdf", &pdf(&["x"], &[], ""), Default::default())
        .await
        .expect("write");
    let empty_path = EngineRunner::new(
        BTreeMap::from([("PATH".to_owned(), "/nonexistent".to_owned())]),
        EngineLimits::default(),
    );
    let tool = PdfTool::new(Arc::clone(&bridge), empty_path, PdfLimits::default());
    let e = run(&tool, json!({"pdf": "doc.pdf"})).await.unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::MediaEngineMissing);
    assert!(e.message().contains("poppler-utils"), "{}", e.message());
}

#[tokio::test]
async fn tts_writes_a_wav_with_a_duration() {
    require_engines();
    let (dir, bridge) = workspace();
    let tool = TtsTool::new(Arc::clone(&bridge), Arc::new(EspeakProvider::new(runner())));
    let result = run(&tool, json!({"text": "Hello from Talon. This is a test."}))
        .await
        .expect("tts");
    let path = result.details["audioPath"]
        .as_str()
        .expect("audioPath")
        .to_owned();
    assert!(
        path.starts_with("/workspace/tts/") && path.ends_with(".wav"),
        "{path}"
    );
    assert!(result.text().starts_with(&format!("MEDIA:{path}")));
    assert_eq!(result.details["provider"], "espeak-ng");
    let on_disk = dir
        .path()
        .join("ws")
        .join(path.trim_start_matches("/workspace/"));
    let wav = std::fs::read(&on_disk).expect("the wav is in the workspace");
    let info = WavInfo::parse(&wav).expect("a WAV header");
    let ms = result.details["durationMs"].as_u64().expect("durationMs");
    assert!(ms > 500 && ms < 20_000, "duration {ms} ms");
    assert_eq!(info.duration().as_millis() as u64, ms);

    // Bounded time: the engine is killed at the call's timeout.
    let e = run(
        &tool,
        json!({"text": "A longer sentence. ".repeat(200), "timeoutMs": 1}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::MediaTimeout, "{e:?}");

    let e = run(&tool, json!({"text": "x".repeat(5000)}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::MediaTooLarge);
    let e = run(&tool, json!({"text": "  "})).await.unwrap_err();
    assert_eq!(e.param(), Some("text"));
}

#[tokio::test]
async fn generation_tools_refuse_without_a_provider() {
    for kind in GenerationKind::ALL {
        let tool = GenerateTool::new(kind, None);
        assert_eq!(tool.spec().name, kind.tool());
        let e = run(&tool, json!({"prompt": "a lighthouse"}))
            .await
            .unwrap_err();
        assert_eq!(e.code(), ToolErrorCode::MediaNoProvider);
        assert!(
            e.message().contains("no provider configured"),
            "{}",
            e.message()
        );
        assert!(e.message().contains(kind.config_key()), "{}", e.message());
    }
}

#[test]
fn wav_header_parsing() {
    // 16-bit mono 8 kHz, 16,000 bytes of data: one second; a streamed
    // header declaring more than is present counts what is present.
    let mut wav = b"RIFF\0\0\0\0WAVEfmt ".to_vec();
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes());
    wav.extend_from_slice(&8000u32.to_le_bytes());
    wav.extend_from_slice(&16000u32.to_le_bytes());
    wav.extend_from_slice(&2u16.to_le_bytes());
    wav.extend_from_slice(&16u16.to_le_bytes());
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&0x7fff_ffffu32.to_le_bytes());
    wav.extend(std::iter::repeat_n(0u8, 16_000));
    let info = WavInfo::parse(&wav).expect("wav");
    assert_eq!(info.data_bytes, 16_000);
    assert_eq!(info.duration().as_millis(), 1000);
    assert_eq!(WavInfo::parse(&wav[..20]), None);
}

// ---------------------------------------------------------------------
// image
// ---------------------------------------------------------------------

/// A provider that keeps what it was given.
#[derive(Debug, Default)]
struct Keep {
    seen: std::sync::Mutex<Vec<PreparedImage>>,
}

#[async_trait::async_trait]
impl VisionProvider for Keep {
    fn id(&self) -> &str {
        "keep"
    }

    async fn describe(
        &self,
        prompt: &str,
        images: &[PreparedImage],
        _model: Option<&str>,
        _abort: &CancellationToken,
    ) -> talon_media::Result<String> {
        self.seen.lock().unwrap().extend(images.iter().cloned());
        Ok(format!("{prompt}: {} image(s)", images.len()))
    }
}

fn png_bytes(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, 90])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

/// A PNG whose header claims `w` x `h` pixels over a tiny body: what a
/// decompression bomb looks like to a decoder that trusts the header.
fn bomb_png(w: u32, h: u32) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let chunk = |out: &mut Vec<u8>, kind: &[u8], data: &[u8]| {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend_from_slice(data);
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32fast::hash(&body).to_be_bytes());
    };
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(
        &mut out,
        b"IDAT",
        &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01],
    );
    chunk(&mut out, b"IEND", &[]);
    out
}

#[tokio::test]
async fn image_is_scaled_and_compressed_for_the_provider() {
    let (dir, bridge) = workspace();
    std::fs::write(dir.path().join("ws/wide.png"), png_bytes(3000, 1500)).unwrap();
    let keep = Arc::new(Keep::default());
    let tool = ImageTool::new(
        Arc::clone(&bridge),
        None,
        Some(keep.clone() as Arc<dyn VisionProvider>),
        ImageLimits::default(),
    );
    let out = run(&tool, json!({"image": "wide.png", "prompt": "What"}))
        .await
        .unwrap();
    assert_eq!(out.text(), "What: 1 image(s)");
    let seen = keep.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    let img = &seen[0];
    assert_eq!((img.width, img.height), (2048, 1024));
    assert_eq!(img.original, (3000, 1500));
    assert_eq!(img.mime_type, "image/jpeg");
    assert!(img.data.len() <= VisionLimits::default().max_bytes);
    let decoded = image::load_from_memory(&img.data).unwrap();
    assert_eq!((decoded.width(), decoded.height()), (2048, 1024));
    assert_eq!(out.details["images"][0]["originalWidth"], 3000);
}

#[tokio::test]
async fn image_bad_input_is_refused_before_the_provider() {
    let (dir, bridge) = workspace();
    std::fs::write(dir.path().join("ws/bomb.png"), bomb_png(100_000, 100_000)).unwrap();
    std::fs::write(dir.path().join("ws/fake.png"), b"not an image at all").unwrap();
    std::fs::write(dir.path().join("ws/ok.png"), png_bytes(10, 10)).unwrap();
    let keep = Arc::new(Keep::default());
    let with = ImageTool::new(
        Arc::clone(&bridge),
        None,
        Some(keep.clone() as Arc<dyn VisionProvider>),
        ImageLimits::default(),
    );
    let started = std::time::Instant::now();
    let e = run(&with, json!({"image": "bomb.png"})).await.unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::MediaTooLarge, "{e:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    let e = run(&with, json!({"image": "fake.png"})).await.unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::MediaInvalid, "{e:?}");
    let e = run(&with, json!({"image": "missing.png"}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::FsNotFound, "{e:?}");
    std::fs::write(dir.path().join("ws/big.png"), png_bytes(400, 400)).unwrap();
    assert!(
        std::fs::metadata(dir.path().join("ws/big.png"))
            .unwrap()
            .len()
            > 2048
    );
    let e = run(&with, json!({"image": "big.png", "maxBytesMb": 0.001}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::MediaTooLarge, "{e:?}");
    let e = run(&with, json!({"image": "ok.png", "size": 3}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::InputUnknownParam, "{e:?}");
    assert!(keep.seen.lock().unwrap().is_empty());

    // Without a provider: a valid call names the key to set; an invalid
    // one still says what is wrong with it first.
    let without = ImageTool::new(Arc::clone(&bridge), None, None, ImageLimits::default());
    let e = run(&without, json!({"image": "ok.png"})).await.unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::MediaNoProvider);
    assert!(e.message().contains(IMAGE_MODEL_KEY), "{}", e.message());
    let e = run(&without, json!({"image": "fake.png"}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::MediaInvalid);
}

/// A one-shot HTTP server on 127.0.0.1 answering every request with
/// `body` (content type `ctype`), keeping the last request it read.
async fn one_server(ctype: &'static str, body: Vec<u8>) -> (u16, Arc<std::sync::Mutex<Vec<u8>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let last = Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = Arc::clone(&last);
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                continue;
            };
            let mut got = Vec::new();
            let mut buf = vec![0u8; 65536];
            // Head, then as much body as Content-Length says.
            loop {
                let n = sock.read(&mut buf).await.unwrap_or(0);
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&got).to_string();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len = text[..end]
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if got.len() >= end + 4 + len {
                        break;
                    }
                }
            }
            *keep.lock().unwrap() = got;
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = sock.write_all(head.as_bytes()).await;
            let _ = sock.write_all(&body).await;
        }
    });
    (port, last)
}

#[tokio::test]
async fn image_urls_go_through_the_egress_guard_and_an_openai_endpoint() {
    use talon_egress::{EgressGuard, HttpOptions, SsrfAllowlistConfig, SsrfPolicy, SystemResolver};
    let (_dir, bridge) = workspace();
    let (img_port, _) = one_server("image/png", png_bytes(40, 20)).await;
    let (api_port, api_last) = one_server(
        "application/json",
        br#"{"choices":[{"message":{"role":"assistant","content":"a gradient"}}]}"#.to_vec(),
    )
    .await;
    let open = SsrfPolicy::from_config(&SsrfAllowlistConfig {
        hosts: vec![],
        cidrs: vec!["127.0.0.1/32".to_owned()],
    })
    .unwrap();
    let client = EgressGuard::new(Arc::new(open), Arc::new(SystemResolver))
        .http_client(HttpOptions::default())
        .unwrap();
    let provider = OpenAiVision::new(
        client.clone(),
        url::Url::parse(&format!("http://127.0.0.1:{api_port}/v1")).unwrap(),
        "sk-test".to_owned(),
        "vision-model".to_owned(),
    );
    let tool = ImageTool::new(
        Arc::clone(&bridge),
        Some(client),
        Some(Arc::new(provider)),
        ImageLimits::default(),
    );
    let out = run(
        &tool,
        json!({"image": format!("http://127.0.0.1:{img_port}/a.png"), "prompt": "What is it?"}),
    )
    .await
    .unwrap();
    assert_eq!(out.text(), "a gradient");
    let request = String::from_utf8_lossy(&api_last.lock().unwrap()).to_string();
    assert!(
        request.starts_with("POST /v1/chat/completions"),
        "{request}"
    );
    assert!(
        request.contains("authorization: Bearer sk-test")
            || request.contains("Authorization: Bearer sk-test"),
        "{request}"
    );
    assert!(request.contains("data:image/jpeg;base64,"), "{request}");
    assert!(request.contains("\"model\":\"vision-model\""), "{request}");

    // Metadata and a private address without an allowlist are refused
    // before any connection.
    let strict = EgressGuard::strict()
        .http_client(HttpOptions::default())
        .unwrap();
    let tool = ImageTool::new(bridge, Some(strict), None, ImageLimits::default());
    let e = run(
        &tool,
        json!({"image": "http://169.254.169.254/latest/x.png"}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::WebMetadataBlocked, "{e:?}");
    let e = run(
        &tool,
        json!({"image": format!("http://127.0.0.1:{img_port}/a.png")}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::WebSsrfBlocked, "{e:?}");
}
