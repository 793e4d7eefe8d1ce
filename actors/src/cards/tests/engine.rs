//! The pipeline: window, scoring, order, secondary rules, constant and disabled cards, markers,
//! scale.

use std::time::Instant;

use super::{card, chars, fired, run, vault, with_secondary, words};
use crate::cards::{DropReason, MatchCard, MatchOptions, Secondary, Turn, consult, render_block};

#[test]
fn current_message_hits() {
    let cards = vault();
    let result = run(&cards, &[], "did Alice review it?");
    assert_eq!(result.fired_keys(), vec!["people/alice"]);
    assert_eq!(result.fired[0].hit_terms, vec!["Alice"]);
    assert_eq!(
        result.fired[0].score, 2,
        "a term in the current message counts double"
    );
    assert!(
        result.fired[0]
            .rendered
            .starts_with("### Alice [people]\n## who\nAlice leads")
    );
}

#[test]
fn blank_query_fires_nothing() {
    let cards = vault();
    assert!(run(&cards, &[Turn::user("Alice")], "  \n").fired.is_empty());
}

#[test]
fn aliases_and_title_are_terms() {
    let cards = vault();
    assert_eq!(fired(&cards, "Al is out"), vec!["people/alice"]);
    assert_eq!(fired(&cards, "ask the payments team"), vec!["people/alice"]);
    let mut titled = card("events/launch", "rocket");
    titled.title = "Project Ember".into();
    assert_eq!(
        fired(&[titled], "how is project ember going"),
        vec!["events/launch"]
    );
}

#[test]
fn window_depth_in_turns() {
    let cards = vault();
    let history = vec![
        Turn::user("Bob wrote it"),
        Turn::assistant("ok"),
        Turn::user("then?"),
        Turn::assistant("fine"),
    ];
    let deep = MatchOptions {
        scan_depth: 2,
        ..MatchOptions::default()
    };
    let shallow = MatchOptions {
        scan_depth: 1,
        ..MatchOptions::default()
    };
    let found = consult(&cards, &history, "and now?", &deep, &chars);
    assert_eq!(found.fired_keys(), vec!["people/bob"]);
    assert_eq!(found.fired[0].score, 1, "a history hit counts once");
    assert!(
        consult(&cards, &history, "and now?", &shallow, &chars)
            .fired
            .is_empty()
    );

    let mut only_query = vault();
    only_query[1].scan_depth = Some(0);
    assert!(
        consult(&only_query, &history, "and now?", &deep, &chars)
            .fired
            .is_empty()
    );
    assert_eq!(
        consult(&only_query, &history, "Bob?", &deep, &chars).fired_keys(),
        vec!["people/bob"]
    );

    let mut wide = vault();
    wide[1].scan_depth = Some(200);
    let history: Vec<Turn> = std::iter::once(Turn::user("Bob"))
        .chain((0..20).map(|i| Turn::assistant(&format!("filler {i}"))))
        .collect();
    assert!(
        consult(&wide, &history, "and now?", &deep, &chars)
            .fired
            .is_empty(),
        "capped at 10 turns"
    );
}

#[test]
fn current_message_outranks_history() {
    let cards = vault();
    let result = run(&cards, &[Turn::user("Alice was here")], "what about Bob?");
    assert_eq!(result.fired_keys(), vec!["people/bob", "people/alice"]);
    assert_eq!((result.fired[0].score, result.fired[1].score), (2, 1));
}

#[test]
fn priority_then_title_break_ties() {
    let mut a = card("entry/a", "shared");
    a.title = "Zed".into();
    let mut b = card("entry/b", "shared");
    b.title = "Amy".into();
    let mut c = card("entry/c", "shared");
    c.title = "Mo".into();
    c.priority = 5.0;
    assert_eq!(
        fired(&[a, b, c], "shared word"),
        vec!["entry/c", "entry/b", "entry/a"]
    );
}

#[test]
fn secondary_all_and_any() {
    let all = with_secondary(
        "deploy",
        Secondary {
            all: words(&["prod", "friday"]),
            ..Default::default()
        },
    );
    let history = [Turn::user("it was friday")];
    assert_eq!(
        run(std::slice::from_ref(&all), &history, "deploy to prod")
            .fired
            .len(),
        1
    );
    let result = run(std::slice::from_ref(&all), &[], "deploy to prod");
    assert_eq!(
        result.drop_reason("entry/gated"),
        Some(DropReason::SecondaryAll)
    );
    assert_eq!(result.dropped[0].detail, "missing \"friday\"");

    let any = with_secondary(
        "deploy",
        Secondary {
            any: words(&["prod", "staging"]),
            ..Default::default()
        },
    );
    assert_eq!(
        run(std::slice::from_ref(&any), &[], "deploy staging")
            .fired
            .len(),
        1
    );
    let result = run(&[any], &[], "deploy dev");
    assert_eq!(
        result.drop_reason("entry/gated"),
        Some(DropReason::SecondaryAny)
    );
}

