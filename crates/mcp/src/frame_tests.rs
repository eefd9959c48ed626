#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn guard(limits: FrameLimits) -> FrameGuard<tokio::io::Empty> {
    FrameGuard::new(tokio::io::empty(), limits, FrameVerdict::default())
}

fn limits(max_string: usize) -> FrameLimits {
    FrameLimits {
        max_string,
        soft_line: 1 << 20,
        hard_line: 2 << 20,
    }
}

/// Feed `input` in chunks of `step` bytes; the output lines.
fn run(limits: FrameLimits, input: &[u8], step: usize) -> Result<Vec<u8>, FrameError> {
    let mut g = guard(limits);
    for chunk in input.chunks(step.max(1)) {
        g.process(chunk)?;
    }
    Ok(g.out)
}

#[test]
fn long_strings_are_cut_with_a_marker_and_the_line_stays_json() {
    let text = "x".repeat(10_000);
    let line = format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": text}]}})
    );
    for step in [1, 7, 4096] {
        let out = run(limits(100), line.as_bytes(), step).unwrap();
        assert!(out.ends_with(b"\n"));
        let v: Value = serde_json::from_slice(&out).unwrap();
        let cut = v["result"]["content"][0]["text"].as_str().unwrap();
        assert!(cut.starts_with(&"x".repeat(100)), "{cut}");
        assert!(cut.contains("9900 more bytes cut by talon"), "{cut}");
        assert_eq!(v["id"], 7);
        assert_eq!(v["result"]["content"][0]["type"], "text");
    }
}

#[test]
fn short_lines_pass_unchanged() {
    let line = b"{\"a\":\"b\\\"c\",\"n\":[1,2,3]}\n{\"x\":\"\\u00e9\"}\n";
    assert_eq!(run(limits(100), line, 3).unwrap(), line.to_vec());
}

#[test]
fn a_line_whose_structure_is_too_large_is_refused() {
    let numbers: Vec<u32> = (0..100_000).collect();
    let line = format!("{}\n", json!({"id": 1, "result": numbers}));
    let l = FrameLimits {
        max_string: 10,
        soft_line: 1000,
        hard_line: 2000,
    };
    assert_eq!(
        run(l, line.as_bytes(), 512).unwrap_err(),
        FrameError { limit: 2000 }
    );
}

#[test]
fn past_the_soft_budget_long_strings_shrink_but_short_ones_stay() {
    let l = FrameLimits {
        max_string: 1000,
        soft_line: 1500,
        hard_line: 100_000,
    };
    let blocks: Vec<Value> = (0..20)
        .map(|_| json!({"type": "text", "text": "y".repeat(900)}))
        .collect();
    let line = format!("{}\n", json!({"id": 1, "result": {"content": blocks}}));
    let out = run(l, line.as_bytes(), 100).unwrap();
    assert!(out.len() < 6000, "{}", out.len());
    let v: Value = serde_json::from_slice(&out).unwrap();
    for b in v["result"]["content"].as_array().unwrap() {
        assert_eq!(b["type"], "text");
    }
}

proptest! {
    /// Whatever the string holds (multi-byte characters, escapes, surrogate
    /// pairs) and wherever the budget falls, the output parses.
    #[test]
    fn cut_output_always_parses(
        s in "[a-zé€😀\"\\\\\n\t\u{1}]{0,200}",
        max in 1usize..50,
        step in 1usize..17,
    ) {
        let line = format!("{}\n", json!({"t": s, "k": [s.clone()]}));
        let out = run(limits(max), line.as_bytes(), step).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        let t = v["t"].as_str().unwrap();
        if serde_json::to_string(&s).unwrap().len() - 2 <= max {
            prop_assert_eq!(t, s.as_str());
        }
    }
}

#[test]
fn the_marker_reads_back_as_the_sizes_sent() {
    let line = format!("{}\n", json!({"t": "z".repeat(500)}));
    let out = run(limits(100), line.as_bytes(), 64).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(cut_sizes(v["t"].as_str().unwrap()), Some((100, 400)));
    assert_eq!(cut_sizes("plain"), None);
}

/// Found by the `mcp_wire` fuzz target: a broken line whose long string
/// never closes (and ends in a lone backslash) was being cut up to the
/// next quote, swallowing the newline and the valid message after it.
#[test]
fn an_unterminated_cut_string_never_swallows_the_next_message() {
    let broken = format!("{{\"jsonrpc\":\"2.0\",\"x\":\"{}\\", "y".repeat(500));
    let next = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}";
    for tail in ["", "\\u00", "\\"] {
        let input = format!("{broken}{tail}\n{next}\n");
        for step in [1, 5, 4096] {
            let out = run(limits(64), input.as_bytes(), step).unwrap();
            let lines: Vec<&[u8]> = out.split(|b| *b == b'\n').collect();
            assert_eq!(lines.len(), 3, "{:?}", String::from_utf8_lossy(&out));
            let v: Value = serde_json::from_slice(lines[1]).unwrap();
            assert_eq!(v["id"], 3);
        }
    }
}
