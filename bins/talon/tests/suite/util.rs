use std::path::PathBuf;

pub(crate) fn fixture(rel: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    root.join(rel).display().to_string()
}

pub(crate) use talon_test_support::cli::{Cli, Run};

/// The built `talon` binary, never reading the developer's config.
pub(crate) fn cli() -> Cli {
    Cli::new(env!("CARGO_BIN_EXE_talon"))
}

/// `talon <args>` with `HOME` in the target's temp dir.
pub(crate) fn talon(args: &[&str]) -> Run {
    cli().home(env!("CARGO_TARGET_TMPDIR")).args(args).run()
}
