//! What a reply teaches the planner (reference §9.1, §9.4, §11.1): the overhead beyond our
//! estimate of the messages (an exponential moving average of `input + cache read + cache
//! creation − estimate`), busts and their streak, free-write providers, the conversation cache
//! lifetime (`auto`: 1 hour when more than 40 % of the recent turns found the cache cold, back to
//! 5 minutes after 3 turns under 20 %), and the measured price of re-sending the prompt.

use lore_proto::Usage;
use lore_storage::ContextRecord;

use crate::catalogue::Price;

/// Weight of the newest overhead observation.
const OVERHEAD_ALPHA: f64 = 0.3;
/// Weight of the newest price observation.
const PRICE_ALPHA: f64 = 0.3;
/// Turns remembered for the cache-lifetime rule.
const COLD_WINDOW: usize = 20;
/// Turns needed before the lifetime can switch to 1 hour.
const COLD_MIN_TURNS: usize = 5;

/// One reply, as the planner needs it.
#[derive(Debug, Clone, Copy)]
pub struct ReplyFacts {
    /// The usage the upstream reported (normalised: `input_tokens` excludes the cache).
    pub usage: Usage,
    /// The reply succeeded (2xx and not cut short by an error).
    pub success: bool,
    /// The request sent was the one planned (not the client's bytes after a planning timeout).
    pub plan_used: bool,
    /// Our estimate of the messages sent.
    pub sent_estimate: u64,
    /// Layer the turn was sent at.
    pub layer: u8,
    /// The planner expected a cache write this turn (layer change, prefix re-render, cold
    /// resume): a bust then does not count toward the streak.
    pub expected_bust: bool,
    /// The model's list prices.
    pub price: Price,
}

/// Folds a reply into the session's context state.
pub fn after_reply(state: &mut ContextRecord, facts: &ReplyFacts) {
    let usage = facts.usage;
    let actual =
        usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    if actual == 0 || !facts.success {
        return;
    }
    state.total_input += actual;
    state.total_cache_read += usage.cache_read_input_tokens;
    state.last_actual_input = actual;
    state.last_cache_read = usage.cache_read_input_tokens;
    state.last_cache_write = usage.cache_creation_input_tokens;
    if facts.plan_used {
        let observed = actual.saturating_sub(facts.sent_estimate) as f64;
        state.overhead = if state.calibrated {
            (1.0 - OVERHEAD_ALPHA) * state.overhead + OVERHEAD_ALPHA * observed
        } else {
            observed
        };
        state.calibrated = true;
    }
    let bust = usage.cache_creation_input_tokens * 2 > actual;
    if bust {
        state.busts += 1;
        if !facts.expected_bust {
            state.consecutive_busts += 1;
        }
    }
    if usage.cache_read_input_tokens > 0 {
        state.consecutive_busts = 0;
    }
    if usage.cache_creation_input_tokens == 0 {
        state.zero_write_turns = state.zero_write_turns.saturating_add(1);
    } else {
        state.zero_write_turns = 0;
    }
    state
        .cold_turns
        .push(usage.cache_read_input_tokens == 0 && usage.cache_creation_input_tokens > 0);
    if state.cold_turns.len() > COLD_WINDOW {
        let extra = state.cold_turns.len() - COLD_WINDOW;
        state.cold_turns.drain(..extra);
    }
    let cold_share = state.cold_turns.iter().filter(|cold| **cold).count() as f64
        / state.cold_turns.len().max(1) as f64;
    if state.ttl_1h {
        if cold_share < 0.2 {
            state.warm_streak += 1;
            if state.warm_streak >= 3 {
                state.ttl_1h = false;
                state.warm_streak = 0;
            }
        } else {
            state.warm_streak = 0;
        }
    } else if state.cold_turns.len() >= COLD_MIN_TURNS && cold_share > 0.4 {
        state.ttl_1h = true;
        state.warm_streak = 0;
    }
    // What re-sending a warm prompt really cost: reads plus the part the cache did not cover.
    let warm = usage.cache_read_input_tokens * 2 >= actual;
    let resent = usage.cache_read_input_tokens + usage.input_tokens;
    if warm && resent > 0 {
        let dollars = usage.cache_read_input_tokens as f64 * facts.price.cache_read
            + usage.input_tokens as f64 * facts.price.input;
        let per_million = dollars / resent as f64;
        state.reread_price = if state.reread_price > 0.0 {
            (1.0 - PRICE_ALPHA) * state.reread_price + PRICE_ALPHA * per_million
        } else {
            per_million
        };
    }
}

