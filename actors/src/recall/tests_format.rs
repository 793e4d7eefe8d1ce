//! Tests of the recall answer: tiers, headers, line formats, the character budget, cuts on
//! multibyte text, and the `id` detail.

use lore_storage::SearchHit;
use proptest::prelude::*;

use super::fake::doc;
use super::format::{MAX_RESULT_CHARS, MAX_SHOWN, MIN_RESULT_CHARS};
use super::snippet::cut;
use super::*;

const DAY: u64 = 86_400_000;
const NOW: u64 = 100 * DAY;

fn fused(hit: SearchHit, score: f32) -> FusedHit {
    FusedHit {
        focus: None,
        source: RecallSource::of(&hit),
        hit,
        score,
    }
}

fn titled(mut hit: SearchHit, title: &str) -> SearchHit {
    hit.title = title.into();
    hit
}

#[test]
fn results_read_in_tiers_grouped_by_source() {
    let outcome = RecallOutcome {
        hits: vec![
            fused(
                titled(
                    doc("k:1", "", "Refunds retry nightly.", NOW - 3 * DAY),
                    "Refund policy",
                ),
                1.0,
            ),
            fused(
                doc("t:s:0", "s", "the refund job\nfailed", NOW - 5 * 3_600_000),
                0.9,
            ),
            fused(doc("d:s:0", "s", "Refund job failed twice.", NOW), 0.5),
            fused(titled(doc("e:ann", "", "owns billing", NOW), "Ann"), 0.2),
            fused(doc("t:s:1", "s", "unrelated", NOW), 0.1),
        ],
        candidates: 5,
        notes: vec![],
    };
    let text = format_results("refund", &outcome, NOW, DEFAULT_CHAR_BUDGET);
    let expected = "## Recall Results

Found 5 results, showing top 4 (score range: 0.200–1.000).

### Strong Matches

#### Knowledge
- **Refund policy** (3d ago): Refunds retry nightly. (k:1)

#### Conversation
- (user, 5h ago) the refund job failed (t:s:0)

### Supporting

#### Distilled
- [lossy] Refund job failed twice. (d:s:0)

### Peripheral

#### People & Entities
- **Ann**: owns billing (e:ann)

*4 of 5 results shown.*
";
    assert_eq!(text, expected);
}

#[test]
fn few_results_are_backfilled_to_three_and_none_reads_plainly() {
    let hits = (0..5)
        .map(|i| {
            fused(
                doc(&format!("t:s:{i}"), "s", "x", NOW),
                if i == 0 { 1.0 } else { 0.01 },
            )
        })
        .collect();
    let outcome = RecallOutcome {
        hits,
        candidates: 5,
        notes: vec![],
    };
    let text = format_results("x", &outcome, NOW, DEFAULT_CHAR_BUDGET);
    assert!(text.contains("showing top 3"));
    assert!(text.contains("*3 of 5 results shown.*"));
    let untitled = RecallOutcome {
        hits: vec![fused(doc("k:7", "", "Body.", 0), 1.0)],
        candidates: 1,
        notes: vec![],
    };
    let text = format_results("x", &untitled, NOW, DEFAULT_CHAR_BUDGET);
    assert!(text.contains("- **k:7** (undated): Body. (k:7)"), "{text}");
    let empty = format_results("lost \"thing\"", &RecallOutcome::default(), NOW, 100);
    assert_eq!(
        empty,
        "## Recall Results\n\nNo results for \"lost \"thing\"\".\n"
    );
}

fn long_body(seed: usize) -> String {
    (0..200)
        .map(|i| format!("Sentence {i} of document {seed} says something. "))
        .collect()
}

#[test]
fn the_budget_holds_and_cuts_point_to_the_full_text() {
    let hits: Vec<FusedHit> = (0..20)
        .map(|i| {
            let hit = doc(&format!("t:s:{i}"), "s", &long_body(i), NOW);
            fused(hit, 1.0 - i as f32 * 0.04)
        })
        .collect();
    let outcome = RecallOutcome {
        hits,
        candidates: 30,
        notes: vec![],
    };
    let text = format_results("document", &outcome, NOW, DEFAULT_CHAR_BUDGET);
    assert!(
        text.chars().count() <= DEFAULT_CHAR_BUDGET,
        "{}",
        text.len()
    );
    assert!(text.contains(&format!("*{MAX_SHOWN} of 30 results shown.*")));
    assert!(text.contains("call recall with `id` (e.g. `t:s:0`) for the full text"));
    for line in text.lines().filter(|l| l.starts_with("- (")) {
        let content_end = line.rfind(" (t:").unwrap();
        let content = &line[..content_end];
        assert!(
            content.ends_with("something.…"),
            "cut after a sentence: {line}"
        );
        assert!(content.chars().count() <= MAX_RESULT_CHARS + 30);
    }
    let small = format_results("document", &outcome, NOW, 3_000);
    assert!(small.chars().count() <= 3_000 + MIN_RESULT_CHARS * MAX_SHOWN);
}

