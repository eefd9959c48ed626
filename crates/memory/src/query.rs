//! A model's query as FTS5 input: words only, each quoted, so no character
//! of the query is ever FTS5 syntax (`"`, `*`, `^`, `:`, `-`, `NEAR`,
//! `AND`/`OR`/`NOT`, parentheses, column filters).

/// The most words a query keeps (the rest are dropped).
pub const MAX_QUERY_WORDS: usize = 32;

/// The words of `query` as the tokenizer sees them (runs of letters and
/// digits, lower-cased, de-duplicated, at most [`MAX_QUERY_WORDS`]).
pub fn query_words(query: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in query.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        let w = word.to_lowercase();
        if !words.contains(&w) {
            words.push(w);
        }
        if words.len() == MAX_QUERY_WORDS {
            break;
        }
    }
    words
}

/// The FTS5 `MATCH` expression for `query`: each word a quoted string,
/// joined with `OR` (BM25 ranks chunks with more of the words first).
/// `None` when the query has no word at all.
pub fn fts_expression(query: &str) -> Option<String> {
    let words = query_words(query);
    if words.is_empty() {
        return None;
    }
    Some(quoted_or(&words))
}

/// `words` (from [`query_words`]) quoted and joined with `OR`. A word holds
/// only alphanumeric characters, so it never contains a quote; quoting
/// makes `NEAR`, `AND`, `OR` and `NOT` plain words.
pub(crate) fn quoted_or(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("\"{w}\""))
        .collect::<Vec<_>>()
        .join(" OR ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_characters_become_word_breaks() {
        assert_eq!(
            fts_expression(r#"deploy* "NEAR(a b)" -secret OR col:x ^y"#).as_deref(),
            Some(r#""deploy" OR "near" OR "a" OR "b" OR "secret" OR "or" OR "col" OR "x" OR "y""#)
        );
        assert_eq!(fts_expression("\"*()-:^"), None);
        assert_eq!(fts_expression(""), None);
    }

    #[test]
    fn words_are_deduplicated_and_capped() {
        assert_eq!(query_words("Rust rust RUST"), vec!["rust"]);
        let many: String = (0..100).map(|i| format!("w{i} ")).collect();
        assert_eq!(query_words(&many).len(), MAX_QUERY_WORDS);
        assert_eq!(query_words("naïve café"), vec!["naïve", "café"]);
    }
}
