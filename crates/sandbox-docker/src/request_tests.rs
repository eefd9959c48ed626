#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn sizes_parse_like_docker() {
    let t = |s: &str| size_bytes(&SizeValue::Text(s.to_owned()), "k");
    assert_eq!(t("1024").unwrap(), 1024);
    assert_eq!(t("512m").unwrap(), 512 * 1024 * 1024);
    assert_eq!(t("1.5G").unwrap(), 3 * 512 * 1024 * 1024);
    assert_eq!(t("64MiB").unwrap(), 64 * 1024 * 1024);
    assert_eq!(t("2kb").unwrap(), 2048);
    assert_eq!(t("-1").unwrap(), -1);
    assert_eq!(size_bytes(&SizeValue::Bytes(7), "k").unwrap(), 7);
    for bad in ["", "m", "12q", "1..2g", "-5m"] {
        let err = t(bad).unwrap_err();
        assert!(err.to_string().contains("is not a size"), "{bad}: {err}");
    }
}

#[test]
fn ulimits_take_every_openclaw_form() {
    use talon_sandbox_core::UlimitRange;
    assert_eq!(ulimit("nofile", &UlimitValue::Number(10)).unwrap().hard, 10);
    let u = ulimit("nofile", &UlimitValue::Text("5:9".to_owned())).unwrap();
    assert_eq!((u.soft, u.hard), (5, 9));
    let u = ulimit(
        "nproc",
        &UlimitValue::Range(UlimitRange {
            soft: Some(3),
            hard: None,
        }),
    )
    .unwrap();
    assert_eq!((u.soft, u.hard), (3, 3));
    assert!(ulimit("x", &UlimitValue::Text("a:b".to_owned())).is_err());
}