#[test]
fn multibyte_text_is_cut_on_sentence_and_character_boundaries() {
    let body = "数据库迁移失败了。".repeat(300) + &"é🦀".repeat(500);
    let hits = vec![
        fused(doc("t:s:0", "s", &body, NOW), 1.0),
        fused(doc("t:s:1", "s", &"🦀".repeat(3000), NOW), 0.9),
    ];
    let outcome = RecallOutcome {
        hits,
        candidates: 2,
        notes: vec![],
    };
    let text = format_results("迁移", &outcome, NOW, 2_000);
    assert!(text.chars().count() <= 2_000);
    assert!(text.contains("数据库迁移失败了。… (t:s:0)"));
    assert!(text.contains("🦀… (t:s:1)"));
}

#[test]
fn the_detail_of_an_id_carries_the_whole_text() {
    let body = long_body(1);
    let mut hit = doc("t:s:7", "s", &body, 1_709_210_096_000);
    hit.project = "/work/app".into();
    let text = format_detail(&hit);
    assert!(text.starts_with("## Recall Detail: t:s:7\n\n"));
    assert!(
        text.contains(
            "*message · role user · session s · project /work/app · 2024-02-29 12:34 UTC*"
        )
    );
    assert!(text.contains(body.trim_end()));
    let knowledge = titled(
        doc("k:3", "", "Always run migrations first.", 0),
        "Deploy order",
    );
    assert_eq!(
        format_detail(&knowledge),
        "## Recall Detail: k:3\n\n*knowledge · project /p*\n\n**Deploy order**\n\nAlways run migrations first.\n"
    );
    assert!(format_missing("t:x:1").starts_with("## Recall Detail: t:x:1\n\nNo document"));
}

/// Long text of mixed widths and sentence ends, cheap to generate.
fn chunky_text() -> impl Strategy<Value = String> {
    let chunks = vec![
        "é",
        "🦀",
        "数据库",
        "。",
        ". ",
        "word ",
        "\n",
        "a",
        "! ",
        "  ",
    ];
    prop::collection::vec(prop::sample::select(chunks), 0..1_500).prop_map(|c| c.concat())
}

fn any_hit() -> impl Strategy<Value = FusedHit> {
    (
        prop::sample::select(vec!["t:s:", "d:s:", "k:", "e:", "odd:"]),
        0u32..1000,
        "\\PC{0,40}",
        prop_oneof!["\\PC{0,300}", chunky_text()],
        0.0f32..1.0,
        0u64..NOW + DAY,
    )
        .prop_map(|(prefix, n, title, body, score, created)| {
            let hit = titled(doc(&format!("{prefix}{n}"), "s", &body, created), &title);
            fused(hit, score)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn formatting_never_panics_and_stays_within_budget(
        mut hits in prop::collection::vec(any_hit(), 0..25),
        budget in 4_000usize..20_000,
        extra in 0usize..10,
    ) {
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        let candidates = hits.len() + extra;
        let outcome = RecallOutcome { hits, candidates, notes: vec![] };
        let text = format_results("query", &outcome, NOW, budget);
        let shown = outcome.hits.len().min(MAX_SHOWN);
        prop_assert!(text.chars().count() <= budget + MIN_RESULT_CHARS * shown);
        prop_assert!(text.starts_with("## Recall Results\n\n"));
    }

    #[test]
    fn cuts_are_prefixes_within_the_count(text in "\\PC{0,400}", max in 0usize..300) {
        let (out, was_cut) = cut(&text, max);
        prop_assert!(out.chars().count() <= max);
        let kept = out.strip_suffix('…').filter(|_| was_cut).unwrap_or(&out);
        prop_assert!(text.starts_with(kept));
        prop_assert_eq!(was_cut, text.chars().count() > max);
    }
}
