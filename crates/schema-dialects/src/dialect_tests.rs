use pretty_assertions::assert_eq;

use super::*;

#[test]
fn gemini_model_pattern() {
    for yes in [
        "gemini",
        "gemini-2.5-pro",
        "google/gemini-pro",
        "vertex:gemini.x",
        "a/gemini/",
        "x:gemini:",
    ] {
        assert!(is_gemini_model(yes), "{yes}");
    }
    for no in [
        "",
        "gemini2",
        "mygemini-pro",
        "gemini_pro",
        "x-gemini-pro",
        "geminiflash",
        "gem",
    ] {
        assert!(!is_gemini_model(no), "{no}");
    }
    // A later occurrence can match when an earlier one does not.
    assert!(is_gemini_model("geminix/gemini-1"));
}

#[test]
fn round_trips_through_names() {
    for dialect in Dialect::ALL {
        assert_eq!(dialect.as_str().parse::<Dialect>(), Ok(dialect));
        assert_eq!(dialect.to_string(), dialect.as_str());
    }
    assert_eq!(
        " OpenAI_Strict ".parse::<Dialect>(),
        Ok(Dialect::OpenAiStrict)
    );
}
