#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

fn limits(max_lines: usize, max_bytes: usize) -> ReadLimits {
    ReadLimits {
        max_lines,
        max_bytes,
        ..ReadLimits::default()
    }
}

#[test]
fn images_are_known_by_magic_bytes() {
    assert_eq!(
        sniff_image(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
        Some(ImageKind::Png)
    );
    assert_eq!(
        sniff_image(&[0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10]),
        Some(ImageKind::Jpeg)
    );
    assert_eq!(sniff_image(b"GIF89a\x01\0\x01\0"), Some(ImageKind::Gif));
    assert_eq!(sniff_image(b"GIF87a\x01\0"), Some(ImageKind::Gif));
    assert_eq!(
        sniff_image(b"RIFF\x24\0\0\0WEBPVP8 "),
        Some(ImageKind::WebP)
    );
    assert_eq!(sniff_image(b"RIFF\x24\0\0\0WAVEfmt "), None);
    assert_eq!(sniff_image(b"\x89PNG"), None);
    assert_eq!(sniff_image(b"plain text"), None);
    assert_eq!(ImageKind::WebP.mime_type(), "image/webp");
}

#[test]
fn nul_bytes_and_invalid_utf8_are_binary() {
    assert_eq!(binary_reason(b"hello\nworld\n"), None);
    assert_eq!(binary_reason("héllo ünïcode ✓".as_bytes()), None);
    let nul = binary_reason(b"abc\0def").unwrap();
    assert!(nul.contains("NUL byte at offset 3"), "{nul}");
    let bad = binary_reason(b"ok \xFF\xFE rest").unwrap();
    assert!(
        bad.contains("not UTF-8") && bad.contains("offset 3"),
        "{bad}"
    );
}

#[test]
fn a_character_cut_by_the_sniff_window_is_not_binary() {
    let mut bytes = vec![b'a'; SNIFF_BYTES - 1];
    bytes.extend_from_slice("é and more".as_bytes());
    assert_eq!(binary_reason(&bytes), None);
    // A NUL past the window is not looked at.
    let mut late = vec![b'a'; SNIFF_BYTES + 10];
    late.push(0);
    assert_eq!(binary_reason(&late), None);
}

#[test]
fn whole_small_file_has_no_note() {
    let text = numbered(3);
    let p = page(&text, None, None, &ReadLimits::default()).unwrap();
    assert_eq!(p.text, "line 1\nline 2\nline 3");
    assert_eq!((p.start_line, p.end_line, p.total_lines), (1, 3, 3));
    assert_eq!(p.cut, None);
    assert_eq!(
        render(&p, &ReadLimits::default(), None),
        "line 1\nline 2\nline 3"
    );
}

#[test]
fn offset_and_limit_select_lines_and_say_how_to_continue() {
    let text = numbered(10);
    let l = ReadLimits::default();
    let p = page(&text, Some(4), Some(3), &l).unwrap();
    assert_eq!(p.text, "line 4\nline 5\nline 6");
    assert_eq!(p.next_offset(), Some(7));
    assert_eq!(
        render(&p, &l, None),
        "line 4\nline 5\nline 6\n\n[4 more lines in the file. Use offset=7 to continue.]"
    );
    // A limit that reaches the end needs no note.
    let tail = page(&text, Some(8), Some(3), &l).unwrap();
    assert_eq!(tail.text, "line 8\nline 9\nline 10");
    assert_eq!(tail.next_offset(), None);
    assert_eq!(render(&tail, &l, None), "line 8\nline 9\nline 10");
}

#[test]
fn line_cap_cuts_and_names_the_next_offset() {
    let text = numbered(10);
    let l = limits(4, 1 << 20);
    let p = page(&text, None, None, &l).unwrap();
    assert_eq!(p.end_line, 4);
    assert_eq!(p.cut, Some(Cut::MaxLines));
    let shown = render(&p, &l, None);
    assert!(
        shown.ends_with("[Showing lines 1-4 of 10 (4 line cap). Use offset=5 to continue.]"),
        "{shown}"
    );
    // A limit above the cap is held to the cap.
    let p = page(&text, Some(2), Some(100), &l).unwrap();
    assert_eq!((p.start_line, p.end_line), (2, 5));
}

#[test]
fn byte_cap_cuts_at_whole_lines() {
    let text = numbered(20); // "line N\n" is 7 or 8 bytes
    let l = limits(2000, 20);
    let p = page(&text, None, None, &l).unwrap();
    assert_eq!(p.text, "line 1\nline 2\nline 3");
    assert!(p.text.len() <= 20);
    assert_eq!(p.cut, Some(Cut::MaxBytes));
    let shown = render(&p, &l, None);
    assert!(
        shown.ends_with("[Showing lines 1-3 of 20 (20 byte cap). Use offset=4 to continue.]"),
        "{shown}"
    );
}

#[test]
fn an_overlong_line_is_shown_in_part_on_a_char_boundary() {
    let text = format!("short\n{}\nafter\n", "é".repeat(30));
    let l = limits(2000, 11);
    let p = page(&text, Some(2), None, &l).unwrap();
    assert_eq!(p.text, "é".repeat(5));
    assert_eq!(p.cut, Some(Cut::LongLine { len: 60, shown: 10 }));
    assert_eq!(p.next_offset(), Some(3));
    let shown = render(&p, &l, None);
    assert!(shown.contains("Line 2 is 60 bytes"), "{shown}");
    assert!(shown.contains("use offset=3 to go on"), "{shown}");
}

#[test]
fn offset_past_the_end_is_an_error() {
    let text = numbered(3);
    let err = page(&text, Some(5), None, &ReadLimits::default()).unwrap_err();
    assert_eq!(
        err,
        OffsetPastEnd {
            offset: 5,
            total_lines: 3
        }
    );
    // Line 3 exists, line 4 does not.
    assert!(page(&text, Some(3), None, &ReadLimits::default()).is_ok());
    assert!(page(&text, Some(4), None, &ReadLimits::default()).is_err());
}

#[test]
fn empty_file_and_missing_final_newline() {
    let l = ReadLimits::default();
    let p = page("", None, None, &l).unwrap();
    assert_eq!(render(&p, &l, None), "[The file is empty.]");
    assert!(page("", Some(2), None, &l).is_err());
    let p = page("a\nb", None, None, &l).unwrap();
    assert_eq!((p.text, p.total_lines), ("a\nb", 2));
}

#[test]
fn crlf_lines_keep_their_inner_breaks() {
    let l = ReadLimits::default();
    let p = page("a\r\nb\r\nc\r\n", Some(2), None, &l).unwrap();
    assert_eq!(p.text, "b\r\nc");
}

#[test]
fn a_scan_cut_is_reported_with_the_way_on() {
    let text = numbered(5);
    let l = ReadLimits::default();
    let p = page(&text, None, None, &l).unwrap();
    let shown = render(
        &p,
        &l,
        Some(ScanCut {
            total_size: 1_000_000,
            scanned: text.len(),
        }),
    );
    assert!(shown.starts_with("line 1\n"), "{shown}");
    assert!(
        shown.contains(
            "The file is 1000000 bytes; read looks at its first 35 bytes only (lines 1-5)"
        ),
        "{shown}"
    );
    assert!(shown.contains("lines after 5"), "{shown}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    /// Any text, offset, limit and caps: no panic, the page is a slice of
    /// the text within the byte cap, and following `next_offset` moves on.
    #[test]
    fn paging_is_total_and_within_caps(
        text in "(\\PC{0,12}\\n?){0,40}",
        offset in proptest::option::of(1usize..50),
        limit in proptest::option::of(1usize..10),
        max_lines in 1usize..20,
        max_bytes in 1usize..64,
    ) {
        let l = limits(max_lines, max_bytes);
        match page(&text, offset, limit, &l) {
            Ok(p) => {
                proptest::prop_assert!(p.text.len() <= max_bytes);
                proptest::prop_assert!(text.contains(p.text));
                if p.total_lines > 0 {
                    proptest::prop_assert!(p.end_line >= p.start_line);
                    proptest::prop_assert!(p.end_line <= p.total_lines);
                }
                if let Some(next) = p.next_offset() {
                    proptest::prop_assert!(next > p.start_line);
                    proptest::prop_assert!(page(&text, Some(next), limit, &l).is_ok());
                }
                let _ = render(&p, &l, None);
            }
            Err(e) => proptest::prop_assert!(e.offset > e.total_lines),
        }
    }
}
