#![allow(clippy::unwrap_used)]

use super::*;

fn bearer(token: &str) -> Bearer {
    Bearer::from_authorization(&format!("Bearer {token}")).unwrap_or_else(|| panic!("{token}"))
}

#[test]
fn only_oauth_bearers_count_and_they_never_print() {
    assert!(Bearer::from_authorization("Bearer sk-ant-oat01-abc").is_some());
    assert!(Bearer::from_authorization("bearer  sk-ant-oat01-abc ").is_some());
    assert!(Bearer::from_authorization("Bearer sk-ant-api03-abc").is_none());
    assert!(Bearer::from_authorization("sk-ant-oat01-abc").is_none());
    assert!(Bearer::from_authorization("Basic sk-ant-oat01-abc").is_none());
    let token = bearer("sk-ant-oat01-secret");
    let printed = format!("{token:?}");
    assert!(!printed.contains("secret"), "{printed}");
    assert_eq!(token.account().len(), 16);
    assert!(!token.account().contains("secret"));
    assert_ne!(token.account(), bearer("sk-ant-oat01-other").account());
}

#[test]
fn an_account_is_polled_at_most_once_per_interval() {
    let settings = QuotaSettings::default();
    let mut book = QuotaBook::default();
    let t0 = Instant::now();
    let account = book.note(bearer("sk-ant-oat01-a"), t0);
    assert!(book.start_poll(&account, t0, &settings).is_some());
    // One at a time.
    assert!(
        book.start_poll(&account, t0 + Duration::from_secs(2), &settings)
            .is_none()
    );
    let reading = Reading {
        five_hour: 90.0,
        seven_day: 10.0,
    };
    book.finish_poll(&account, Ok(reading), t0, &settings);
    assert!(
        book.start_poll(&account, t0 + Duration::from_secs(299), &settings)
            .is_none()
    );
    assert!(
        book.start_poll(&account, t0 + Duration::from_secs(300), &settings)
            .is_some()
    );
    assert!((book.pressure(&account, t0, &settings) - 0.5).abs() < 1e-12);
}

#[test]
fn a_failure_is_retried_after_thirty_seconds() {
    let settings = QuotaSettings::default();
    let mut book = QuotaBook::default();
    let t0 = Instant::now();
    let account = book.note(bearer("sk-ant-oat01-a"), t0);
    assert!(book.start_poll(&account, t0, &settings).is_some());
    book.finish_poll(&account, Err("503".into()), t0, &settings);
    assert!(
        book.start_poll(&account, t0 + Duration::from_secs(29), &settings)
            .is_none()
    );
    assert!(
        book.start_poll(&account, t0 + Duration::from_secs(30), &settings)
            .is_some()
    );
    let status = book.status(t0, &settings);
    assert_eq!(status[0].failures, 1);
    assert_eq!(status[0].last_error.as_deref(), Some("503"));
    assert_eq!(status[0].pressure, 0.0);
}

#[test]
fn two_accounts_keep_a_second_between_calls() {
    let settings = QuotaSettings::default();
    let mut book = QuotaBook::default();
    let t0 = Instant::now();
    let a = book.note(bearer("sk-ant-oat01-a"), t0);
    let b = book.note(bearer("sk-ant-oat01-b"), t0);
    assert!(book.start_poll(&a, t0, &settings).is_some());
    assert!(
        book.start_poll(&b, t0 + Duration::from_millis(500), &settings)
            .is_none()
    );
    assert!(
        book.start_poll(&b, t0 + Duration::from_secs(1), &settings)
            .is_some()
    );
}

#[test]
fn background_work_pauses_at_ninety_five_percent_while_the_reading_is_fresh() {
    let settings = QuotaSettings::default();
    let mut book = QuotaBook::default();
    let t0 = Instant::now();
    let account = book.note(bearer("sk-ant-oat01-a"), t0);
    book.start_poll(&account, t0, &settings);
    book.finish_poll(
        &account,
        Ok(Reading {
            five_hour: 94.9,
            seven_day: 0.0,
        }),
        t0,
        &settings,
    );
    assert!(!book.paused(t0, &settings));
    book.finish_poll(
        &account,
        Ok(Reading {
            five_hour: 10.0,
            seven_day: 95.0,
        }),
        t0,
        &settings,
    );
    assert!(book.paused(t0, &settings));
    assert!(!book.paused(t0 + Duration::from_secs(3_601), &settings));
    assert_eq!(
        book.pressure(&account, t0 + Duration::from_secs(3_601), &settings),
        0.0
    );
}

#[test]
fn quiet_accounts_are_forgotten_with_their_bearer() {
    let mut book = QuotaBook::default();
    let t0 = Instant::now();
    book.note(bearer("sk-ant-oat01-a"), t0);
    book.tidy(t0 + Duration::from_secs(10), Duration::from_secs(5), false);
    assert!(book.status(t0, &QuotaSettings::default()).is_empty());
}

#[test]
fn the_usage_reply_is_read_leniently() {
    let body = br#"{"five_hour":{"utilization":61.0,"resets_at":"2026-01-28T07:59:59Z"},"seven_day":{"utilization":22},"extra_usage":{"is_enabled":false}}"#;
    assert_eq!(
        parse_usage(body).unwrap(),
        Reading {
            five_hour: 61.0,
            seven_day: 22.0
        }
    );
    let only_week = br#"{"five_hour":null,"seven_day":{"utilization":97.5}}"#;
    assert_eq!(parse_usage(only_week).unwrap().seven_day, 97.5);
    assert!(parse_usage(b"{}").is_err());
    assert!(parse_usage(b"not json").is_err());
}
