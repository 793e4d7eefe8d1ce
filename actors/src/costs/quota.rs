//! OAuth quota pressure for Claude Code subscription sessions: the bearer (in memory only),
//! when each account may be asked again, what the usage endpoint said, and the poll itself.
//!
//! Reference §20: `GET https://api.anthropic.com/api/oauth/usage` with
//! `anthropic-beta: oauth-2025-04-20` and the session's own bearer, at most once per 5 minutes
//! per account (30 s after a failure, at least 1 s between any two calls, 10 s timeout). The
//! pressure comes from the fuller of the 5-hour and 7-day windows; background work pauses while
//! a reading of the last hour is at 95 % or more. An account is the SHA-256 of its bearer; the
//! bearer itself is kept only to make the next poll, never logged (its `Debug` is redacted),
//! never serialized, never stored.

use std::collections::HashMap;
use std::fmt;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::throttle::quota_pressure;

/// The prefix of Claude Code's OAuth access tokens.
const OAUTH_PREFIX: &str = "sk-ant-oat";
/// Largest usage reply read.
const BODY_LIMIT: usize = 64 * 1024;

/// An OAuth access token. In memory only.
#[derive(Clone, PartialEq, Eq)]
pub struct Bearer(String);

impl Bearer {
    /// The bearer of an `authorization` header value, when it is a Claude Code OAuth token
    /// (`Bearer sk-ant-oat…`); API keys and other schemes give `None`.
    pub fn from_authorization(value: &str) -> Option<Bearer> {
        let (scheme, token) = value.trim().split_once(' ')?;
        let token = token.trim();
        (scheme.eq_ignore_ascii_case("bearer") && token.starts_with(OAUTH_PREFIX))
            .then(|| Bearer(token.to_string()))
    }

    /// The account this token belongs to: a one-way fingerprint (16 hex digits).
    pub fn account(&self) -> String {
        let digest = Sha256::digest(self.0.as_bytes());
        hex::encode(&digest[..8])
    }
}

impl fmt::Debug for Bearer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Bearer(<redacted>)")
    }
}

/// Where and how often the usage endpoint is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaSettings {
    /// False with `LORE_QUOTA=off`.
    pub enabled: bool,
    /// The usage endpoint (`LORE_QUOTA_URL`).
    pub url: String,
    /// Between two polls of one account after a success.
    pub interval: Duration,
    /// Between two polls of one account after a failure.
    pub retry_after_failure: Duration,
    /// Between any two polls.
    pub min_gap: Duration,
    /// Deadline of one poll.
    pub timeout: Duration,
    /// Utilisation (percent) from which background work pauses.
    pub pause_at_percent: f64,
    /// How long a reading counts.
    pub reading_valid_for: Duration,
}

impl Default for QuotaSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            url: "https://api.anthropic.com/api/oauth/usage".into(),
            interval: Duration::from_secs(300),
            retry_after_failure: Duration::from_secs(30),
            min_gap: Duration::from_secs(1),
            timeout: Duration::from_secs(10),
            pause_at_percent: 95.0,
            reading_valid_for: Duration::from_secs(3_600),
        }
    }
}

/// What the usage endpoint said (percent used per window).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// The 5-hour window.
    pub five_hour: f64,
    /// The 7-day window.
    pub seven_day: f64,
}

#[derive(Debug)]
struct Account {
    bearer: Bearer,
    reading: Option<(Reading, Instant)>,
    next_due: Instant,
    in_flight: bool,
    polls: u64,
    failures: u64,
    last_error: Option<String>,
    last_seen: Instant,
}

/// One account as the API shows it (no bearer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccountStatus {
    /// The account's fingerprint.
    pub account: String,
    /// Percent used of the 5-hour window, from the latest valid reading.
    pub five_hour_percent: Option<f64>,
    /// Percent used of the 7-day window.
    pub seven_day_percent: Option<f64>,
    /// The quota pressure (0–1).
    pub pressure: f64,
    /// Age of the reading, ms.
    pub reading_age_ms: Option<u64>,
    /// Polls answered.
    pub polls: u64,
    /// Polls that failed.
    pub failures: u64,
    /// The latest failure.
    pub last_error: Option<String>,
}

/// The accounts seen, their readings and poll schedule. In memory only.
#[derive(Debug, Default)]
pub struct QuotaBook {
    accounts: HashMap<String, Account>,
    last_call: Option<Instant>,
}

impl QuotaBook {
    /// Notes a request's bearer; returns its account.
    pub fn note(&mut self, bearer: Bearer, now: Instant) -> String {
        let account = bearer.account();
        let entry = self
            .accounts
            .entry(account.clone())
            .or_insert_with(|| Account {
                bearer: bearer.clone(),
                reading: None,
                next_due: now,
                in_flight: false,
                polls: 0,
                failures: 0,
                last_error: None,
                last_seen: now,
            });
        entry.bearer = bearer;
        entry.last_seen = now;
        account
    }

    /// The bearer to poll `account` with, when a poll is due now; the poll is then counted as
    /// started (one at a time per account, [`QuotaSettings::min_gap`] between any two).
    pub fn start_poll(
        &mut self,
        account: &str,
        now: Instant,
        settings: &QuotaSettings,
    ) -> Option<Bearer> {
        if self
            .last_call
            .is_some_and(|last| now.duration_since(last) < settings.min_gap)
        {
            return None;
        }
        let entry = self.accounts.get_mut(account)?;
        if entry.in_flight || now < entry.next_due {
            return None;
        }
        entry.in_flight = true;
        self.last_call = Some(now);
        Some(entry.bearer.clone())
    }

