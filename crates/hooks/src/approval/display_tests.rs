use pretty_assertions::assert_eq;

use super::*;

#[test]
fn control_and_bidi_characters_become_replacement_characters() {
    let title =
        "a\u{0}b\tc\nd\re\u{1b}[31mf\u{7f}g\u{80}h\u{9b}i\u{202a}j\u{202e}k\u{2066}l\u{2069}m";
    assert_eq!(
        display_text(title),
        "a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}e\u{FFFD}[31mf\u{FFFD}g\u{FFFD}h\u{FFFD}i\u{FFFD}j\
         \u{FFFD}k\u{FFFD}l\u{FFFD}m"
    );
}

#[test]
fn ordinary_text_is_kept() {
    let text = "Run `rm -rf build/` — ünïcödé, 漢字, emoji 🚀, spaces  kept ";
    assert_eq!(display_text(text), text);
    assert_eq!(display_text(""), "");
}

#[test]
fn neighbours_of_the_unsafe_ranges_are_kept() {
    // Just outside C0/DEL/C1 and the bidi ranges.
    let text = " ~\u{a0}\u{2027}\u{202f}\u{2065}\u{206a}\u{200a}";
    assert_eq!(display_text(text), text);
    for c in [
        '\u{1f}', '\u{7f}', '\u{9f}', '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}',
    ] {
        assert!(is_unsafe_char(c), "{c:?}");
    }
}

#[test]
fn display_command_writes_every_invisible_character_out() {
    let command = "a\u{1b}[31mb\nc\td\\e\u{202e}f\u{2066}g\u{200b}h\u{feff}i\u{2028}j\u{85}k";
    assert_eq!(
        display_command(command),
        "a\\u{001B}[31mb\\nc\\td\\\\e\\u{202E}f\\u{2066}g\\u{200B}h\\u{FEFF}i\\u{2028}j\\u{0085}k"
    );
    // Ordinary text, however long, is kept whole.
    let long = format!("echo {}; rm -rf ~", "x".repeat(20_000));
    assert_eq!(display_command(&long), long);
}

#[test]
fn display_json_stays_json_and_escapes_what_serde_leaves_raw() {
    let value = serde_json::json!({"c": "a\u{202e}b\u{200b}c\u{9b}d\u{1b}e\u{1f600}"});
    let text = display_json(&serde_json::to_string(&value).unwrap());
    assert_eq!(text, r#"{"c":"a\u202eb\u200bc\u009bd\u001be😀"}"#);
    let back: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(back, value);
    // Pretty-printed layout stays; the value is still escaped.
    let pretty = display_json(&serde_json::to_string_pretty(&value).unwrap());
    assert!(
        pretty.contains('\n') && pretty.contains("\\u202e"),
        "{pretty}"
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&pretty).unwrap(),
        value
    );
}
