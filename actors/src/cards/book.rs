//! The bridge from the vault to the engine: a [`CardBook`] is one loaded vault snapshot with
//! every loadable card already turned into a [`MatchCard`].
//!
//! A card loads into the book when it is enabled-or-not (disabled cards are kept so the engine
//! can say why they did not fire), has at least one term or is constant, and has a body left
//! after private sections are removed.

use lore_proto::cards::{Card, KindsConfig, MatchMode};
use lore_storage::VaultSnapshot;

use super::MatchCard;

/// A vault snapshot ready for matching.
#[derive(Debug, Clone, Default)]
pub struct CardBook {
    /// What was loaded from disk.
    pub snapshot: VaultSnapshot,
    /// The cards the engine sees.
    pub cards: Vec<MatchCard>,
}

impl CardBook {
    /// Builds the engine's view of a snapshot.
    pub fn new(snapshot: VaultSnapshot) -> Self {
        let cards = snapshot
            .cards
            .iter()
            .filter_map(|entry| match_card(&entry.card, &snapshot.config))
            .collect();
        Self { snapshot, cards }
    }

    /// True when no card could ever be injected, so the gateway need not look at requests.
    pub fn is_idle(&self) -> bool {
        !self.cards.iter().any(|card| card.enabled && card.inject)
    }
}

/// The engine's view of a card, or `None` when the card cannot fire at all.
pub fn match_card(card: &Card, config: &KindsConfig) -> Option<MatchCard> {
    let body = card.effective_body(config);
    let has_terms = !card.keywords.is_empty() || card.constant;
    if !has_terms || body.trim().is_empty() {
        return None;
    }
    Some(MatchCard {
        key: card.key.clone(),
        kind: card.kind.as_str().to_string(),
        title: card.title.clone(),
        keywords: card.keywords.clone(),
        aliases: card.aliases.clone(),
        secondary: card.secondary.clone(),
        scan_depth: card.scan_depth,
        priority: card.priority,
        refs: card.refs.clone(),
        inject: card.inject,
        enabled: card.enabled,
        constant: card.constant,
        whole_word: card.match_mode == MatchMode::WholeWord,
        case_sensitive: card.case_sensitive,
        body: body.trim().to_string(),
        who_line: card.who_line(config),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lore_proto::cards::{Kind, parse_card};

    #[test]
    fn private_sections_never_reach_the_engine() {
        let config = KindsConfig::default();
        let text =
            "---\nkeywords: [Mira]\n---\n## who\nEngineer.\n## correspondence\nsecret plans\n";
        let card = parse_card("mira", Kind::People, text, &config).unwrap();
        let view = match_card(&card, &config).unwrap();
        assert!(
            view.body.contains("Engineer") && !view.body.contains("secret"),
            "{}",
            view.body
        );
        assert_eq!(view.kind, "people");
        let bare = parse_card("x", Kind::Entry, "---\ntitle: x\n---\nbody\n", &config).unwrap();
        assert!(
            match_card(&bare, &config).is_none(),
            "a card without keywords cannot fire"
        );
    }
}
