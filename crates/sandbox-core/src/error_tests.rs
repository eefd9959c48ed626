use std::error::Error as _;

use super::*;

#[test]
fn display_is_the_kinds_prefix_and_the_message() {
    let cases = [
        (
            SandboxError::engine_unavailable("no daemon"),
            "sandbox engine unavailable: no daemon",
        ),
        (
            SandboxError::image_missing("img"),
            "sandbox image missing: img",
        ),
        (SandboxError::config("bad"), "sandbox configuration: bad"),
        (
            SandboxError::backend_missing("no backend `x`"),
            "no backend `x`",
        ),
        (SandboxError::exec("e"), "sandbox exec failed: e"),
        (SandboxError::gone("g"), "sandbox gone: g"),
        (SandboxError::timeout("t"), "sandbox operation timed out: t"),
        (SandboxError::io("i"), "sandbox I/O error: i"),
    ];
    for (err, text) in cases {
        assert_eq!(err.to_string(), text);
        assert!(err.source().is_none());
    }
    assert!(SandboxError::timeout("t").is_timeout());
    assert!(!SandboxError::exec("t").is_timeout());
}

#[test]
fn the_underlying_error_is_the_source_and_survives_a_clone() {
    let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
    let err = SandboxError::io(format!("cannot open /x: {io}")).with_source(io);
    assert_eq!(err.kind(), SandboxErrorKind::Io);
    assert_eq!(err.message(), "cannot open /x: denied");
    let copy = err.clone();
    let source = copy.source().expect("a source");
    let io = source
        .downcast_ref::<std::io::Error>()
        .expect("the io::Error itself");
    assert_eq!(io.kind(), std::io::ErrorKind::PermissionDenied);
}
