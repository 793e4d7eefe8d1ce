//! Prompt-cache oracle: a deterministic model of the providers' prompt caches.
//!
//! Tests use it to prove the gateway never busts the provider's prompt cache: if the
//! gateway re-serializes, reorders or edits any part of a cached prefix, the oracle
//! reports no cache read.
//!
//! * **Anthropic** (explicit breakpoints): the prompt is a sequence of blocks — each
//!   tool, the system prompt (a string is one block, an array is one block per entry),
//!   then every message content block (a string content is one block). Each block's
//!   canonical form is its compact JSON as sent (key order preserved) with every
//!   `cache_control` removed; its size is `ceil(chars / 4)` tokens. Blocks with a
//!   top-level `cache_control` are breakpoints. A request reads the longest prefix
//!   previously *written* (at an earlier request's breakpoint) that ends at one of its
//!   breakpoints or at one of the 20 blocks before it; it creates from there up to its
//!   last breakpoint; `input_tokens` is what follows the last breakpoint. Its own
//!   breakpoint prefixes are then written. Entries are keyed by (credential, model).
//! * **OpenAI** (automatic caching, Chat and Responses): the prompt is the
//!   concatenation of the blocks' canonical JSON; `cached` is the longest common prefix
//!   with any earlier request of the same key, rounded down to a multiple of 128 tokens
//!   (512 chars), and only when the prompt has at least 1024 tokens.

use serde_json::Value;
use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

/// How far before a breakpoint Anthropic looks for an earlier-written prefix.
const LOOKBACK_BLOCKS: usize = 20;
/// OpenAI caches in increments of this many tokens.
const OPENAI_INCREMENT_TOKENS: u64 = 128;
/// OpenAI only caches prompts of at least this many tokens.
const OPENAI_MIN_TOKENS: u64 = 1024;
/// Chars per fake token.
const CHARS_PER_TOKEN: u64 = 4;

/// The oracle's verdict on one LLM request, in provider terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheObservation {
    /// Request path (without query string).
    pub path: String,
    /// The reported input figure: Anthropic `usage.input_tokens` (uncached tail after the
    /// last breakpoint); OpenAI `prompt_tokens` / `input_tokens` (the whole prompt).
    pub input_tokens: u64,
    /// Anthropic `cache_read_input_tokens`; OpenAI `cached_tokens`.
    pub cache_read: u64,
    /// Anthropic `cache_creation_input_tokens`; always 0 for OpenAI.
    pub cache_creation: u64,
    /// The part of `cache_creation` written for one hour (breakpoints with `"ttl": "1h"`).
    pub cache_creation_1h: u64,
}

/// Token accounting of one prompt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PromptUsage {
    /// Anthropic: uncached tokens after the last breakpoint. OpenAI: whole prompt.
    pub input_tokens: u64,
    /// Tokens read from the cache.
    pub cache_read: u64,
    /// Tokens written to the cache (Anthropic only).
    pub cache_creation: u64,
    /// The part of `cache_creation` written for one hour.
    pub cache_creation_1h: u64,
    /// Total prompt tokens.
    pub total: u64,
}

/// Cache partition: (credential header value, model).
pub type CacheKey = (String, String);

/// One block of a prompt.
#[derive(Clone, Debug)]
struct Block {
    tag: String,
    json: String,
    tokens: u64,
    breakpoint: bool,
    /// The breakpoint asks for the 1-hour lifetime.
    one_hour: bool,
}

/// The cache state of one fake provider.
#[derive(Debug, Default)]
pub struct CacheOracle {
    anthropic: HashMap<CacheKey, HashSet<u64>>,
    openai: HashMap<CacheKey, HashSet<u64>>,
}

fn tokens_of(s: &str) -> u64 {
    (s.chars().count() as u64).div_ceil(CHARS_PER_TOKEN)
}

/// Removes every `cache_control` key, recursively (what the oracle ignores when it compares
/// prompts; tests and benchmarks compare request bytes the same way).
pub fn strip_cache_control(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.remove("cache_control");
            for child in map.values_mut() {
                strip_cache_control(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_cache_control),
        _ => {}
    }
}

