use pretty_assertions::assert_eq;
use talon_schema_dialects::Dialect;
use talon_schema_dialects::Error;
use talon_schema_dialects::dialect_for;

#[test]
fn provider_resolution() {
    let cases = [
        ("google", None, Dialect::Gemini),
        ("google-vertex", Some("claude-sonnet-4"), Dialect::Gemini),
        ("my-gemini-proxy", None, Dialect::Gemini),
        (
            "openrouter",
            Some("google/gemini-2.5-flash"),
            Dialect::Gemini,
        ),
        ("openrouter", Some("vertex:gemini"), Dialect::Gemini),
        ("openrouter", Some("gemini-exp"), Dialect::Gemini),
        ("anthropic", Some("gemini-2.5-pro"), Dialect::Anthropic),
        ("google-anthropic", None, Dialect::Anthropic),
        ("ANTHROPIC", None, Dialect::Anthropic),
        ("xai", None, Dialect::Xai),
        ("x-ai", Some("grok-4"), Dialect::Xai),
        ("grok", None, Dialect::Xai),
        ("openai", Some("gpt-5"), Dialect::OpenAi),
        ("  OpenAI\n", None, Dialect::OpenAi),
        ("azure-openai", None, Dialect::OpenAi),
        ("openai-codex", None, Dialect::OpenAi),
        ("openai-compatible", None, Dialect::Permissive),
        ("ollama", Some("llama3"), Dialect::Permissive),
        ("ollama", Some("gemini2"), Dialect::Permissive),
        ("ollama", Some("not-gemini-pro"), Dialect::Permissive),
        ("", None, Dialect::Permissive),
    ];
    for (provider, model, expected) in cases {
        assert_eq!(
            dialect_for(provider, model),
            expected,
            "{provider:?} {model:?}"
        );
    }
}

#[test]
fn names_parse_and_unknown_names_fail() {
    assert_eq!(
        Dialect::ALL.map(Dialect::as_str),
        [
            "openai",
            "openai-strict",
            "anthropic",
            "gemini",
            "xai",
            "permissive"
        ]
    );
    assert_eq!("GEMINI".parse::<Dialect>(), Ok(Dialect::Gemini));
    let err = "bard".parse::<Dialect>().unwrap_err();
    assert_eq!(
        err,
        Error::UnknownDialect {
            name: "bard".to_owned()
        }
    );
    assert!(err.to_string().contains("expected one of: openai"));
}

#[test]
fn stripped_keywords_per_dialect() {
    assert_eq!(
        Dialect::Xai.stripped_keywords(),
        ["minContains", "maxContains"]
    );
    assert_eq!(Dialect::Gemini.stripped_keywords().len(), 21);
    assert!(Dialect::Anthropic.stripped_keywords().is_empty());
}
