//! The CI checks beyond build and test: the declared minimum Rust version
//! (MSRV) still builds, and no crate declares a dependency it does not use.
//!
//! - MSRV: `rust-version` from `[workspace.package]` in the root
//!   `Cargo.toml`; its toolchain is installed with
//!   `rustup toolchain install <version> --profile minimal` when missing,
//!   then `cargo +<version> check --workspace --all-targets` runs with
//!   its own target dir (`target/msrv`), so the main build is not thrown
//!   away by a compiler switch.
//! - Unused dependencies: `cargo machete` (installed from crates.io when
//!   missing, like cargo-deny). A false positive (a dependency used only
//!   through a macro or a feature) is listed in that crate's
//!   `[package.metadata.cargo-machete] ignored`, with a comment why.
//! - A light runtime: `talon-runtime` without its default features
//!   (docker, ssh, mcp, web, sqlite-state) has none of their heavy
//!   dependencies in its tree, and passes clippy on every target.

use std::process::Command;

/// The pinned cargo-machete, installed when `cargo machete` is missing.
const MACHETE_VERSION: &str = "0.9.2";

/// Whether `cargo <subcommand> --version` runs.
pub(crate) fn has_cargo_subcommand(subcommand: &str) -> bool {
    let ok = |cmd: &mut Command| cmd.output().is_ok_and(|o| o.status.success());
    // Some tools (cargo-machete) misread the subcommand form when run from
    // inside `cargo xtask`; their binary answers either way.
    ok(Command::new("cargo").args([subcommand, "--version"]))
        || ok(Command::new(format!("cargo-{subcommand}")).arg("--version"))
}

/// `cargo install <krate> --locked --version <version>` unless
/// `cargo <subcommand>` already runs.
pub(crate) fn ensure_cargo_tool(
    subcommand: &str,
    krate: &str,
    version: &str,
) -> Result<(), String> {
    if has_cargo_subcommand(subcommand) {
        return Ok(());
    }
    println!("xtask: {krate} is missing; installing it from crates.io");
    crate::cargo(&["install", krate, "--locked", "--version", version])
}

/// The workspace's declared `rust-version`, from the root `Cargo.toml`.
fn declared_msrv() -> Result<String, String> {
    let manifest = std::fs::read_to_string("Cargo.toml").map_err(|e| {
        format!("cannot read the root Cargo.toml (run from the workspace root): {e}")
    })?;
    let mut in_package = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[workspace.package]";
            continue;
        }
        if in_package
            && let Some(value) = line
                .strip_prefix("rust-version")
                .map(str::trim_start)
                .and_then(|rest| rest.strip_prefix('='))
        {
            let version = value.trim().trim_matches('"');
            if !version.is_empty() {
                return Ok(version.to_owned());
            }
        }
    }
    Err("the root Cargo.toml declares no `rust-version` in [workspace.package]".to_owned())
}

fn toolchain_installed(version: &str) -> bool {
    Command::new("rustup")
        .args(["run", version, "rustc", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Check the whole workspace with the declared minimum toolchain.
pub(crate) fn msrv() -> Result<(), String> {
    let version = declared_msrv()?;
    if !toolchain_installed(&version) {
        println!("xtask: Rust {version} (the declared MSRV) is missing; installing it with rustup");
        let status = Command::new("rustup")
            .args(["toolchain", "install", &version, "--profile", "minimal"])
            .status()
            .map_err(|e| format!("cannot run rustup: {e}"))?;
        if !status.success() {
            return Err(format!(
                "cannot install Rust {version} (the declared MSRV) with rustup ({status}); \
                 install it by hand: the MSRV check needs it"
            ));
        }
    }
    let toolchain = format!("+{version}");
    let status = Command::new("cargo")
        .args([toolchain.as_str(), "check", "--workspace", "--all-targets"])
        .env("CARGO_TARGET_DIR", "target/msrv")
        .status()
        .map_err(|e| format!("cannot run cargo {toolchain} check: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "the workspace does not build with Rust {version}, its declared rust-version \
             ({status}): raise `rust-version` in Cargo.toml to what the code needs, or stop \
             using the newer feature"
        ))
    }
}

/// Fail when a crate declares a dependency it does not use.
pub(crate) fn unused_dependencies() -> Result<(), String> {
    ensure_cargo_tool("machete", "cargo-machete", MACHETE_VERSION)?;
    // The binary itself, not `cargo machete`: run from inside `cargo
    // xtask`, the subcommand form took its own name for a path to scan.
    let status = Command::new("cargo-machete")
        .arg(".")
        .status()
        .map_err(|e| format!("cannot run cargo-machete: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "`cargo-machete` failed ({status}): remove the unused dependencies it lists (or, for a false positive, add them to that crate's [package.metadata.cargo-machete] ignored with the reason)"
        ))
    }
}

/// The crates that are tooling or test scaffolding, never a package.
const NOT_PACKAGED: &[&str] = &["talon-test-support", "talon-mcp-fixture-server", "xtask"];

/// Every shipped crate packages: its manifest is complete (licence,
/// readme, keywords, categories) and every file it needs is inside it.
/// Publishing stays off (`publish = false`), so the workspace's own
/// crates cannot be resolved from a registry: the lock file is left out
/// and the package is not built (`--no-verify`); `cargo build` and the
/// tests cover the build.
pub(crate) fn package() -> Result<(), String> {
    let mut args = vec![
        "package",
        "--workspace",
        "--no-verify",
        "--exclude-lockfile",
        "--allow-dirty",
        "--quiet",
    ];
    for name in NOT_PACKAGED {
        args.extend(["--exclude", name]);
    }
    crate::cargo(&args)?;
    missing_package_metadata()
}

/// Names the shipped crates whose manifest lacks a field a registry page
/// needs (cargo itself only warns).
fn missing_package_metadata() -> Result<(), String> {
    let output = Command::new("cargo")
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!("`cargo metadata` failed ({})", output.status));
    }
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("cargo metadata printed no JSON: {e}"))?;
    let mut problems = Vec::new();
    for package in doc["packages"].as_array().into_iter().flatten() {
        let name = package["name"].as_str().unwrap_or("?");
        if NOT_PACKAGED.contains(&name) {
            continue;
        }
        for field in ["description", "license", "readme"] {
            if package[field].as_str().is_none_or(str::is_empty) {
                problems.push(format!("{name}: no `{field}`"));
            }
        }
        for field in ["keywords", "categories"] {
            if package[field].as_array().is_none_or(Vec::is_empty) {
                problems.push(format!("{name}: no `{field}`"));
            }
        }
        if let Some(url) = package["repository"].as_str()
            && url.contains(".invalid")
        {
            problems.push(format!("{name}: `repository` is a placeholder ({url})"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "crate manifests are incomplete (add the fields to the crate's Cargo.toml):\n  {}",
            problems.join("\n  ")
        ))
    }
}