fn block(tag: impl Into<String>, v: &Value) -> Block {
    let control = v.as_object().and_then(|m| m.get("cache_control"));
    let breakpoint = control.is_some_and(|c| !c.is_null());
    let one_hour = control.and_then(|c| c.get("ttl")).and_then(Value::as_str) == Some("1h");
    let mut canon = v.clone();
    strip_cache_control(&mut canon);
    let json = serde_json::to_string(&canon).unwrap_or_default();
    Block {
        tag: tag.into(),
        tokens: tokens_of(&json),
        json,
        breakpoint,
        one_hour,
    }
}

/// Anthropic prompt blocks: tools, system, message content blocks.
fn anthropic_blocks(body: &Value) -> Vec<Block> {
    let mut out = Vec::new();
    if let Some(tools) = body.get("tools").and_then(Value::as_array) {
        out.extend(tools.iter().map(|t| block("tool", t)));
    }
    match body.get("system") {
        Some(Value::Array(items)) => out.extend(items.iter().map(|b| block("system", b))),
        Some(s @ Value::String(_)) => out.push(block("system", s)),
        _ => {}
    }
    if let Some(messages) = body.get("messages").and_then(Value::as_array) {
        for m in messages {
            let tag = format!(
                "msg:{}",
                m.get("role").and_then(Value::as_str).unwrap_or("")
            );
            match m.get("content") {
                Some(Value::Array(items)) => out.extend(items.iter().map(|b| block(&tag, b))),
                Some(c) => out.push(block(&tag, c)),
                None => {}
            }
        }
    }
    out
}

/// OpenAI Chat prompt blocks: tools, then whole messages.
fn chat_blocks(body: &Value) -> Vec<Block> {
    let mut out = Vec::new();
    if let Some(tools) = body.get("tools").and_then(Value::as_array) {
        out.extend(tools.iter().map(|t| block("tool", t)));
    }
    if let Some(messages) = body.get("messages").and_then(Value::as_array) {
        out.extend(messages.iter().map(|m| block("msg", m)));
    }
    out
}

/// OpenAI Responses prompt blocks: tools, instructions, input items.
fn responses_blocks(body: &Value) -> Vec<Block> {
    let mut out = Vec::new();
    if let Some(tools) = body.get("tools").and_then(Value::as_array) {
        out.extend(tools.iter().map(|t| block("tool", t)));
    }
    if let Some(i) = body.get("instructions").filter(|i| !i.is_null()) {
        out.push(block("instructions", i));
    }
    match body.get("input") {
        Some(Value::Array(items)) => out.extend(items.iter().map(|i| block("input", i))),
        Some(i) if !i.is_null() => out.push(block("input", i)),
        _ => {}
    }
    out
}

/// Hash chain over blocks: element i identifies the block sequence `0..=i`.
fn prefix_hashes(blocks: &[Block]) -> Vec<u64> {
    let mut prev = 0u64;
    blocks
        .iter()
        .map(|b| {
            let mut h = DefaultHasher::new();
            prev.hash(&mut h);
            b.tag.hash(&mut h);
            b.json.hash(&mut h);
            prev = h.finish();
            prev
        })
        .collect()
}

/// Hashes of the concatenated prompt text at every 512-char boundary, plus total tokens.
fn openai_prefixes(blocks: &[Block]) -> (Vec<u64>, u64) {
    let step = OPENAI_INCREMENT_TOKENS * CHARS_PER_TOKEN;
    let mut h = DefaultHasher::new();
    let mut chars = 0u64;
    let mut out = Vec::new();
    for b in blocks {
        for c in b
            .tag
            .chars()
            .chain(std::iter::once('\n'))
            .chain(b.json.chars())
        {
            h.write_u32(u32::from(c));
            chars += 1;
            if chars.is_multiple_of(step) {
                out.push(h.finish());
            }
        }
    }
    (out, chars.div_ceil(CHARS_PER_TOKEN))
}

impl CacheOracle {
    /// A fresh, empty cache.
    pub fn new() -> CacheOracle {
        CacheOracle::default()
    }

