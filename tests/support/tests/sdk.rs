//! Optional conformance check with the official Python SDKs: set `LORE_SDK_PYTHON` to
//! a Python interpreter that has `anthropic` and `openai` installed; skipped otherwise.

use lore_test_support::{FakeUpstream, Script};
use serde_json::json;

fn tool(id: &str, text: Option<&str>) -> Script {
    Script::ToolCall {
        name: "get_weather".into(),
        id: id.into(),
        arguments: json!({"city": "Paris", "days": 3}),
        text: text.map(str::to_string),
    }
}

#[test]
fn official_sdks_parse_every_shape() {
    let Ok(python) = std::env::var("LORE_SDK_PYTHON") else {
        // scripts/test always sets it (and LORE_REQUIRE_SDK), so CI never skips this check.
        assert!(
            std::env::var_os("LORE_REQUIRE_SDK").is_none(),
            "LORE_REQUIRE_SDK is set but LORE_SDK_PYTHON is not; run scripts/setup-python"
        );
        eprintln!(
            "LORE_SDK_PYTHON not set: skipping the Python SDK conformance check (scripts/test runs it)"
        );
        return;
    };
    let up = FakeUpstream::start();
    for s in [
        Script::Text("alpha".into()),
        Script::Text("bravo charlie".into()),
        tool("toolu_1", Some("Checking.")),
        Script::Thinking {
            thinking: "Hmm, let me think about it.".into(),
            signature: "sig123".into(),
            text: "Done.".into(),
        },
        tool("toolu_1", None),
        Script::Text("delta".into()),
        Script::Text("echo foxtrot".into()),
        tool("call_1", None),
        Script::Text("golf".into()),
        Script::Text("hotel india".into()),
        tool("call_2", Some("Calling.")),
        tool("call_3", Some("Calling.")),
        Script::Error {
            status: 429,
            body: json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}}),
            headers: vec![("retry-after".into(), "3".into())],
        },
        // Strict section.
        tool("toolu_2", Some("Checking.")),
        Script::Thinking {
            thinking: "t".into(),
            signature: "s".into(),
            text: "x".into(),
        },
        tool("toolu_3", Some("Checking.")),
        tool("call_4", Some("Calling.")),
        tool("call_5", Some("Calling.")),
        tool("call_6", Some("Calling.")),
        tool("call_7", Some("Calling.")),
        Script::Thinking {
            thinking: "t".into(),
            signature: "s".into(),
            text: "x".into(),
        },
    ] {
        up.push(s);
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sdk_smoke.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .env("FAKE_UPSTREAM_URL", up.url())
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "SDK smoke failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(up.pending_scripts(), 0);
}
