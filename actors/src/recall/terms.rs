//! Query terms of recall: which words of a query count, the BM25 query text built from them
//! (safe for tantivy's query parser whatever the user typed), and whole-word term matching for
//! the exact-term list.

use std::collections::HashSet;

/// Common English words that carry no meaning in a search.
const STOPWORDS: &[&str] = &[
    "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been",
    "before", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has",
    "have", "he", "her", "here", "him", "his", "how", "if", "in", "into", "is", "it", "its", "me",
    "my", "no", "not", "of", "on", "or", "our", "she", "should", "so", "some", "than", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "too", "up",
    "was", "we", "were", "what", "when", "where", "which", "who", "why", "will", "with", "would",
    "you", "your",
];

/// Whether `c` belongs to a word: a Unicode letter or digit, or `_`.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The lowercased words of `text` (runs of letters, digits and `_`), in order, repeats kept.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !is_word_char(c))
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
}

/// The meaningful terms of a query: words longer than one character that are not stopwords,
/// lowercased, each once, in the order they first appear.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    words(query)
        .filter(|word| word.chars().count() > 1 && !STOPWORDS.contains(&word.as_str()))
        .filter(|word| seen.insert(word.clone()))
        .collect()
}

/// The BM25 query text for `terms`: each term quoted, joined by spaces (the parser ORs them).
/// Terms hold only letters, digits and `_`, so no quote, operator or bracket of the user's text
/// reaches the parser.
pub fn bm25_query(terms: &[String]) -> String {
    terms
        .iter()
        .map(|term| format!("\"{term}\""))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How many of `terms` occur as whole words in `title` or `body` (case-insensitive).
pub fn whole_word_matches(terms: &[String], title: &str, body: &str) -> usize {
    let present: HashSet<String> = words(title).chain(words(body)).collect();
    terms.iter().filter(|term| present.contains(*term)).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_drop_short_words_stopwords_and_repeats() {
        assert_eq!(
            query_terms("What is the Ledger migration, and the LEDGER x?"),
            ["ledger", "migration"]
        );
        assert_eq!(
            query_terms("snake_case café 42"),
            ["snake_case", "café", "42"]
        );
        assert!(query_terms("a the of ? !! ()").is_empty());
        assert!(query_terms("").is_empty());
    }

    #[test]
    fn the_bm25_query_carries_no_user_syntax() {
        let terms = query_terms(r#"foo(bar) "x AND -y title:z* [a TO b] \"#);
        assert_eq!(terms, ["foo", "bar", "title"]);
        assert_eq!(bm25_query(&terms), r#""foo" "bar" "title""#);
    }

    #[test]
    fn whole_words_count_once_per_term() {
        let terms = query_terms("refund ledger");
        assert_eq!(whole_word_matches(&terms, "", "ledger refunds ledger"), 1);
        assert_eq!(whole_word_matches(&terms, "Refund", "the ledger."), 2);
        assert_eq!(whole_word_matches(&terms, "", "ledgers"), 0);
    }
}
