//! Pure comparison of an incoming conversation with stored ones.
//!
//! Harnesses resend the whole history on every turn. Comparing message identities (see
//! `lore_proto::Message::identity`) tells which messages are new, whether the client rewrote
//! history, and which stored conversation a request continues.

/// Length of the common prefix of two identity sequences.
pub fn common_prefix(stored: &[[u8; 16]], incoming: &[[u8; 16]]) -> usize {
    stored
        .iter()
        .zip(incoming)
        .take_while(|(a, b)| a == b)
        .count()
}

/// How well a stored conversation explains an incoming one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fit {
    /// The incoming history rewrites the stored one after `shared` messages.
    Fork { shared: usize },
    /// The incoming history starts with the whole stored one (`shared` = stored length).
    Extends { shared: usize },
}

/// How `incoming` relates to `stored`, or `None` when it is another conversation.
///
/// A rewrite counts only when at least `min_shared` leading messages agree: with a session header
/// one shared message is enough, with a bare fingerprint (first user message) it takes two, so
/// two conversations that merely open with the same words stay apart.
pub fn fit(stored: &[[u8; 16]], incoming: &[[u8; 16]], min_shared: usize) -> Option<Fit> {
    let shared = common_prefix(stored, incoming);
    if shared == stored.len() {
        Some(Fit::Extends { shared })
    } else if shared >= min_shared.max(1) {
        Some(Fit::Fork { shared })
    } else {
        None
    }
}

/// Picks the best-fitting candidate (its index), preferring extensions over forks, longer shared
/// prefixes over shorter ones, and the later candidate on a tie (the most recent session).
pub fn best_candidate<'a, I>(
    candidates: I,
    incoming: &[[u8; 16]],
    min_shared: usize,
) -> Option<usize>
where
    I: IntoIterator<Item = &'a [[u8; 16]]>,
{
    let mut best: Option<(Fit, usize)> = None;
    for (index, stored) in candidates.into_iter().enumerate() {
        if let Some(found) = fit(stored, incoming, min_shared)
            && best.is_none_or(|(current, _)| found >= current)
        {
            best = Some((found, index));
        }
    }
    best.map(|(_, index)| index)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(values: &[u8]) -> Vec<[u8; 16]> {
        values.iter().map(|v| [*v; 16]).collect()
    }

    #[test]
    fn extension_fork_and_stranger() {
        assert_eq!(
            fit(&ids(&[1, 2]), &ids(&[1, 2, 3]), 2),
            Some(Fit::Extends { shared: 2 })
        );
        assert_eq!(
            fit(&ids(&[1, 2]), &ids(&[1, 2]), 2),
            Some(Fit::Extends { shared: 2 })
        );
        assert_eq!(
            fit(&ids(&[1, 2, 3, 4]), &ids(&[1, 2, 5]), 2),
            Some(Fit::Fork { shared: 2 })
        );
        assert_eq!(fit(&ids(&[1, 2, 3]), &ids(&[1, 9]), 2), None);
        assert_eq!(
            fit(&ids(&[1, 2, 3]), &ids(&[1, 9]), 1),
            Some(Fit::Fork { shared: 1 })
        );
        assert_eq!(
            fit(&ids(&[]), &ids(&[4]), 2),
            Some(Fit::Extends { shared: 0 })
        );
        assert_eq!(fit(&ids(&[1, 2]), &ids(&[]), 1), None);
    }

    #[test]
    fn best_prefers_extension_then_length_then_recency() {
        let a = ids(&[1, 2, 3, 4]);
        let b = ids(&[1, 2]);
        let c = ids(&[1, 2]);
        let incoming = ids(&[1, 2, 7]);
        let candidates = [a.as_slice(), b.as_slice(), c.as_slice()];
        assert_eq!(best_candidate(candidates, &incoming, 2), Some(2));
        let incoming = ids(&[1, 2, 3, 4, 5]);
        assert_eq!(best_candidate(candidates, &incoming, 2), Some(0));
        let incoming = ids(&[8]);
        assert_eq!(best_candidate(candidates, &incoming, 2), None);
    }

    #[test]
    fn same_first_message_is_not_a_fork_without_a_header() {
        let stored = ids(&[1, 2, 3]);
        assert_eq!(fit(&stored, &ids(&[1]), 2), None);
        assert_eq!(fit(&stored, &ids(&[1]), 1), Some(Fit::Fork { shared: 1 }));
    }
}
