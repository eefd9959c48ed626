//! A sandbox bind spec from config (`source:target[:options]`): parsed
//! and judged, never a panic, and a bind the security check accepts has
//! its source under an allowed root and an absolute target.
#![no_main]

use std::path::{Path, PathBuf};

use libfuzzer_sys::fuzz_target;
use talon_sandbox_core::{
    BindSpec, DockerOrigins, DockerSettings, SecurityEnv, normalize_absolute,
    validate_sandbox_security,
};

/// A root that does not exist on the machine, so no symlink can lead out
/// of it.
const ROOT: &str = "/nonexistent-talon-fuzz-root";

fuzz_target!(|text: &str| {
    let spec = BindSpec::parse(text);
    let settings = DockerSettings {
        binds: vec![text.to_owned()],
        ..DockerSettings::default()
    };
    let env = SecurityEnv {
        allowed_roots: vec![PathBuf::from(ROOT)],
        home_dirs: vec![PathBuf::from("/root")],
        ..SecurityEnv::default()
    };
    let findings = validate_sandbox_security(&settings, &DockerOrigins::default(), &env);
    if findings.is_empty() {
        let spec = spec.expect("an accepted bind parses");
        let source = normalize_absolute(&spec.source).expect("an accepted source is absolute");
        assert!(
            source.starts_with(Path::new(ROOT)),
            "{text:?} mounts {} from outside the allowed root",
            source.display()
        );
        assert!(spec.target.trim_start().starts_with('/'), "{text:?}");
        assert!(
            normalize_absolute(&spec.target).is_some_and(|t| t != Path::new("/")),
            "{text:?} mounts over /"
        );
    }
});
