//! Making hook-supplied text safe to print for an approver.

/// `s` made safe to print on a terminal: every control character (all of
/// C0, including tab and newline; DEL; C1) and every bidi embedding,
/// override or isolate (U+202A–U+202E, U+2066–U+2069) becomes U+FFFD, so it
/// stays visible without moving the cursor, sending an escape sequence or
/// reordering the text around it.
///
/// Use it for an approval's `title` and `description` (which a hook
/// supplies) before showing them. The text is not trimmed or shortened.
pub fn display_text(s: &str) -> String {
    s.chars()
        .map(|c| if is_unsafe_char(c) { '\u{FFFD}' } else { c })
        .collect()
}

/// Whether `c` is a control character (C0, DEL, C1) or a bidi control
/// (embedding, override, isolate, or a directional mark). Shared with the
/// failure-log cleaning in `redact`.
pub(crate) fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}'
        )
}

#[cfg(test)]
#[path = "display_tests.rs"]
mod tests;

/// An exec approval's command for a terminal, on one line, every character
/// kept: a newline is written as `\n`, a tab as `\t`, any other control
/// (C0, DEL, C1) or bidi control character as `\u{XXXX}` and a backslash
/// as `\\`, so the text shown maps back to the exact command byte for
/// byte, cannot rewrite the terminal and cannot fake the prompt's next
/// lines.
pub fn display_command(command: &str) -> String {
    let mut out = String::with_capacity(command.len());
    for c in command.chars() {
        if c == '\\' {
            out.push_str("\\\\");
        } else if c == '\n' {
            out.push_str("\\n");
        } else if c == '\t' {
            out.push_str("\\t");
        } else if is_unsafe_char(c) {
            out.push_str(&format!("\\u{{{:04X}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}
