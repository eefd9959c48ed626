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
    let text = " ~\u{a0}\u{2029}\u{202f}\u{2065}\u{206a}";
    assert_eq!(display_text(text), text);
    for c in [
        '\u{1f}', '\u{7f}', '\u{9f}', '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}',
    ] {
        assert!(is_unsafe_char(c), "{c:?}");
    }
}