    /// Anthropic Messages request. `commit = false` evaluates without writing (errors).
    pub fn anthropic(&mut self, key: &CacheKey, body: &Value, commit: bool) -> PromptUsage {
        let blocks = anthropic_blocks(body);
        let hashes = prefix_hashes(&blocks);
        let cum: Vec<u64> = blocks
            .iter()
            .scan(0u64, |acc, b| {
                *acc += b.tokens;
                Some(*acc)
            })
            .collect();
        let total = cum.last().copied().unwrap_or(0);
        let breakpoints: Vec<usize> = (0..blocks.len())
            .filter(|&i| blocks[i].breakpoint)
            .collect();
        let Some(&last) = breakpoints.last() else {
            return PromptUsage {
                input_tokens: total,
                total,
                ..PromptUsage::default()
            };
        };
        let written = self.anthropic.entry(key.clone()).or_default();
        let mut read = 0;
        for &b in &breakpoints {
            for j in b.saturating_sub(LOOKBACK_BLOCKS)..=b {
                if written.contains(&hashes[j]) {
                    read = read.max(cum[j]);
                }
            }
        }
        let cached_upto = cum[last];
        if commit {
            written.extend(breakpoints.iter().map(|&b| hashes[b]));
        }
        // Each written block lives as long as the first breakpoint at or after it asks.
        let mut one_hour = 0;
        let mut before = 0;
        for (i, &upto) in cum.iter().enumerate().take(last + 1) {
            let start = before;
            before = upto;
            if upto <= read {
                continue;
            }
            let covering = breakpoints
                .iter()
                .find(|&&b| b >= i)
                .map(|&b| blocks[b].one_hour);
            if covering == Some(true) {
                one_hour += upto - start.max(read);
            }
        }
        PromptUsage {
            input_tokens: total - cached_upto,
            cache_read: read,
            cache_creation: cached_upto - read,
            cache_creation_1h: one_hour,
            total,
        }
    }

    /// OpenAI Chat Completions request.
    pub fn openai_chat(&mut self, key: &CacheKey, body: &Value, commit: bool) -> PromptUsage {
        self.openai(key, &chat_blocks(body), commit)
    }

    /// OpenAI Responses request.
    pub fn openai_responses(&mut self, key: &CacheKey, body: &Value, commit: bool) -> PromptUsage {
        self.openai(key, &responses_blocks(body), commit)
    }

