//! `talon.json` (JSON5, spanned, schema-checked): any text loads or is
//! refused with an error; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Err(e) = talon_config::load_str(text, "fuzz.json") {
        // The message is built (it carries the origin and position).
        let _ = e.to_string();
    }
});
