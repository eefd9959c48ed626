//! The exec-approvals shell analyser: a model's command line. Beyond "no
//! panic": a complete analysis has no empty command.
#![no_main]

use libfuzzer_sys::fuzz_target;
use talon_hooks::exec_approvals::{Segment, analyze};

fuzz_target!(|command: &str| {
    let analysis = analyze(command);
    if analysis.is_complete() {
        for segment in &analysis.segments {
            match segment {
                Segment::Command { argv } => assert!(
                    !argv.is_empty(),
                    "a complete analysis with an empty command: {command:?}"
                ),
                Segment::Opaque { .. } => panic!("a complete analysis with an opaque part"),
            }
        }
    }
});
