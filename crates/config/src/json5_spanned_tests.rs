use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::spans::render_path;

fn value(text: &str) -> Value {
    let parsed = parse(text).unwrap();
    assert_eq!(parsed.problems, vec![], "unexpected problems for {text:?}");
    parsed.value
}

fn syntax(text: &str) -> SyntaxError {
    parse(text).unwrap_err()
}

fn at(line: u32, column: u32) -> Pos {
    Pos { line, column }
}

#[test]
fn plain_json() {
    assert_eq!(
        value(r#"{"a": [1, -2, 3.5, true, false, null, "x"], "b": {}}"#),
        json!({"a": [1, -2, 3.5, true, false, null, "x"], "b": {}})
    );
}

#[test]
fn json5_syntax() {
    let text = "\u{FEFF}// comment\n{\n  unquoted: 'single \"q\"', /* block\n comment */\n  $id_1: +5,\n  trailing: [1, 2,],\n  hex: 0xFF, neg_hex: -0x10,\n  lead: .5, trail: 5., exp: 1e3,\n  'quoted key': \"a\\\n b\",\n}";
    assert_eq!(
        value(text),
        json!({
            "unquoted": "single \"q\"",
            "$id_1": 5,
            "trailing": [1, 2],
            "hex": 255,
            "neg_hex": -16,
            "lead": 0.5,
            "trail": 5.0,
            "exp": 1000.0,
            "quoted key": "a b",
        })
    );
}

#[test]
fn every_escape() {
    let text = r#"["\b\f\n\r\t\v\0\'\"\\\/\a", "\x41\u00e9\uD83D\uDE00", '\
']"#;
    assert_eq!(
        value(text),
        json!(["\u{8}\u{c}\n\r\t\u{b}\0'\"\\/a", "Aé😀", ""])
    );
    // CR LF, U+2028 and U+2029 continue a line too.
    assert_eq!(value("'a\\\r\nb\\\u{2028}c\\\u{2029}d'"), json!("abcd"));
    // Raw U+2028 / U+2029 may appear in strings.
    assert_eq!(value("'a\u{2028}b'"), json!("a\u{2028}b"));
}

#[test]
fn unicode_identifier_keys() {
    assert_eq!(
        value("{ café: 1, \\u0061b: 2, ünï_cödé$: 3 }"),
        json!({"café": 1, "ab": 2, "ünï_cödé$": 3})
    );
}

#[test]
fn numbers_match_serde_json_representation() {
    assert_eq!(value("18446744073709551615"), json!(u64::MAX));
    assert_eq!(value("-9223372036854775808"), json!(i64::MIN));
    assert!(value("18446744073709551616").is_f64());
    assert!(value("1.0").is_f64());
    assert_eq!(value("-0"), json!(0));
    assert_eq!(value("0x7fffffffffffffff"), json!(i64::MAX));
}

#[test]
fn positions_of_keys_and_values() {
    let text = "{\n  tools: {\n    deny: [\"a\", 'b'],\n  },\n  \"x\": 1\n}";
    let parsed = parse(text).unwrap();
    let tools = parsed.spans.member("tools").unwrap();
    assert_eq!(tools.key, Some(at(2, 3)));
    assert_eq!(tools.value, at(2, 10));
    let deny = tools.member("deny").unwrap();
    assert_eq!(deny.key, Some(at(3, 5)));
    assert_eq!(deny.element(1).unwrap().value, at(3, 17));
    assert_eq!(parsed.spans.member("x").unwrap().key, Some(at(5, 3)));
    assert_eq!(
        parsed
            .spans
            .lookup(&[
                Seg::Key("tools".into()),
                Seg::Key("deny".into()),
                Seg::Index(0)
            ])
            .unwrap()
            .value,
        at(3, 12)
    );
}

#[test]
fn columns_count_characters_and_crlf_is_one_line_break() {
    let parsed = parse("{\r\n\"é😀\": 1, b: 2}").unwrap();
    assert_eq!(parsed.spans.member("b").unwrap().key, Some(at(2, 10)));
    let parsed = parse("{\ra: 1}").unwrap();
    assert_eq!(parsed.spans.member("a").unwrap().key, Some(at(2, 1)));
}

#[test]
fn duplicate_keys_are_problems_naming_both_lines() {
    let parsed = parse("{\n  deny: ['exec'],\n  x: 1,\n  deny: [],\n}").unwrap();
    assert_eq!(parsed.value, json!({"deny": ["exec"], "x": 1}));
    assert_eq!(parsed.problems.len(), 1);
    let p = &parsed.problems[0];
    assert_eq!(render_path(&p.path), "deny");
    assert_eq!(p.pos, at(4, 3));
    assert!(
        p.message.contains("line 2") && p.message.contains("line 4"),
        "{}",
        p.message
    );
}

#[test]
fn nested_duplicate_path() {
    let parsed = parse("{a: [{b: 1, 'b': 2}]}").unwrap();
    assert_eq!(render_path(&parsed.problems[0].path), "a[0].b");
}

#[test]
fn non_finite_numbers_are_problems() {
    let parsed = parse("{a: Infinity, b: [-NaN, +Infinity, 1e400]}").unwrap();
    assert_eq!(parsed.value, json!({"a": null, "b": [null, null, null]}));
    let paths: Vec<String> = parsed
        .problems
        .iter()
        .map(|p| render_path(&p.path))
        .collect();
    assert_eq!(paths, vec!["a", "b[0]", "b[1]", "b[2]"]);
    assert!(
        parsed.problems[0]
            .message
            .contains("non-finite number `Infinity`")
    );
    assert_eq!(parsed.problems[1].pos, at(1, 19));
}

#[test]
fn syntax_errors_say_where_and_what() {
    let e = syntax("{\n  a: 1\n  b: 2\n}");
    assert_eq!(e.pos, at(3, 3));
    assert_eq!(
        e.message,
        "expected `,` or `}` after the value of \"a\", found `b`"
    );

    let e = syntax("{a: [1, 2}");
    assert_eq!(e.pos, at(1, 10));
    assert!(
        e.message.starts_with("expected `,` or `]`"),
        "{}",
        e.message
    );

    let e = syntax("{a 1}");
    assert_eq!(
        (e.pos, e.message.as_str()),
        (at(1, 4), "expected `:` after the key \"a\", found `1`")
    );

    let e = syntax("{a: yes}");
    assert_eq!(e.pos, at(1, 5));
    assert!(e.message.contains("must be quoted"), "{}", e.message);

    let e = syntax("{\n a: 'abc\n}");
    assert_eq!(e.pos, at(2, 9));
    assert!(
        e.message.starts_with("line break inside the string"),
        "{}",
        e.message
    );

    let e = syntax("{a: 1");
    assert!(
        e.message
            .contains("expected `}` to close the object opened at line 1, column 1"),
        "{}",
        e.message
    );

    let e = syntax("/* never closed");
    assert_eq!(
        (e.pos, e.message.contains("unterminated block comment")),
        (at(1, 1), true)
    );

    assert!(syntax("{a: 01}").message.contains("leading zeros"));
    assert!(syntax("[0x]").message.contains("hexadecimal digits"));
    assert!(syntax("[1e]").message.contains("exponent"));
    assert!(syntax("[.]").message.contains("digits"));
    assert!(
        syntax("['\\1']")
            .message
            .contains("digits cannot be escaped")
    );
    assert!(syntax("['\\01']").message.contains("octal"));
    assert!(
        syntax("['\\x4']")
            .message
            .contains("two hexadecimal digits")
    );
    assert!(syntax("['\\uD800']").message.contains("surrogate"));
    assert!(syntax("['\\uDC00']").message.contains("surrogate"));
    assert!(
        syntax("{} {}")
            .message
            .contains("after the end of the document")
    );
    assert!(syntax("").message.contains("end of the file"));
    assert!(syntax("[12abc]").message.contains("right after a number"));
    assert_eq!(
        syntax("{\u{0}: 1}").message,
        "expected a key (a quoted string or an identifier) or `}`, found a NUL byte (U+0000)"
    );
}

#[test]
fn nesting_limit() {
    let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(parse(&ok).is_ok());
    let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    let e = parse(&deep).unwrap_err();
    assert_eq!(e.pos, at(1, 129));
    assert!(e.message.contains("nesting too deep"), "{}", e.message);
    // Far deeper input fails the same way, without overflowing the stack.
    assert!(parse(&"{a:".repeat(100_000)).is_err());
}

#[test]
fn nul_bytes_inside_strings_are_kept() {
    assert_eq!(value("{'a\u{0}b': 'c\u{0}'}"), json!({"a\u{0}b": "c\u{0}"}));
}

#[test]
fn only_trivia_detects_empty_documents() {
    assert!(only_trivia(""));
    assert!(only_trivia("  // x\n /* y */ \u{FEFF}"));
    assert!(!only_trivia("{}"));
    assert!(!only_trivia("/* open"));
}

// ---- differential tests against the `json5` crate ----

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        (-1.0e12f64..1.0e12).prop_map(|f| json!(f)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "\\PC{0,12}".prop_map(Value::String),
        "[ -~]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z_$][a-zA-Z0-9_$]{0,6}|\\PC{0,6}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A JSON5-flavoured printer: comments, unquoted keys where possible,
/// single quotes, trailing commas, hex for some integers, odd whitespace.
fn json5ish(v: &Value, depth: usize, out: &mut String) {
    let pad = |out: &mut String| {
        out.push_str(match depth % 4 {
            0 => " ",
            1 => "\n  // line comment\n",
            2 => "\t/* block */ ",
            _ => "\r\n",
        })
    };
    match v {
        Value::Null | Value::Bool(_) => out.push_str(&v.to_string()),
        Value::Number(n) => match n.as_u64() {
            Some(u) if depth % 2 == 1 => out.push_str(&format!("0x{u:X}")),
            Some(u) if depth % 3 == 2 => out.push_str(&format!("+{u}")),
            _ => out.push_str(&n.to_string()),
        },
        Value::String(s) => single_quoted(s, out),
        Value::Array(items) => {
            out.push('[');
            for item in items {
                pad(out);
                json5ish(item, depth + 1, out);
                out.push(',');
            }
            pad(out);
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (k, item) in map {
                pad(out);
                let plain = k
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
                    && !matches!(k.as_str(), "true" | "false" | "null" | "Infinity" | "NaN");
                if plain {
                    out.push_str(k);
                } else {
                    single_quoted(k, out);
                }
                out.push_str(" :");
                json5ish(item, depth + 1, out);
                out.push(',');
            }
            pad(out);
            out.push('}');
        }
    }
}

fn single_quoted(s: &str, out: &mut String) {
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c) & 0xff)),
            c if (c as u32) > 0xFFFF => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04X}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('\'');
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn serde_json_output_parses_like_json5_crate(v in arb_json()) {
        for text in [serde_json::to_string(&v).unwrap(), serde_json::to_string_pretty(&v).unwrap()] {
            let ours = parse(&text).unwrap();
            prop_assert!(ours.problems.is_empty());
            let theirs: Value = json5::from_str(&text).unwrap();
            prop_assert_eq!(&ours.value, &theirs);
            prop_assert_eq!(&ours.value, &v);
        }
    }

    #[test]
    fn json5ish_output_parses_like_json5_crate(v in arb_json()) {
        let mut text = String::new();
        json5ish(&v, 0, &mut text);
        let ours = parse(&text).unwrap();
        prop_assert!(ours.problems.is_empty());
        let theirs: Value = json5::from_str(&text).unwrap();
        prop_assert_eq!(&ours.value, &theirs);
        prop_assert_eq!(&ours.value, &v);
    }

    #[test]
    fn arbitrary_input_never_panics(text in "\\PC{0,64}|[\\[\\]{}:,'\"\\\\/*a-z0-9. \\n+-]{0,64}") {
        let _ = parse(&text);
    }

    #[test]
    fn recorded_positions_point_at_the_value(v in arb_json()) {
        let text = serde_json::to_string_pretty(&v).unwrap();
        let parsed = parse(&text).unwrap();
        let lines: Vec<&str> = text.split('\n').collect();
        check_positions(&parsed.value, &parsed.spans, &lines);
    }
}

/// Every recorded value position starts the value's JSON text.
fn check_positions(v: &Value, span: &SpanNode, lines: &[&str]) {
    let line = lines[span.value.line as usize - 1];
    let rest: String = line.chars().skip(span.value.column as usize - 1).collect();
    let first = match v {
        Value::Object(_) => "{".to_owned(),
        Value::Array(_) => "[".to_owned(),
        other => serde_json::to_string(other)
            .unwrap()
            .chars()
            .take(1)
            .collect(),
    };
    assert!(
        rest.starts_with(&first),
        "{rest:?} should start with {first:?}"
    );
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let child_span = span.member(k).unwrap();
                let key_at = child_span.key.unwrap();
                let key_line = lines[key_at.line as usize - 1];
                let key_rest: String = key_line.chars().skip(key_at.column as usize - 1).collect();
                assert!(key_rest.starts_with(&serde_json::to_string(k).unwrap()));
                check_positions(child, child_span, lines);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                check_positions(child, span.element(i).unwrap(), lines);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}
