//! Lines an IRC server sends (untrusted: any server the operator points
//! `channels.irc` at, or anything on the path): the line parser, the CTCP
//! reader, and the outgoing-line builder fed with what a parsed line
//! carries (a nick or text echoed back must never break framing).
#![no_main]

use libfuzzer_sys::fuzz_target;
use talon_channels::irc::line::{MAX_PARAMS, parse_ctcp, parse_line};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(m) = parse_line(&text) {
        assert!(m.params.len() <= MAX_PARAMS);
        assert!(!m.command.is_empty());
        for p in &m.params {
            assert!(!p.contains(['\r', '\n', '\0']));
        }
        let _ = m.nick();
        let _ = m.is_error_numeric();
        if let Some(last) = m.params.last() {
            let _ = parse_ctcp(last);
        }
    }
});