    fn openai(&mut self, key: &CacheKey, blocks: &[Block], commit: bool) -> PromptUsage {
        let (hashes, total) = openai_prefixes(blocks);
        let seen = self.openai.entry(key.clone()).or_default();
        let mut cached = 0;
        if total >= OPENAI_MIN_TOKENS {
            // Prefix matches are monotone: find the longest boundary seen before.
            if let Some(k) = hashes.iter().rposition(|h| seen.contains(h)) {
                cached = (k as u64 + 1) * OPENAI_INCREMENT_TOKENS;
            }
        }
        if commit {
            seen.extend(hashes);
        }
        PromptUsage {
            input_tokens: total,
            cache_read: cached,
            cache_creation: 0,
            cache_creation_1h: 0,
            total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key() -> CacheKey {
        ("sk-test".into(), "claude-x".into())
    }

    fn long(tag: &str, n: usize) -> String {
        format!("{tag}:{}", "x".repeat(n))
    }

    fn anthropic_req(messages: Value) -> Value {
        json!({
            "model": "claude-x",
            "system": [{"type": "text", "text": long("sys", 400), "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": "t", "description": long("tool", 100), "input_schema": {"type": "object"}}],
            "messages": messages,
        })
    }

    fn bp_text(t: &str) -> Value {
        json!({"type": "text", "text": t, "cache_control": {"type": "ephemeral"}})
    }

    #[test]
    fn identical_request_twice_is_full_read() {
        let mut o = CacheOracle::new();
        let req = anthropic_req(json!([{"role": "user", "content": [bp_text(&long("u1", 300))]}]));
        let first = o.anthropic(&key(), &req, true);
        assert_eq!(first.cache_read, 0);
        assert_eq!(first.cache_creation, first.total);
        assert_eq!(first.input_tokens, 0);
        let second = o.anthropic(&key(), &req, true);
        assert_eq!(second.cache_read, first.total);
        assert_eq!(second.cache_creation, 0);
        assert_eq!(second.input_tokens, 0);
    }

    #[test]
    fn moving_breakpoint_reads_old_prefix_and_creates_tail() {
        let mut o = CacheOracle::new();
        let u1 = long("u1", 300);
        let r1 = anthropic_req(json!([{"role": "user", "content": [bp_text(&u1)]}]));
        let first = o.anthropic(&key(), &r1, true);
        let r2 = anthropic_req(json!([
            {"role": "user", "content": [{"type": "text", "text": u1}]},
            {"role": "assistant", "content": [{"type": "text", "text": long("a1", 200)}]},
            {"role": "user", "content": [bp_text(&long("u2", 100)), {"type": "text", "text": "tail"}]},
        ]));
        let second = o.anthropic(&key(), &r2, true);
        assert_eq!(second.cache_read, first.total);
        assert!(second.cache_creation > 0);
        assert_eq!(
            second.cache_read + second.cache_creation + second.input_tokens,
            second.total
        );
        assert_eq!(
            second.input_tokens,
            tokens_of("{\"type\":\"text\",\"text\":\"tail\"}")
        );
    }

    #[test]
    fn changing_an_early_byte_busts_the_cache() {
        let mut o = CacheOracle::new();
        let req = anthropic_req(json!([{"role": "user", "content": [bp_text(&long("u1", 300))]}]));
        o.anthropic(&key(), &req, true);
        let mut changed = req.clone();
        changed["tools"][0]["description"] = json!(long("tooL", 100));
        let u = o.anthropic(&key(), &changed, true);
        assert_eq!(u.cache_read, 0);
        assert_eq!(u.cache_creation, u.total);
    }

    #[test]
    fn cache_control_position_and_whitespace_do_not_matter_but_key_does() {
        let mut o = CacheOracle::new();
        let req = anthropic_req(json!([{"role": "user", "content": [bp_text("hello")]}]));
        let first = o.anthropic(&key(), &req, true);
        // Same content re-sent with different cache_control attributes: still a read.
        let mut ttl = req.clone();
        ttl["messages"][0]["content"][0]["cache_control"] =
            json!({"type": "ephemeral", "ttl": "5m"});
        assert_eq!(o.anthropic(&key(), &ttl, true).cache_read, first.total);
        // Another credential shares nothing.
        let other = ("sk-other".to_string(), "claude-x".to_string());
        assert_eq!(o.anthropic(&other, &req, true).cache_read, 0);
    }

    #[test]
    fn system_only_breakpoint_and_no_breakpoint() {
        let mut o = CacheOracle::new();
        let req = anthropic_req(json!([{"role": "user", "content": "plain"}]));
        let a = o.anthropic(&key(), &req, true);
        let b = o.anthropic(&key(), &req, true);
        assert_eq!(a.cache_read, 0);
        assert_eq!(b.cache_read, a.cache_creation);
        assert_eq!(b.input_tokens, a.input_tokens);
        let none =
            json!({"model": "m", "system": "s", "messages": [{"role": "user", "content": "x"}]});
        let u = o.anthropic(&key(), &none, true);
        assert_eq!((u.cache_read, u.cache_creation), (0, 0));
        assert_eq!(u.input_tokens, u.total);
    }

    #[test]
    fn uncommitted_requests_write_nothing() {
        let mut o = CacheOracle::new();
        let req = anthropic_req(json!([{"role": "user", "content": [bp_text("hi")]}]));
        o.anthropic(&key(), &req, false);
        assert_eq!(o.anthropic(&key(), &req, true).cache_read, 0);
    }

    #[test]
    fn openai_prefix_caching_in_128_token_steps() {
        let mut o = CacheOracle::new();
        let k = ("Bearer sk".to_string(), "gpt".to_string());
        let sys = json!({"role": "system", "content": long("sys", 6000)});
        let r1 = json!({"model": "gpt", "messages": [sys, {"role": "user", "content": "a"}]});
        let first = o.openai_chat(&k, &r1, true);
        assert!(first.total >= 1024);
        assert_eq!(first.cache_read, 0);
        let r2 = json!({"model": "gpt", "messages": [sys, {"role": "user", "content": "b"}]});
        let second = o.openai_chat(&k, &r2, true);
        assert_eq!(second.cache_read % 128, 0);
        assert!(
            second.cache_read >= first.total - 128 - 2,
            "{second:?} vs {first:?}"
        );
        assert!(second.cache_read <= second.total);
        // Short prompts are never cached.
        let short = json!({"model": "gpt", "messages": [{"role": "user", "content": "a"}]});
        o.openai_chat(&k, &short, true);
        assert_eq!(o.openai_chat(&k, &short, true).cache_read, 0);
        // Responses: change the first byte, nothing cached.
        let r = json!({"model": "gpt", "instructions": long("i", 6000), "input": "x"});
        o.openai_responses(&k, &r, true);
        assert!(o.openai_responses(&k, &r, true).cache_read > 0);
        let r_changed = json!({"model": "gpt", "instructions": long("I", 6000), "input": "x"});
        assert_eq!(o.openai_responses(&k, &r_changed, true).cache_read, 0);
    }
}
