//! Memory files and memory_search queries: the Markdown chunker (files the
//! model or anyone with workspace access wrote), the query normaliser and
//! the path checks of `memory_get`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (&str, &str, &str, u16)| {
    let (text, query, path, max) = input;
    let max = usize::from(max).max(1);
    for chunk in talon_memory::chunk_markdown(text, max) {
        assert!(chunk.start_line >= 1 && chunk.start_line <= chunk.end_line);
    }
    let words = talon_memory::query_words(query);
    assert!(words.len() <= talon_memory::MAX_QUERY_WORDS);
    let _ = talon_memory::fts_expression(query);
    if let Some(p) = talon_memory::normalize(path) {
        let _ = talon_memory::is_memory_path(&p, &[]);
    }
});
