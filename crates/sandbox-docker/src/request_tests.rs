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

fn settings(tmpfs_size: Option<SizeValue>) -> DockerSettings {
    DockerSettings {
        tmpfs_size,
        ..DockerSettings::default()
    }
}

const KEY: &str = "agents.defaults.sandbox.docker.tmpfsSize";
const MEM: &str = "agents.defaults.sandbox.docker.memory";

#[test]
fn tmpfs_size_defaults_to_64_mib_capped_at_a_quarter_of_memory() {
    let mib = 1024 * 1024;
    assert_eq!(
        tmpfs_size(&settings(None), None, KEY, MEM).unwrap(),
        64 * mib
    );
    assert_eq!(
        tmpfs_size(&settings(None), Some(1024 * mib), KEY, MEM).unwrap(),
        64 * mib
    );
    assert_eq!(
        tmpfs_size(&settings(None), Some(128 * mib), KEY, MEM).unwrap(),
        32 * mib
    );
    let set = settings(Some(SizeValue::Text("8m".to_owned())));
    assert_eq!(
        tmpfs_size(&set, Some(128 * mib), KEY, MEM).unwrap(),
        8 * mib
    );
}

#[test]
fn a_bad_tmpfs_size_is_refused_naming_its_key() {
    let mib = 1024 * 1024;
    for bad in [
        SizeValue::Text("lots".to_owned()),
        SizeValue::Bytes(0),
        SizeValue::Text("-1".to_owned()),
    ] {
        let err = tmpfs_size(&settings(Some(bad.clone())), None, KEY, MEM).unwrap_err();
        assert_eq!(err.kind(), talon_sandbox_core::SandboxErrorKind::Config);
        assert!(err.to_string().contains(KEY), "{bad}: {err}");
    }
    // Three mounts of 64 MiB could hold all of a 128 MiB memory limit.
    let err = tmpfs_size(
        &settings(Some(SizeValue::Text("64m".to_owned()))),
        Some(128 * mib),
        KEY,
        MEM,
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains(KEY) && text.contains(MEM), "{text}");
}
