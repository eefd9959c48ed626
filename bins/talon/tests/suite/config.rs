use pretty_assertions::assert_eq;

use super::util::{fixture, talon};

#[test]
fn example_config_is_valid_with_notices() {
    let r = talon(&[
        "--config",
        &fixture("example/talon.json"),
        "config",
        "validate",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    let v = r.json();
    assert_eq!(v["valid"], true);
    assert!(
        v["notices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["keyPath"] == "channels"),
        "{v}"
    );
}

#[test]
fn every_error_is_listed_with_path_and_line() {
    let r = talon(&[
        "--config",
        &fixture("configs/many-errors.json5"),
        "config",
        "validate",
        "--json",
    ]);
    assert_eq!(r.code, 1);
    let v = r.json();
    assert_eq!(v["valid"], false);
    let paths: Vec<(&str, u64)> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["keyPath"].as_str().unwrap(), e["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        paths,
        [
            ("tools.profile", 3),
            ("tools.deny", 4),
            ("tools.allow[1]", 5),
            ("agents.list[1].id", 7)
        ]
    );
    let human = talon(&[
        "--config",
        &fixture("configs/many-errors.json5"),
        "config",
        "validate",
    ]);
    assert_eq!(human.code, 1);
    assert!(
        human.stdout.contains("invalid (4 errors)"),
        "{}",
        human.stdout
    );
}

#[test]
fn schema_is_json_with_the_sections() {
    let r = talon(&["config", "schema"]);
    assert_eq!(r.code, 0);
    let v = r.json();
    assert!(v.to_string().contains("\"tools\"") && v.to_string().contains("\"agents\""));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(talon(&["policy"]).code, 2);
    assert_eq!(talon(&["policy", "check"]).code, 2);
    assert_eq!(talon(&["--leaf", "policy", "explain"]).code, 2);
}
