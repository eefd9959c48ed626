use std::io::Write;

use talon_config::{ConfigError, MAX_CONFIG_BYTES, load, load_str};

use super::issues;

#[test]
fn deep_nesting_is_a_clear_syntax_error() {
    let text = format!("{{ skills: {}{} }}", "[".repeat(10_000), "]".repeat(10_000));
    match load_str(&text, "t.json") {
        Err(ConfigError::Syntax {
            line,
            column,
            message,
            ..
        }) => {
            assert_eq!((line, column), (1, 138));
            assert!(message.contains("nesting too deep"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let unclosed = "{a:".repeat(1_000_000);
    assert!(matches!(
        load_str(&unclosed, "t"),
        Err(ConfigError::Syntax { .. })
    ));
}

#[test]
fn huge_strings_load_and_truncate_in_messages() {
    let big = "x".repeat(8 * 1024 * 1024);
    let loaded = load_str(&format!("{{ sandbox: {{ note: '{big}' }} }}"), "t").unwrap();
    assert_eq!(
        loaded.config.sandbox.unwrap()["note"]
            .as_str()
            .map(str::len),
        Some(big.len())
    );
    let got = issues(&format!("{{ tools: {{ deny: '{big}' }} }}"));
    assert_eq!(got.len(), 1);
    assert!(
        got[0].message.len() < 300,
        "message not truncated: {} bytes",
        got[0].message.len()
    );
    let got = issues(&format!("{{ tools: {{ '{big}': 1 }} }}"));
    assert!(got[0].key_path.len() > big.len());
    assert!(got[0].message.len() < 300);
}

#[test]
fn nul_bytes_in_keys_are_visible_in_errors() {
    let got = issues("{ tools: { \"de\\u0000ny\": [], 'al\u{0}low': [] } }");
    let rendered: Vec<String> = got
        .iter()
        .map(|i| format!("{}: {}", i.key_path, i.message))
        .collect();
    assert_eq!(
        rendered,
        vec![
            r#"tools["de\u0000ny"]: unknown key "de\u0000ny" (did you mean `deny`?)"#,
            r#"tools["al\u0000low"]: unknown key "al\u0000low" (did you mean `allow`?)"#,
        ]
    );
    // A NUL outside a string is a syntax error.
    assert!(matches!(
        load_str("{\0}", "t"),
        Err(ConfigError::Syntax { .. })
    ));
}

#[test]
fn a_20_mb_file_is_refused_before_reading() {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    let chunk = vec![b' '; 1024 * 1024];
    for _ in 0..20 {
        file.write_all(&chunk).unwrap();
    }
    file.flush().unwrap();
    match load(file.path()) {
        Err(ConfigError::TooLarge { size, limit, .. }) => {
            assert_eq!((size, limit), (20 * 1024 * 1024, MAX_CONFIG_BYTES));
        }
        other => panic!("{other:?}"),
    }
    let text = " ".repeat(20 * 1024 * 1024);
    let err = load_str(&text, "big.json").unwrap_err();
    assert_eq!(
        err.to_string(),
        "big.json: the config file is 20971520 bytes; the limit is 16777216 bytes (is this the right file?)"
    );
}

#[test]
fn invalid_utf8_is_a_syntax_error_with_a_position() {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(b"{\n  tools: \xff }").unwrap();
    match load(file.path()) {
        Err(ConfigError::Syntax {
            line,
            column,
            message,
            ..
        }) => {
            assert_eq!((line, column), (2, 10));
            assert_eq!(message, "the file is not valid UTF-8 text");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn many_problems_are_capped() {
    let mut text = String::from("{ tools: {");
    for i in 0..2000 {
        text.push_str(&format!(" k{i}: 1,"));
    }
    text.push_str(" } }");
    let got = issues(&text);
    assert_eq!(got.len(), 501);
    assert_eq!(
        got[500].message,
        "1500 more problems not listed (only the first 500 are shown)"
    );
}

#[test]
fn garbage_never_panics() {
    let samples = [
        "\u{FEFF}",
        "{",
        "}",
        "[",
        "'",
        "\"\\u",
        "{a:'\\x",
        "0x",
        "-",
        "+.",
        "{'a':1,,}",
        "[,]",
        "{,}",
        "/",
        "/*",
        "//",
        "{a:b:c}",
        "nul",
        "{\"a\" 1}",
        "\u{2028}{}\u{2029}",
        "{a:-Infinity}",
        "[1e999999]",
        "{tools:{deny:[null]}}",
        "{agents:{list:[null, 1, 'x', []]}}",
        "{agents:{entries:{'':{}}}}",
        "{agents:{list:[{id:5}]}}",
        "{tools:{byProvider:{'':{profile:null}}}}",
    ];
    for text in samples {
        let _ = load_str(text, "t");
    }
}