/// The floor a "prompt is too long" answer raises: 3 when the prompt overshot by 20 % or more,
/// else 2 (reference §8).
pub fn overflow_floor(ratio: f64) -> u8 {
    if ratio >= 1.2 { 3 } else { 2 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, read: u64, write: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: 10,
            cache_read_input_tokens: read,
            cache_creation_input_tokens: write,
        }
    }

    fn facts(usage: Usage, estimate: u64) -> ReplyFacts {
        ReplyFacts {
            usage,
            success: true,
            plan_used: true,
            sent_estimate: estimate,
            layer: 0,
            expected_bust: false,
            price: Price::from_parts(3.0, 15.0, Some(0.3), Some(3.75), None),
        }
    }

    #[test]
    fn the_overhead_is_an_average_of_what_the_estimate_missed() {
        let mut state = ContextRecord::default();
        after_reply(&mut state, &facts(usage(100, 9_000, 900), 8_000));
        assert!(state.calibrated);
        assert_eq!(state.overhead, 2_000.0);
        after_reply(&mut state, &facts(usage(100, 10_000, 900), 10_000));
        assert!((state.overhead - (0.7 * 2_000.0 + 0.3 * 1_000.0)).abs() < 1e-6);
        assert_eq!(state.last_actual_input, 11_000);
        // A failed reply teaches nothing.
        let before = state.clone();
        let mut failed = facts(usage(5, 0, 0), 1);
        failed.success = false;
        after_reply(&mut state, &failed);
        assert_eq!(state, before);
    }

    #[test]
    fn busts_count_unless_expected_and_a_hit_resets_them() {
        let mut state = ContextRecord::default();
        after_reply(&mut state, &facts(usage(10, 0, 5_000), 5_000));
        after_reply(&mut state, &facts(usage(10, 0, 5_000), 5_000));
        assert_eq!((state.busts, state.consecutive_busts), (2, 2));
        let mut expected = facts(usage(10, 0, 5_000), 5_000);
        expected.expected_bust = true;
        after_reply(&mut state, &expected);
        assert_eq!((state.busts, state.consecutive_busts), (3, 2));
        after_reply(&mut state, &facts(usage(10, 5_000, 100), 5_000));
        assert_eq!(state.consecutive_busts, 0);
    }

    #[test]
    fn the_lifetime_goes_to_one_hour_when_turns_are_cold_and_back_when_warm() {
        let mut state = ContextRecord::default();
        for _ in 0..5 {
            after_reply(&mut state, &facts(usage(10, 0, 5_000), 5_000));
        }
        assert!(state.ttl_1h);
        for _ in 0..30 {
            after_reply(&mut state, &facts(usage(10, 5_000, 50), 5_000));
        }
        assert!(!state.ttl_1h);
    }

    #[test]
    fn free_write_providers_are_noticed() {
        let mut state = ContextRecord::default();
        for _ in 0..3 {
            after_reply(&mut state, &facts(usage(8_000, 2_000, 0), 9_000));
        }
        assert_eq!(state.zero_write_turns, 3);
        after_reply(&mut state, &facts(usage(10, 2_000, 10), 2_000));
        assert_eq!(state.zero_write_turns, 0);
    }

    #[test]
    fn uncached_resends_raise_the_measured_price() {
        let mut state = ContextRecord::default();
        after_reply(&mut state, &facts(usage(0, 10_000, 0), 9_000));
        assert!((state.reread_price - 0.3).abs() < 1e-9);
        after_reply(&mut state, &facts(usage(5_000, 5_000, 0), 9_000));
        assert!(state.reread_price > 0.3);
        assert_eq!(overflow_floor(1.05), 2);
        assert_eq!(overflow_floor(1.3), 3);
    }
}
