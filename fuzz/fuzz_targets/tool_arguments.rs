//! A model's tool-call arguments (a JSON string that may be anything) and
//! a tool schema from an MCP server, normalised for every dialect.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    use talon_schema_dialects::{
        Dialect, NormalizeOptions, decode_arguments_str, normalize_schema,
    };
    let _ = decode_arguments_str(text, true);
    let _ = decode_arguments_str(text, false);
    if let Ok(schema) = serde_json::from_str::<serde_json::Value>(text) {
        for dialect in [
            Dialect::OpenAi,
            Dialect::OpenAiStrict,
            Dialect::Anthropic,
            Dialect::Gemini,
        ] {
            let _ = normalize_schema(&schema, dialect, &NormalizeOptions::default());
        }
    }
});
