//! What an MCP server sends: its stdout through the frame guard (a valid
//! JSON line stays valid JSON, no line passes the hard budget), its
//! `tools/call` results converted and capped, and its server and tool
//! names made safe.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use talon_mcp::names::{is_valid_tool_name, safe_server_names, safe_tool_name};
use talon_mcp::wire::{bound_stdout, convert_call_result};

/// A small cap, so the fuzzer reaches the cutting paths.
const CAP: usize = 64;

fuzz_target!(|data: &[u8]| {
    let out = bound_stdout(data, CAP);
    if !out.closed {
        // Line by line: what was valid JSON still is, and no line is
        // longer than the hard budget.
        for (line_in, line_out) in data.split(|b| *b == b'\n').zip(out.bytes.split(|b| *b == b'\n')) {
            assert!(line_out.len() <= out.hard_line, "a line passed the hard budget");
            if serde_json::from_slice::<Value>(line_in).is_ok() {
                assert!(
                    serde_json::from_slice::<Value>(line_out).is_ok(),
                    "{:?} became invalid: {:?}",
                    String::from_utf8_lossy(line_in),
                    String::from_utf8_lossy(line_out)
                );
            }
        }
    }
    if let Ok(result) = serde_json::from_slice::<Value>(data) {
        let _ = convert_call_result(result, "srv", "tool", CAP);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let names: Vec<&str> = text.split('\n').take(8).collect();
        let safe = safe_server_names(&names, &mut HashSet::new());
        assert_eq!(safe.len(), names.len());
        let mut reserved = HashSet::new();
        for (server, tool) in safe.iter().zip(names.iter().rev()) {
            let name = safe_tool_name(server, tool, &mut reserved);
            assert!(is_valid_tool_name(&name), "{name:?} from {server:?}/{tool:?}");
        }
    }
});
