//! The `apply_patch` text a model sends: it parses or is refused with an
//! error naming a line of the text; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use talon_patch::{FileOp, parse_patch};

fuzz_target!(|text: &str| {
    match parse_patch(text) {
        Ok(patch) => {
            for op in &patch.ops {
                if let FileOp::Update { hunks, .. } = op {
                    for (i, hunk) in hunks.iter().enumerate() {
                        assert_eq!(hunk.number, i + 1, "hunks are numbered in order");
                        let _ = hunk.label();
                    }
                }
            }
        }
        Err(e) => {
            let lines = text.split('\n').count();
            assert!(
                e.line >= 1 && e.line <= lines + 1,
                "error line {} outside the {lines}-line text",
                e.line
            );
            let _ = e.to_string();
        }
    }
});
