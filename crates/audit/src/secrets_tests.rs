use super::*;

#[test]
fn secret_names() {
    for yes in [
        "OPENAI_API_KEY",
        "api-key",
        "X-Api-Key",
        "GITHUB_TOKEN",
        "client_secret",
        "DB_PASSWORD",
        "Authorization",
        "cookie",
        "APIKEY",
    ] {
        assert!(secret_name(yes), "{yes}");
    }
    for no in ["PATH", "LANG", "KEYBOARD", "MONKEY_BUSINESS_MODE", "Accept"] {
        assert!(!secret_name(no), "{no}");
    }
}

#[test]
fn literal_values() {
    assert!(literal_value("sk-live-123"));
    assert!(literal_value("Bearer abcdef"));
    assert!(literal_value("${TOKEN} extra-literal"));
    assert!(!literal_value("${OPENAI_API_KEY}"));
    assert!(!literal_value("Bearer ${secret:github}"));
    assert!(!literal_value("Bearer ${TOKEN}"));
    assert!(!literal_value("  "));
}
