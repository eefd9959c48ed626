//! `pdf` text per page, against a floor measured in the same run: a raw
//! `pdftotext -f 1 -l N file -` on the same file (no bridge, no limits
//! wrapper, no temp copy). The PDF is a generated 20-page document; the
//! reported time is per page.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs,
    reason = "bench setup panics on failure; the floor starts pdftotext directly on purpose"
)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use talon_fs_bridge::{FsBridge, Mount, MountBridge};
use talon_media::{EngineLimits, EngineRunner, PdfLimits, PdfTool};
use talon_tool_catalog::{CancellationToken, Tool, ToolCall, ToolContext};

const PAGES: usize = 20;

/// A hand-written PDF of `n` pages, each with a few lines of text.
fn pdf(n: usize) -> Vec<u8> {
    let mut objects = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {n} >>",
            (0..n)
                .map(|i| format!("{} 0 R", 4 + 2 * i))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_owned(),
    ];
    for i in 0..n {
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            5 + 2 * i
        ));
        let mut stream = String::from("BT /F1 11 Tf 72 720 Td 14 TL");
        for line in 0..40 {
            stream.push_str(&format!(
                " (Page {i} line {line}: the quick brown fox jumps over the lazy dog) '"
            ));
        }
        stream.push_str(" ET");
        objects.push(format!(
            "<< /Length {} >>\nstream\n{stream}\nendstream",
            stream.len()
        ));
    }
    let mut out = b"%PDF-1.4\n".to_vec();
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
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

fn bench(c: &mut Criterion) {
    assert!(
        std::path::Path::new("/usr/bin/pdftotext").exists(),
        "pdftotext is missing: install Debian's poppler-utils (`cargo xtask media-install`)"
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("doc.pdf"), pdf(PAGES)).unwrap();
    let bridge: Arc<dyn FsBridge> = Arc::new(
        MountBridge::new(
            vec![Mount::writable("/workspace", dir.path())],
            "/workspace",
        )
        .unwrap(),
    );
    let env = BTreeMap::from([("PATH".to_owned(), "/usr/bin:/bin".to_owned())]);
    let tool = PdfTool::new(
        bridge,
        EngineRunner::new(env, EngineLimits::default()),
        PdfLimits::default(),
    );
    let call = ToolCall {
        id: "b".to_owned(),
        name: "pdf".to_owned(),
        params: json!({"pdf": "doc.pdf"}).as_object().cloned().unwrap(),
    };
    let ctx = ToolContext::default();
    let abort = CancellationToken::new();
    let first = rt.block_on(tool.execute(&call, &ctx, &abort)).unwrap();
    assert!(
        first
            .text()
            .contains(&format!("Page {} line 39", PAGES - 1))
    );

    let mut group = c.benchmark_group("media");
    group.sample_size(20);
    group.throughput(criterion::Throughput::Elements(PAGES as u64));
    group.bench_function("pdf_text_20_pages", |b| {
        b.iter(|| black_box(rt.block_on(tool.execute(&call, &ctx, &abort)).unwrap()));
    });
    let path = dir.path().join("doc.pdf");
    group.bench_function("floor_raw_pdftotext_20_pages", |b| {
        b.iter(|| {
            let out = std::process::Command::new("/usr/bin/pdftotext")
                .args(["-f", "1", "-l", &PAGES.to_string(), "-enc", "UTF-8"])
                .arg(&path)
                .arg("-")
                .output()
                .unwrap();
            assert!(out.status.success());
            black_box(out.stdout)
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
