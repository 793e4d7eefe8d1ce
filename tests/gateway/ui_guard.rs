//! The guard of the dashboard and the management API over real HTTP: a rebound `Host`, a
//! foreign `Origin` and a write without `x-lore-request: 1` are refused; the CSP is on every
//! answer. (A non-loopback peer is refused too: unit-tested in `ui::guard`, since a test may
//! only reach loopback addresses.)

use lore_test_support::FakeUpstream;
use serde_json::json;

use crate::helpers::Gateway;
use crate::ui_helpers::raw;

#[test]
fn a_foreign_host_or_origin_or_an_unmarked_write_is_refused() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let own = format!("127.0.0.1:{}", gateway.port);
    let ok = raw(&gateway, "GET", "/ui", &[("host", &own)], b"");
    assert_eq!(ok.status, 200);
    let localhost = format!("localhost:{}", gateway.port);
    assert_eq!(
        raw(
            &gateway,
            "GET",
            "/api/v1/stats",
            &[("host", &localhost)],
            b""
        )
        .status,
        200
    );

    let rebound = format!("evil.example:{}", gateway.port);
    for path in ["/ui", "/api/v1/stats", "/api/v1/sessions", "/"] {
        let refused = raw(&gateway, "GET", path, &[("host", &rebound)], b"");
        assert_eq!(refused.status, 403, "{path}");
        assert_eq!(refused.json()["error"], "forbidden", "{path}");
    }
    let other_port = format!("127.0.0.1:{}", gateway.port.wrapping_add(1));
    assert_eq!(
        raw(&gateway, "GET", "/ui", &[("host", &other_port)], b"").status,
        403
    );

    let same_origin = format!("http://{own}");
    let body = json!({"text": "x"}).to_string();
    let foreign = raw(
        &gateway,
        "POST",
        "/api/v1/cards/try",
        &[
            ("host", &own),
            ("origin", "http://evil.example"),
            ("x-lore-request", "1"),
            ("content-type", "application/json"),
        ],
        body.as_bytes(),
    );
    assert_eq!(foreign.status, 403);
    assert!(
        foreign.json()["detail"]
            .as_str()
            .unwrap()
            .contains("another site")
    );
    let other_local_site = format!("http://127.0.0.1:{}", gateway.port.wrapping_add(1));
    assert_eq!(
        raw(
            &gateway,
            "GET",
            "/api/v1/stats",
            &[("host", &own), ("origin", &other_local_site)],
            b""
        )
        .status,
        403
    );
    assert_eq!(
        raw(
            &gateway,
            "GET",
            "/api/v1/stats",
            &[("host", &own), ("origin", &same_origin)],
            b""
        )
        .status,
        200
    );

    for (header, status) in [(None, 403), (Some("0"), 403), (Some("1"), 404)] {
        let mut headers = vec![("host", own.as_str()), ("origin", same_origin.as_str())];
        if let Some(value) = header {
            headers.push(("x-lore-request", value));
        }
        let response = raw(&gateway, "DELETE", "/api/v1/sessions/nope", &headers, b"");
        assert_eq!(response.status, status, "x-lore-request {header:?}");
    }
}

#[test]
fn every_answer_carries_the_strict_policy() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    for path in [
        "/ui",
        "/ui/assets/app.js",
        "/api/v1/stats",
        "/ui/sessions/missing",
    ] {
        let response = gateway.get(path);
        let csp = response
            .header("content-security-policy")
            .unwrap_or_default();
        assert!(
            csp.contains("default-src 'none'")
                && csp.contains("script-src 'self'")
                && !csp.contains("unsafe"),
            "{path}: {csp}"
        );
        assert_eq!(
            response.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
        assert_eq!(response.header("x-frame-options"), Some("DENY"), "{path}");
    }
}