    /// Records how a poll of `account` ended and when the next one is due.
    pub fn finish_poll(
        &mut self,
        account: &str,
        result: Result<Reading, String>,
        now: Instant,
        settings: &QuotaSettings,
    ) {
        let Some(entry) = self.accounts.get_mut(account) else {
            return;
        };
        entry.in_flight = false;
        match result {
            Ok(reading) => {
                entry.polls += 1;
                entry.reading = Some((reading, now));
                entry.last_error = None;
                entry.next_due = now + settings.interval;
            }
            Err(why) => {
                entry.failures += 1;
                entry.last_error = Some(why);
                entry.next_due = now + settings.retry_after_failure;
            }
        }
    }

    fn valid_reading(
        &self,
        account: &str,
        now: Instant,
        settings: &QuotaSettings,
    ) -> Option<(Reading, Duration)> {
        let (reading, at) = self.accounts.get(account)?.reading?;
        let age = now.saturating_duration_since(at);
        (age <= settings.reading_valid_for).then_some((reading, age))
    }

    /// The quota pressure of `account` (0 without a valid reading).
    pub fn pressure(&self, account: &str, now: Instant, settings: &QuotaSettings) -> f64 {
        self.valid_reading(account, now, settings)
            .map_or(0.0, |(r, _)| quota_pressure(r.five_hour, r.seven_day))
    }

    /// The pressure of every account with a valid reading above zero.
    pub fn pressures(&self, now: Instant, settings: &QuotaSettings) -> HashMap<String, f64> {
        self.accounts
            .keys()
            .map(|account| (account.clone(), self.pressure(account, now, settings)))
            .filter(|(_, pressure)| *pressure > 0.0)
            .collect()
    }

    /// True while any account's valid reading is at the pause threshold or above.
    pub fn paused(&self, now: Instant, settings: &QuotaSettings) -> bool {
        self.accounts.keys().any(|account| {
            self.valid_reading(account, now, settings)
                .is_some_and(|(r, _)| r.five_hour.max(r.seven_day) >= settings.pause_at_percent)
        })
    }

    /// Every account, for the API.
    pub fn status(&self, now: Instant, settings: &QuotaSettings) -> Vec<AccountStatus> {
        let mut out: Vec<AccountStatus> = self
            .accounts
            .iter()
            .map(|(account, entry)| {
                let reading = self.valid_reading(account, now, settings);
                AccountStatus {
                    account: account.clone(),
                    five_hour_percent: reading.map(|(r, _)| r.five_hour),
                    seven_day_percent: reading.map(|(r, _)| r.seven_day),
                    pressure: self.pressure(account, now, settings),
                    reading_age_ms: reading.map(|(_, age)| age.as_millis() as u64),
                    polls: entry.polls,
                    failures: entry.failures,
                    last_error: entry.last_error.clone(),
                }
            })
            .collect();
        out.sort_by(|a, b| a.account.cmp(&b.account));
        out
    }

    /// Forgets accounts (and their bearers) not seen for `quiet`; clears polls that were in
    /// flight when the tracker restarted.
    pub fn tidy(&mut self, now: Instant, quiet: Duration, restarted: bool) {
        self.accounts
            .retain(|_, entry| now.saturating_duration_since(entry.last_seen) <= quiet);
        if restarted {
            for entry in self.accounts.values_mut() {
                entry.in_flight = false;
            }
        }
    }
}

#[derive(Deserialize)]
struct Window {
    utilization: Option<f64>,
}

#[derive(Deserialize)]
struct UsageReply {
    five_hour: Option<Window>,
    seven_day: Option<Window>,
}

/// Reads the usage endpoint's reply (`five_hour.utilization`, `seven_day.utilization`, in
/// percent; a missing window counts as 0, but at least one must be there).
pub fn parse_usage(body: &[u8]) -> Result<Reading, String> {
    let reply: UsageReply = serde_json::from_slice(body)
        .map_err(|err| format!("the quota reply is not the expected JSON: {err}"))?;
    let five = reply.five_hour.and_then(|w| w.utilization);
    let seven = reply.seven_day.and_then(|w| w.utilization);
    if five.is_none() && seven.is_none() {
        return Err("the quota reply has neither five_hour nor seven_day utilization".into());
    }
    Ok(Reading {
        five_hour: five.unwrap_or(0.0),
        seven_day: seven.unwrap_or(0.0),
    })
}

/// Asks the usage endpoint with `bearer`. Errors name the endpoint and the status, never the
/// bearer.
pub async fn poll(
    client: &awc::Client,
    settings: &QuotaSettings,
    bearer: &Bearer,
) -> Result<Reading, String> {
    let mut response = client
        .get(settings.url.as_str())
        .insert_header(("authorization", format!("Bearer {}", bearer.0)))
        .insert_header(("anthropic-beta", "oauth-2025-04-20"))
        .insert_header(("accept", "application/json"))
        .timeout(settings.timeout)
        .send()
        .await
        .map_err(|err| format!("the quota endpoint could not be reached: {err}"))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("the quota endpoint answered {status}"));
    }
    let body = response
        .body()
        .limit(BODY_LIMIT)
        .await
        .map_err(|err| format!("the quota reply could not be read: {err}"))?;
    parse_usage(&body)
}

#[cfg(test)]
#[path = "quota_tests.rs"]
mod tests;
