//! The sandboxed browser's DevTools pipe (`--remote-debugging-pipe`):
//! bytes from Chromium, cut into reads at arbitrary points, framed at NUL
//! and each frame parsed as a message. Never a panic; the frames are the
//! input split at its NULs, whatever the read boundaries.
#![no_main]

use libfuzzer_sys::fuzz_target;
use talon_browser::cdp::{PipeFramer, parse_message};

fuzz_target!(|data: &[u8]| {
    let Some((&cut, bytes)) = data.split_first() else {
        return;
    };
    let cut = usize::from(cut).max(1);
    let mut framer = PipeFramer::default();
    let mut frames = Vec::new();
    for chunk in bytes.chunks(cut) {
        match framer.push(chunk) {
            Ok(done) => frames.extend(done),
            Err(_) => return,
        }
    }
    let whole: Vec<String> = bytes
        .split(|b| *b == 0)
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    // Every NUL ended a frame; what follows the last one is pending.
    assert_eq!(frames.len(), whole.len() - 1);
    assert_eq!(frames[..], whole[..whole.len() - 1]);
    for frame in &frames {
        let _ = parse_message(frame);
    }
});
