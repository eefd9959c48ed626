#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn truncation_counts_characters_not_bytes() {
    assert_eq!(truncate_chars("héllo wörld", 5), ("héllo".to_owned(), true));
    assert_eq!(truncate_chars("日本語", 3), ("日本語".to_owned(), false));
    assert_eq!(truncate_chars("日本語", 2), ("日本".to_owned(), true));
}

#[test]
fn markdown_to_text_keeps_words_drops_marks() {
    let md =
        "# Title\n\nSee [the docs](https://x.test/d) and ![logo](l.png).\n\n\n\n**bold** `code`";
    assert_eq!(
        markdown_to_text(md),
        "Title\n\nSee the docs and logo.\n\nbold code"
    );
}

#[test]
fn content_types_map_to_body_kinds() {
    let cases = [
        (Some("text/html; charset=utf-8"), BodyKind::Html),
        (Some("application/xhtml+xml"), BodyKind::Html),
        (Some("application/json"), BodyKind::Json),
        (Some("application/ld+json"), BodyKind::Json),
        (Some("text/plain"), BodyKind::Text),
        (Some("text/markdown"), BodyKind::Text),
        (Some("application/rss+xml"), BodyKind::Text),
    ];
    for (ct, kind) in cases {
        assert_eq!(BodyKind::detect(ct, b"x"), Ok(kind), "{ct:?}");
    }
    assert_eq!(
        BodyKind::detect(Some("application/pdf"), b"%PDF"),
        Err(UnsupportedMedia("application/pdf".to_owned()))
    );
    assert_eq!(
        BodyKind::detect(None, b"<!DOCTYPE html><html>"),
        Ok(BodyKind::Html)
    );
    assert!(BodyKind::detect(None, &[0xff, 0x00, 0xfe]).is_err());
}

#[test]
fn charset_comes_from_bom_header_meta_then_utf8() {
    assert_eq!(
        decode_body(Some("text/plain; charset=\"latin1\""), b"\xe9"),
        "é"
    );
    assert_eq!(
        decode_body(None, b"<meta charset='iso-8859-1'>\xe9"),
        "<meta charset='iso-8859-1'>é"
    );
    assert_eq!(decode_body(Some("text/plain"), "é".as_bytes()), "é");
    assert_eq!(
        decode_body(Some("text/plain; charset=latin1"), b"\xef\xbb\xbfok"),
        "ok"
    );
}

#[test]
fn readability_off_keeps_the_whole_body() {
    let html = "<body><p>outside</p><main><p>inside</p></main></body>";
    let on = html_to_markdown(html, true);
    assert_eq!((on.extractor, on.markdown.as_str()), ("main", "inside"));
    let off = html_to_markdown(html, false);
    assert_eq!(off.extractor, "body");
    assert!(off.markdown.contains("outside") && off.markdown.contains("inside"));
}
