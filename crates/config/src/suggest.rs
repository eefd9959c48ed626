//! "Did you mean …?" by edit distance.

/// Longer words get no suggestion (they are not typos, and the distance is
/// quadratic).
const MAX_WORD_BYTES: usize = 128;

/// The candidate closest to `word`, if one is close enough to be a likely
/// typo: same letters in another case or with `_`/`-` separators, or an
/// optimal-string-alignment distance of at most 1 (words up to 4
/// characters) or 2 (longer words), ignoring case.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    if word.len() > MAX_WORD_BYTES {
        return None;
    }
    let folded = fold(word);
    if let Some(exact) = candidates.iter().find(|c| fold(c) == folded) {
        return Some(exact);
    }
    let lower = word.to_lowercase();
    let budget = if lower.chars().count() <= 4 { 1 } else { 2 };
    candidates
        .iter()
        .map(|c| (osa_distance(&lower, &c.to_lowercase()), *c))
        .filter(|(d, _)| *d <= budget)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Lowercase without `_` and `-`, so `also_allow` and `AlsoAllow` meet
/// `alsoAllow`.
fn fold(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Levenshtein distance plus adjacent transpositions (each edit costs 1).
pub(crate) fn osa_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.is_empty() {
        return b.len();
    }
    if b.is_empty() {
        return a.len();
    }
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for (i, cell) in d.iter_mut().step_by(width).enumerate() {
        *cell = i;
    }
    for (j, cell) in d.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

#[cfg(test)]
#[path = "suggest_tests.rs"]
mod tests;