/// The crates `talon-runtime`'s optional features bring, which a build
/// without them must not compile (an embedder with its own backend).
const HEAVY_RUNTIME_DEPS: &[(&str, &str)] = &[
    ("bollard", "docker"),
    ("openssh", "ssh"),
    ("rmcp", "mcp"),
    ("reqwest", "web or mcp"),
    ("rusqlite", "sqlite-state"),
];

/// `talon-runtime --no-default-features`: its dependency tree holds none
/// of [`HEAVY_RUNTIME_DEPS`], and clippy (which also type-checks) passes on
/// every target with `-D warnings`.
pub(crate) fn light_runtime() -> Result<(), String> {
    let output = Command::new("cargo")
        .args([
            "tree",
            "-p",
            "talon-runtime",
            "--no-default-features",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .output()
        .map_err(|e| format!("cannot run cargo tree: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "`cargo tree -p talon-runtime --no-default-features` failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let found = heavy_runtime_deps(&String::from_utf8_lossy(&output.stdout));
    if !found.is_empty() {
        return Err(format!(
            "talon-runtime without default features still depends on {}: make the crate \
             that pulls it in optional behind that runtime feature (`cargo tree -p \
             talon-runtime --no-default-features -e normal -i <crate>` shows the path)",
            found.join(", ")
        ));
    }
    crate::cargo(&[
        "clippy",
        "-p",
        "talon-runtime",
        "--no-default-features",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ])?;
    // The tests that exist only in that build: a compiled-out backend or
    // tool fails closed and names its feature.
    crate::cargo(&[
        "test",
        "-p",
        "talon-runtime",
        "--no-default-features",
        "--test",
        "all",
        "--",
        "compiled_out",
        "provided",
    ])
}

/// The heavy crates (with the runtime feature that should bring them) in
/// `cargo tree --prefix none --format {p}` output: one package a line,
/// its name first.
fn heavy_runtime_deps(tree: &str) -> Vec<String> {
    let mut found: Vec<String> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter_map(|name| {
            HEAVY_RUNTIME_DEPS
                .iter()
                .find(|(heavy, _)| *heavy == name)
                .map(|(heavy, feature)| format!("{heavy} (feature {feature})"))
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::heavy_runtime_deps;

    #[test]
    fn heavy_crates_are_named_by_package_name_only() {
        let tree = "talon-runtime v0.1.0 (/w/crates/runtime)\n\
                    bollard v0.21.1\n\
                    bollard-stubs v1.49.0\n\
                    reqwest v0.13.5\n\
                    reqwest v0.13.5\n\
                    rusqlite-ext v1.0.0\n";
        assert_eq!(
            heavy_runtime_deps(tree),
            ["bollard (feature docker)", "reqwest (feature web or mcp)"]
        );
        assert!(heavy_runtime_deps("tokio v1.48.0\nserde v1.0.0\n").is_empty());
    }
}