#[test]
fn secondary_not_vetoes_only_hit_messages() {
    let gated = with_secondary(
        "Alice",
        Secondary {
            not: words(&["ghost"]),
            ..Default::default()
        },
    );
    let cards = [gated];
    let ghost_earlier = [Turn::user("a ghost story"), Turn::assistant("spooky")];
    assert_eq!(
        run(&cards, &ghost_earlier, "Alice?").fired.len(),
        1,
        "ghost was in another message"
    );
    let result = run(&cards, &[], "Alice the ghost");
    assert_eq!(
        result.drop_reason("entry/gated"),
        Some(DropReason::VetoedByNot)
    );
    let both_earlier = [Turn::user("Alice saw a ghost"), Turn::assistant("oh")];
    let result = run(&cards, &both_earlier, "Alice again");
    assert_eq!(
        result.drop_reason("entry/gated"),
        Some(DropReason::VetoedByNot),
        "older hit message"
    );
}

#[test]
fn secondary_not_all_blocks_only_when_every_word_is_present() {
    let gated = with_secondary(
        "Alice",
        Secondary {
            not_all: words(&["ghost", "story"]),
            ..Default::default()
        },
    );
    let cards = [gated];
    assert_eq!(run(&cards, &[], "Alice and the ghost").fired.len(), 1);
    let result = run(&cards, &[Turn::user("a story")], "Alice and the ghost");
    assert_eq!(
        result.drop_reason("entry/gated"),
        Some(DropReason::VetoedByNotAll)
    );
}

#[test]
fn secondary_words_use_the_card_mode() {
    let gated = with_secondary(
        "Alice",
        Secondary {
            all: words(&["al"]),
            ..Default::default()
        },
    );
    assert!(
        run(std::slice::from_ref(&gated), &[], "Alice and a wallaby")
            .fired
            .is_empty()
    );
    let mut loose = gated;
    loose.whole_word = false;
    assert_eq!(run(&[loose], &[], "Alice and a wallaby").fired.len(), 1);
}

#[test]
fn constant_cards_always_fire_last_by_priority() {
    let mut rules = MatchCard::new("entry/rules", "entry", "House rules", "be kind");
    rules.constant = true;
    let mut style = MatchCard::new("entry/style", "entry", "Style", "be brief");
    style.constant = true;
    style.priority = 1.0;
    let mut cards = vault();
    cards.extend([rules, style]);
    let result = run(&cards, &[], "Bob?");
    assert_eq!(
        result.fired_keys(),
        vec!["people/bob", "entry/style", "entry/rules"]
    );
    assert_eq!(result.fired[2].score, 0);
}

#[test]
fn disabled_and_not_injectable_never_fire() {
    let mut cards = vault();
    cards[0].enabled = false;
    cards[1].inject = false;
    let result = run(&cards, &[], "Alice and Bob");
    assert!(result.fired.is_empty());
    assert_eq!(
        result.drop_reason("people/alice"),
        Some(DropReason::Disabled)
    );
    assert_eq!(
        result.drop_reason("people/bob"),
        Some(DropReason::NotInjectable)
    );
    assert!(
        run(&cards, &[], "nobody here").dropped.is_empty(),
        "reported only when they would fire"
    );
}

#[test]
fn own_markers_cannot_keep_a_card_alive() {
    let cards = vault();
    let first = run(&cards, &[], "Alice?");
    let block = render_block(&first.fired, "c0ffee", "A memory surfaces:\n\n");
    let resent = format!("{block}\n\nthanks, and the weather?");
    let history = [Turn::user(&resent), Turn::assistant("sunny")];
    assert!(run(&cards, &history, "ok").fired.is_empty());
    assert!(
        run(&cards, &[], &format!("{block}\n\nthanks"))
            .fired
            .is_empty()
    );
}

#[test]
fn a_thousand_cards_are_not_quadratic() {
    let mut cards: Vec<MatchCard> = (0..1000)
        .map(|i| {
            let mut c = card(&format!("entry/c{i}"), &format!("keyword{i}"));
            c.aliases = vec![format!("alias {i}"), format!("/tag-{i}x/")];
            c.title = format!("Card {i}");
            c.body = format!("body of card {i} ").repeat(5);
            c
        })
        .collect();
    cards[7].secondary.not = words(&["ghost"]);
    let history = [
        Turn::user(&"we talked about keyword3 and keyword500 at length. ".repeat(20)),
        Turn::assistant(&"alias 42 came up, also Card 999. ".repeat(20)),
        Turn::user("and keyword7"),
        Turn::assistant("noted"),
        Turn::user("what else"),
        Turn::assistant("nothing"),
    ];
    let mut timings = Vec::new();
    let mut result = None;
    for _ in 0..2 {
        let started = Instant::now();
        let query = "keyword1 and keyword10?";
        result = Some(consult(
            &cards,
            &history,
            query,
            &MatchOptions::default(),
            &chars,
        ));
        timings.push(started.elapsed());
    }
    let result = result.unwrap();
    assert_eq!(
        result.fired.first().map(|c| c.key.as_str()),
        Some("entry/c1")
    );
    assert!(result.fired.len() + result.dropped.len() >= 6);
    eprintln!(
        "1,000 cards, 3-turn window: cold {:?}, warm {:?}",
        timings[0], timings[1]
    );
}
