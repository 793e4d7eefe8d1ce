//! Budgets of one turn (reference §9.2–§9.4): the usable window, the cost-aware layer-0 cap
//! with its cold-turn and free-write branches, each layer's raw and distilled budgets, and the
//! bust-or-continue gate with the quality knee.

use lore_storage::ContextRecord;

use super::{PlanInput, TtlMode};

/// The layer-0 cap never goes below this many tokens.
pub const L0_CAP_FLOOR: u64 = 40_000;
/// Output tokens reserved at most.
const OUTPUT_RESERVE_CAP: u64 = 32_000;
/// Multiplier of the cap on an uncalibrated (cold) turn.
const COLD_TURN_FACTOR: f64 = 0.70;
/// Share of the input window layer 0 may use on a free-write or non-caching provider.
const FREE_WRITE_SHARE: f64 = 0.65;
/// Turns without a cache write after which a provider counts as free-write.
pub const FREE_WRITE_TURNS: u32 = 3;
/// Margin on our estimate of the messages until the upstream calibrated it.
const UNCALIBRATED_SAFETY: f64 = 1.25;
/// Compress when a bust costs less than this share of continuing.
const BUST_FACTOR: f64 = 0.85;

/// The figures every layer decision uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Budgets {
    /// The model's window.
    pub window: u64,
    /// Window minus the reserved output.
    pub max_input: u64,
    /// Tokens beyond the messages (system prompt, tools, framing).
    pub overhead: u64,
    /// Long-term knowledge tokens in the system prompt.
    pub ltm: u64,
    /// What the messages may use: `max_input − overhead − ltm`.
    pub usable: u64,
    /// The cost-aware layer-0 cap.
    pub l0_cap: u64,
    /// Whether the upstream calibrated the estimator yet.
    pub calibrated: bool,
    /// Whether the provider writes the cache for free (or does not cache).
    pub free_write: bool,
    /// Dollars per token of a cache read (the dearer of the table and the measured price).
    pub read_per_token: f64,
    /// Dollars per token of a cache write at the conversation's lifetime.
    pub write_per_token: f64,
    /// Fill fraction past which quality degrades.
    pub knee: f64,
    /// The highest distilled budget of layer 1 seen (the prefix is not re-trimmed by wobble).
    pub distilled_high_water: u64,
}

impl Budgets {
    /// The budgets of this turn.
    pub fn new(input: &PlanInput<'_>, state: &ContextRecord) -> Self {
        let model = input.model;
        let mut window = model.window(input.long_context);
        if state.learned_window > 0 {
            // The provider said how large the window really is.
            window = window.min(state.learned_window);
        }
        let max_input = window.saturating_sub(model.output.min(OUTPUT_RESERVE_CAP));
        let overhead = if state.calibrated {
            state.overhead.max(0.0).round() as u64
        } else {
            (input.fixed_tokens + 1_000).max(2_000)
        };
        let usable = max_input
            .saturating_sub(overhead)
            .saturating_sub(input.ltm_tokens);
        let table_read = model.price.read_per_token();
        let read_per_token = table_read.max(state.reread_price / 1e6);
        let one_hour = match input.settings.ttl {
            TtlMode::Auto => state.ttl_1h,
            TtlMode::FiveMinutes => false,
            TtlMode::OneHour => true,
        };
        let l0_cap = match input.settings.max_layer0_tokens {
            Some(pinned) => pinned,
            None if input.settings.target_cache_read_cost <= 0.0 => window,
            None if read_per_token <= 0.0 => window,
            None => {
                let by_cost = (input.settings.target_cache_read_cost / read_per_token).floor();
                (by_cost.min(window as f64) as u64).max(L0_CAP_FLOOR)
            }
        };
        Self {
            window,
            max_input,
            overhead,
            ltm: input.ltm_tokens,
            usable,
            l0_cap,
            calibrated: state.calibrated,
            free_write: state.zero_write_turns >= FREE_WRITE_TURNS,
            read_per_token,
            write_per_token: model.price.write_per_token(one_hour),
            knee: model.quality_knee,
            distilled_high_water: state.distilled_high_water,
        }
    }

    /// Expected input of a layer-0 turn whose messages estimate `messages` tokens.
    pub fn layer0_input(&self, messages: u64) -> u64 {
        let messages = if self.calibrated {
            messages
        } else {
            (messages as f64 * UNCALIBRATED_SAFETY) as u64
        };
        messages + self.overhead + self.ltm
    }

