//! "Did you mean": the one rule for guessing what a misspelt name meant
//! (a YAML key, a generator, a column, a report field), so that every
//! message that offers a guess offers it by the same measure. A leaf.

/// The closest of `candidates` to a misspelt `word`, when it is close enough
/// to be what was meant: Jaro-Winkler, which favours a shared beginning as
/// typos keep one, at 0.8 or more, case aside. Failing that, a dotted name
/// that ends in the word (`ingest.rows_per_sec` for `rows_per_sec`): the
/// word given without its part.
pub fn suggest<'a, S: AsRef<str>>(word: &str, candidates: &'a [S]) -> Option<&'a str> {
    let word = word.to_lowercase();
    let lower = |c: &'a S| (c.as_ref().to_lowercase(), c.as_ref());
    let typo = candidates
        .iter()
        .map(lower)
        .map(|(c, original)| (strsim::jaro_winkler(&word, &c), original))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))
        .map(|(_, c)| c);
    typo.or_else(|| {
        candidates
            .iter()
            .map(lower)
            .find(|(c, _)| c.strip_suffix(&word).is_some_and(|part| part.ends_with('.')))
            .map(|(_, original)| original)
    })
}

/// `; did you mean `GUESS`?`, or nothing without a guess: the tail every
/// "unknown NAME" message takes.
pub fn did_you_mean(guess: Option<&str>) -> String {
    guess.map(|g| format!("; did you mean `{g}`?")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_is_guessed_and_a_stranger_is_not() {
        assert_eq!(suggest("rows_per_secs", &["rows_per_sec", "qps"]), Some("rows_per_sec"));
        assert_eq!(suggest("P99_MS", &["p99_ms", "p50_ms"]), Some("p99_ms"));
        assert_eq!(suggest("p99", &["p99_ms", "qps"]), Some("p99_ms"));
        assert_eq!(suggest("zzz", &["rows_per_sec", "qps"]), None);
        assert_eq!(suggest("rows_per_sec", &["ingest.rows_per_sec", "ingest.errors"]), Some("ingest.rows_per_sec"));
        assert_eq!(suggest::<&str>("x", &[]), None);
        assert_eq!(did_you_mean(Some("a")), "; did you mean `a`?");
        assert_eq!(did_you_mean(None), "");
    }
}
