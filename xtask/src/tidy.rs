//! Tidy checks that run as ordinary `cargo test -p xtask` (as in
//! rust-analyzer): library code keeps typed errors.
//!
//! - No `Result<_, String>` in `crates/*/src` (libraries return typed
//!   `thiserror` errors with a kind or code).
//! - No error classification by message text in `crates/*/src`
//!   (`.to_string().contains(`, `msg.contains(`, ...): callers match on a
//!   kind or a code.
//!
//! Test files (`*_tests.rs`, `tests.rs`, `test_support*`, the throwaway
//! sshd) are exempt. There is no allow list: the last `Result<_, String>`
//! left from before issue 17 was converted, so any hit is new and is fixed
//! where it is (a `thiserror` type with a kind, or a match on one).

#![cfg(test)]

use std::path::{Path, PathBuf};

const RESULT_STRING: &str = "Result<_, String>";

/// The text patterns that classify an error by its message.
const TEXT_CLASSIFIERS: &[&str] = &[
    ".to_string().contains(",
    "msg.contains(",
    "message.contains(",
    "err.contains(",
    "error.contains(",
    "stderr.contains(",
];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn is_test_file(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    name.ends_with("_tests.rs")
        || name == "tests.rs"
        || name.starts_with("test_support")
        || name == "test_sshd.rs"
        || path.components().any(|c| c.as_os_str() == "test_support")
}

fn library_sources() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(crates) = std::fs::read_dir(workspace_root().join("crates")) else {
        return out;
    };
    let mut stack: Vec<PathBuf> = crates
        .filter_map(Result::ok)
        .map(|e| e.path().join("src"))
        .collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && !is_test_file(&path) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Whether the generic arguments after `Result<` (up to the matching `>`)
/// are two with the second `String`.
fn result_with_string_error(after: &str) -> bool {
    let mut depth = 0usize;
    let mut last_comma = None;
    let mut prev = ' ';
    for (i, c) in after.char_indices() {
        match c {
            '<' => depth += 1,
            // `->` inside a generic argument is an arrow, not a bracket.
            '>' if prev == '-' => {}
            '>' if depth == 0 => {
                return last_comma.is_some_and(|at: usize| after[at + 1..i].trim() == "String");
            }
            '>' => depth -= 1,
            ',' if depth == 0 => last_comma = Some(i),
            '\n' | ';' | '{' => return false,
            _ => {}
        }
        prev = c;
    }
    false
}

/// The violations in one file's text: (line number, what).
fn violations(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("Result<") {
            let after = &rest[at + "Result<".len()..];
            if result_with_string_error(after) {
                out.push((n + 1, RESULT_STRING.to_owned()));
            }
            rest = after;
        }
        for pattern in TEXT_CLASSIFIERS {
            if let Some(at) = line.find(pattern) {
                // `foo_msg.contains(` is a different identifier.
                let before = line[..at].chars().next_back();
                let whole = pattern.starts_with('.')
                    || !before.is_some_and(|c| c.is_alphanumeric() || c == '_');
                if whole {
                    out.push((n + 1, (*pattern).to_owned()));
                }
            }
        }
    }
    out
}

#[test]
fn the_checker_finds_what_it_should() {
    assert!(result_with_string_error("(), String> {"));
    assert!(result_with_string_error("Vec<u8>, String>"));
    assert!(!result_with_string_error("T, Error>"));
    assert!(!result_with_string_error("Box<dyn Fn() -> String>, E>"));
    assert!(!result_with_string_error("String>"));
    assert_eq!(
        violations("fn f() -> Result<u8, String> {}\nif e.to_string().contains(\"x\") {}"),
        vec![
            (1, "Result<_, String>".to_owned()),
            (2, ".to_string().contains(".to_owned())
        ]
    );
    assert!(violations("// Result<u8, String>\nlet ok = name.contains('/');").is_empty());
    assert!(violations("if some_msg.contains(x) {}").is_empty());
}

#[test]
fn library_code_keeps_typed_errors() {
    let root = workspace_root();
    let files = library_sources();
    assert!(
        files.len() > 50,
        "found only {} source files under {}",
        files.len(),
        root.display()
    );
    let mut found = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let rel = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .display()
            .to_string();
        for (line, what) in violations(&text) {
            found.push(format!("{rel}:{line}: {what}"));
        }
    }
    assert!(
        found.is_empty(),
        "library code must return typed errors (a thiserror enum with a kind or code) and \
         match on kinds, not message text; fix these:\n{}",
        found.join("\n")
    );
}
