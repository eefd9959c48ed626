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

/// Whether `c` is a control character (C0, DEL, C1), a bidi control
/// (embedding, override, isolate, or a directional mark), an invisible
/// zero-width character (U+200B–U+200D, U+2060–U+2064, U+FEFF, U+180E) or
/// a line or paragraph separator (U+2028, U+2029). Shared with the
/// failure-log cleaning in `redact`.
pub(crate) fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{061C}'
                | '\u{200B}'..='\u{200D}'
                | '\u{2060}'..='\u{2064}'
                | '\u{FEFF}'
                | '\u{180E}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

/// JSON text (as `serde_json` writes it, compact or pretty) made safe to
/// print on a terminal: every character [`display_command`] would escape
/// that `serde_json` leaves raw (DEL, C1 controls, bidi, zero-width and
/// separator characters; they can only occur inside strings) becomes a
/// `\uXXXX` escape, so the text is still JSON and parses back to the same
/// value. Newlines, tabs and carriage returns are the pretty-printer's
/// layout (inside strings `serde_json` has escaped them) and are kept. Used for an approval's
/// `paramsPreview` and for `talon approvals … --json`.
pub fn display_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if is_unsafe_char(c) && !matches!(c, '\n' | '\t' | '\r') {
            let mut units = [0_u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
#[path = "display_tests.rs"]
mod tests;

/// The one rendering of a command (or any text an approver must read
/// whole) for a terminal, on one line, every character kept: a newline is written as `\n`, a tab as `\t`, any other control
/// (C0, DEL, C1) or bidi control character as `\u{XXXX}` and a backslash
/// as `\\`, so the text shown maps back to the exact command byte for
/// byte, cannot rewrite the terminal and cannot fake the prompt's next
/// lines. An ESC is `\u{001B}`, a right-to-left override `\u{202E}`, a
/// zero-width space `\u{200B}`. Never shortened.
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