    /// The most a layer-0 turn may carry.
    pub fn layer0_ceiling(&self) -> u64 {
        let mut ceiling = self.max_input.min(self.l0_cap);
        if !self.calibrated && ceiling < self.max_input {
            ceiling = (ceiling as f64 * COLD_TURN_FACTOR) as u64;
        }
        if self.free_write {
            ceiling = ceiling.min((self.max_input as f64 * FREE_WRITE_SHARE) as u64);
        }
        ceiling
    }

    /// Whether a layer-0 turn of `total` tokens passes (the cap, 95 % of the input window, and
    /// the quality ceiling of 80 % of the window when the cap reaches that far).
    pub fn layer0_fits(&self, total: u64) -> bool {
        let ceiling = self.layer0_ceiling();
        total <= ceiling
            && total <= self.max_input * 95 / 100
            && (ceiling * 10 < self.window * 8 || total * 10 <= self.window * 8)
    }

    /// Under daily-budget pressure, layer 0 is left earlier (down to half the ceiling).
    pub fn pressure_ceiling(&self, pressure: f64) -> u64 {
        let pressure = pressure.clamp(0.0, 1.0);
        (self.layer0_ceiling() as f64 * (1.0 - 0.5 * pressure)) as u64
    }

    /// The usable size escalated layers work in: never more than the layer-0 limits, so
    /// escalation always shrinks the window.
    pub fn stage_usable(&self) -> u64 {
        self.usable.min(self.max_input.min(self.l0_cap))
    }

    /// The raw window budget of a layer (layer 1 after an idle spell: 0.20 × usable). A layer
    /// never gets more than the one below it, so escalation always shrinks the window.
    pub fn raw_budget(&self, layer: u8, post_idle: bool) -> u64 {
        let stage = self.stage_usable() as f64;
        let layer1 = (self.usable as f64 * 0.40) as u64;
        let layer2 = ((stage * 0.50) as u64).min(layer1);
        let layer3 = ((stage * 0.55) as u64).min(layer2);
        match layer {
            0 | 1 if post_idle => (self.usable as f64 * 0.20) as u64,
            0 | 1 => layer1,
            2 => layer2,
            3 => layer3,
            _ => ((self.usable as f64 * 0.25) as u64)
                .clamp(2_000, 8_000)
                .min(layer3),
        }
    }

    /// The distilled prefix budget of a layer (layer 1 keeps its high-water mark).
    pub fn distilled_budget(&self, layer: u8) -> u64 {
        let stage = self.stage_usable() as f64;
        match layer {
            0 | 1 => ((self.usable as f64 * 0.25) as u64).max(self.distilled_high_water),
            2 => (stage * 0.25) as u64,
            3 => (stage * 0.15) as u64,
            _ => (stage * 0.15) as u64,
        }
    }
}

/// Quality penalty of a prompt that fills `tokens / window` of the window past the knee.
pub fn quality_multiplier(tokens: u64, window: u64, knee: f64) -> f64 {
    if window == 0 {
        return 1.0;
    }
    let fill = tokens as f64 / window as f64;
    if fill <= knee || knee >= 1.0 {
        return 1.0;
    }
    let over = (fill - knee) / (1.0 - knee);
    1.0 + 20.0 * over * over
}

/// The bust-or-continue gate of a layer-0 turn over its cap (reference §9.4): compress when
/// writing the compressed prompt once costs less than 0.85 × re-reading the whole one
/// (penalised past the quality knee). Two busts in a row stop compression; free-write
/// providers compress until then; without prices, never.
pub fn should_compress(budgets: &Budgets, current: u64, state: &ContextRecord) -> bool {
    if state.consecutive_busts >= 2 {
        return false;
    }
    if budgets.free_write {
        return true;
    }
    if budgets.read_per_token <= 0.0 && budgets.write_per_token <= 0.0 {
        return false;
    }
    let compressed =
        (budgets.distilled_budget(1) + budgets.raw_budget(1, false)).min(budgets.layer0_ceiling());
    let bust = compressed as f64 * budgets.write_per_token;
    let continuing = current as f64
        * budgets.read_per_token
        * quality_multiplier(current, budgets.window, budgets.knee);
    bust < BUST_FACTOR * continuing
}
