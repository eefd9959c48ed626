use pretty_assertions::assert_eq;

use super::util::talon;

#[test]
fn list_json_and_profiles() {
    let r = talon(&["tools", "list", "--json"]);
    assert_eq!(r.code, 0);
    assert_eq!(r.json()["tools"].as_array().unwrap().len(), 42);
    let r = talon(&["tools", "list", "--profile", "minimal", "--json"]);
    let v = r.json();
    assert_eq!(v["tools"].as_array().unwrap().len(), 1);
    assert_eq!(v["tools"][0]["name"], "session_status");
    assert_eq!(talon(&["tools", "list", "--profile", "nope"]).code, 2);
    let human = talon(&["tools", "list"]);
    assert!(human.stdout.starts_with("TOOL"), "{}", human.stdout);
}

#[test]
fn schema_for_gemini_strips_keywords() {
    let r = talon(&[
        "tools",
        "schema",
        "web_fetch",
        "--provider",
        "google",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["dialect"], "gemini");
    assert_eq!(v["parameters"]["type"], "object");
    assert!(!v["parameters"].to_string().contains("minimum"));
    assert_eq!(
        talon(&["tools", "schema", "nope", "--provider", "openai"]).code,
        1
    );
    assert_eq!(talon(&["tools", "schema", "read"]).code, 2);
}
