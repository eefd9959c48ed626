#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn small_output_is_kept_whole() {
    let mut buf = OutputBuffer::new(16);
    buf.push(b"hello ");
    buf.push(b"world");
    assert_eq!(buf.total(), 11);
    assert_eq!(buf.omitted(), 0);
    let all = buf.all();
    assert_eq!(all.omitted, 0);
    assert_eq!(all.render(), "hello world");
    assert_eq!(buf.read_from(6).render(), "world");
    assert_eq!(buf.read_from(11).render(), "");
}

#[test]
fn overflow_keeps_head_and_tail_and_counts_the_gap() {
    let mut buf = OutputBuffer::new(8);
    for chunk in [b"abcdef".as_slice(), b"ghijkl", b"mnopqr"] {
        buf.push(chunk);
    }
    assert_eq!(buf.total(), 18);
    assert_eq!(buf.omitted(), 10);
    let all = buf.all();
    assert_eq!(all.before, b"abcd");
    assert_eq!(all.omitted, 10);
    assert_eq!(all.after, b"opqr");
    assert_eq!(all.render(), "abcd\n[... 10 bytes omitted ...]\nopqr");
    // A reader positioned inside the gap learns how much it missed.
    let from_gap = buf.read_from(6);
    assert_eq!(from_gap.before, b"");
    assert_eq!(from_gap.omitted, 8);
    assert_eq!(from_gap.after, b"opqr");
    // A reader in the tail gets only new bytes.
    assert_eq!(buf.read_from(16).after, b"qr");
    assert_eq!(buf.tail(3).render(), "pqr");
    assert_eq!(buf.tail(100).render(), "opqr");
}

#[test]
fn one_huge_chunk_is_capped() {
    let mut buf = OutputBuffer::new(10);
    let big = vec![b'x'; 1_000_000];
    buf.push(&big);
    buf.push(b"END");
    assert_eq!(buf.total(), 1_000_003);
    let all = buf.all();
    assert_eq!(all.before.len() + all.after.len(), 10);
    assert!(all.after.ends_with(b"END"));
    assert_eq!(all.omitted, 1_000_003 - 10);
}

#[test]
fn control_and_bidi_characters_are_escaped() {
    let text = render_visible("a\u{1b}[31mb\u{202e}c\0d\te\n".as_bytes());
    assert_eq!(text, "a\\u{1b}[31mb\\u{202e}c\\u{0}d\te\n");
    assert_eq!(render_visible(&[0xff, b'o', b'k']), "\u{fffd}ok");
}
