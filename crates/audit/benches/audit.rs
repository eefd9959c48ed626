//! The audit of the example configs, as `talon security audit --json`
//! runs it minus process start and printing (goal: well under 50 ms).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use talon_audit::{AuditInput, audit};

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    for name in [
        "clean.json5",
        "dangerous-bind.json5",
        "mcp-literal-secret.json5",
        "exec-env-risky.json5",
        "hook-cannot-run.json5",
    ] {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        let config = dir.path().join(name);
        std::fs::copy(&src, &config).unwrap();
        c.bench_function(&format!("audit/load_and_audit/{name}"), |b| {
            b.iter(|| {
                let loaded = talon_config::load(&config).unwrap();
                let mut input = AuditInput::new(&loaded.config, &loaded.origin, &state);
                input.config_file = Some(&config);
                input.home = Some(&home);
                input.home_dirs = vec![home.clone()];
                let report = audit(&input).unwrap();
                std::hint::black_box(serde_json::to_string(&report).unwrap())
            });
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
