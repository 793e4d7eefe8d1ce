"""The real Claude Code and Codex CLIs through the real Lore gateway (scripts/e2e/run-cli-e2e).

The fake upstream answers `[[call:NAME {json}]]` in the last user message with a call of tool
NAME, and echoes the tool result the next request carries, so a real tool runs in the real CLI
and its output comes back through Lore. Every check reads what the gateway stored, through its
management API. Standard library only.
"""

import base64
import datetime
import json
import os
import subprocess
import sys
import time
import urllib.request

GATEWAY = os.environ["LORE_E2E_GATEWAY"]
DATA = os.environ["LORE_E2E_DATA"]
WORK = os.environ["LORE_E2E_WORK"]
LORE = os.environ["LORE_E2E_LORE"]
CLI_BIN = os.environ["LORE_E2E_CLI_BIN"]
PORT = GATEWAY.rsplit(":", 1)[1]

HOME = os.path.join(WORK, "home")
os.makedirs(os.path.join(HOME, ".codex"), exist_ok=True)

ENV = {
    "PATH": CLI_BIN + os.pathsep + os.environ.get("PATH", ""),
    "HOME": HOME,
    "CODEX_HOME": os.path.join(HOME, ".codex"),
    "LANG": "C.UTF-8",
    # Fake credentials: the fake upstream accepts anything; real ones are never used.
    "ANTHROPIC_API_KEY": "sk-ant-e2e-fake",
    "CODEX_API_KEY": "sk-e2e-fake",
    "OPENAI_API_KEY": "sk-e2e-fake",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "NO_COLOR": "1",
}

failures = []
passed = []


def check(condition, what, detail=""):
    print(("ok   " if condition else "FAIL ") + what)
    if condition:
        passed.append(what)
    if not condition:
        failures.append(what)
        if detail:
            print("     " + str(detail)[:2000])


def api(path):
    with urllib.request.urlopen(GATEWAY + path, timeout=10) as reply:
        return json.loads(reply.read())


def run(args, cwd, timeout=120):
    """Runs a command with the fake HOME; returns (exit code, stdout + stderr)."""
    done = subprocess.run(
        args,
        cwd=cwd,
        env=ENV,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done.returncode, done.stdout + done.stderr


def project(name):
    path = os.path.realpath(os.path.join(WORK, name))
    os.makedirs(path, exist_ok=True)
    return path


def sessions_of(path):
    return [s for s in api("/api/v1/sessions")["sessions"] if s["project"] == path]


def transcript(session_id):
    return json.dumps(api(f"/api/v1/sessions/{session_id}/messages"))


def one_session(path, protocol, *needles):
    """Waits for exactly one session of the project holding every needle; returns its id."""
    deadline = time.time() + 10
    found = []
    while time.time() < deadline:
        found = sessions_of(path)
        if len(found) == 1 and found[0]["protocol"] == protocol:
            text = transcript(found[0]["id"])
            if all(needle in text for needle in needles):
                return found[0]["id"], text
        time.sleep(0.2)
    text = transcript(found[0]["id"]) if found else ""
    check(False, f"one {protocol} session in {path} holding {needles}", (found, text[-1500:]))
    return None, text


def websocket_opens():
    with open(os.path.join(WORK, "gateway.log")) as log:
        return log.read().count("Responses WebSocket opened")


def lore(*args, cwd):
    return run([LORE, args[0], "--data-dir", DATA, *args[1:]], cwd)


# --- Claude Code through `lore run`: a real Bash tool call, then --continue.
claude_dir = project("claude-run")
tool_prompt = '[[call:Bash {"command": "echo lore-e2e-claude-tool", "description": "print a marker"}]]'
code, out = lore("run", "claude", "-p", tool_prompt, "--allowedTools", "Bash", cwd=claude_dir)
check(code == 0 and "lore-e2e-claude-tool" in out, "claude -p ran the Bash tool through lore run", out)
code, out = lore("run", "claude", "-p", "--continue", "second claude turn", cwd=claude_dir)
check(code == 0 and "second claude turn" in out, "claude -p --continue answered", out)
session, text = one_session(claude_dir, "anthropic", "lore-e2e-claude-tool", "second claude turn")
check(session is not None, "the tool call and --continue are one session with the right project")

# --- /compact in Claude Code, once the session has an observation log: answered by Lore from
# what it distilled (the memory workers run against the fake upstream's worker answers).
compact_dir = project("claude-compact")
for step in range(3):
    words = f"compact step {step}: we moved the tokenizer into src/lexer_{step}.rs and kept the grammar in docs/grammar.md"
    args = ["-p", words] if step == 0 else ["-p", "--continue", words]
    code, out = lore("run", "claude", *args, cwd=compact_dir)
    check(code == 0, f"claude turn {step} for /compact", out)
compact_session, _ = one_session(compact_dir, "anthropic", "compact step 2")
distilled = False
deadline = time.time() + 30
while compact_session and time.time() < deadline and not distilled:
    distilled = bool(api(f"/api/v1/sessions/{compact_session}/memory").get("distillations"))
    time.sleep(0.3)
check(distilled, "the Claude Code session has an observation log before /compact")
code, out = lore("run", "claude", "-p", "--continue", "/compact", cwd=compact_dir)
with open(os.path.join(WORK, "gateway.log")) as log:
    answered = "compaction answered from the observation logs" in log.read()
check(code == 0 and answered, "/compact in claude -p is answered by Lore from the observation logs", out)

# --- Claude Code through `lore setup` (its own settings.json), without lore run.
setup_dir = project("claude-setup")
code, out = lore("setup", "claude", "--url", GATEWAY, cwd=setup_dir)
check(code == 0, "lore setup claude", out)
code, out = run(["claude", "-p", "through settings.json"], setup_dir)
check(code == 0 and "through settings.json" in out, "claude -p works after lore setup alone", out)
holding = [s for s in api("/api/v1/sessions")["sessions"] if "through settings.json" in transcript(s["id"])]
check(len(holding) == 1, "the setup-only turn is one session", holding)
# Claude Code 2.1 states its directory in a system-role message (`# Environment … Primary
# working directory:`); without `lore run` there is no X-Lore-Project header to fall back on.
check(
    bool(holding) and holding[0]["project"] == setup_dir and not holding[0]["project_provisional"],
    "the setup-only Claude Code session is attributed to its working directory",
    holding,
)
if holding:
    prompts = api(f"/api/v1/sessions/{holding[0]['id']}/messages")["prompts"]
    check(
        bool(prompts) and prompts[0]["system_chars"] > 1000 and prompts[0]["tool_count"] > 0,
        "Claude Code's system prompt and tools are captured",
        [(p["system_chars"], p["tool_count"]) for p in prompts],
    )
code, out = lore("setup", "--undo", "claude", cwd=setup_dir)
settings = os.path.join(HOME, ".claude", "settings.json")
undone = not os.path.exists(settings) or "ANTHROPIC_BASE_URL" not in open(settings).read()
check(code == 0 and undone, "lore setup --undo claude removes the gateway from settings.json", out)

# --- Codex through `lore run`: a real exec_command call over its WebSocket (its first choice,
# bridged by the gateway to the upstream's HTTP stream), then resume --last.
codex_dir = project("codex-run")
opened = websocket_opens()
codex_exec = ["exec", "--skip-git-repo-check", "-m", "gpt-5-codex"]
tool_prompt = '[[call:exec_command {"cmd": "echo lore-e2e-codex-tool"}]]'
code, out = lore("run", "codex", *codex_exec, tool_prompt, cwd=codex_dir)
check(code == 0 and "lore-e2e-codex-tool" in out, "codex exec ran exec_command through lore run", out)
code, out = lore("run", "codex", *codex_exec, "resume", "--last", "second codex turn", cwd=codex_dir)
check(code == 0 and "second codex turn" in out, "codex exec resume --last answered", out)
check(websocket_opens() >= opened + 2, "codex exec spoke WebSocket to the gateway", websocket_opens() - opened)
codex_session, _ = one_session(codex_dir, "open_ai_responses", "lore-e2e-codex-tool", "second codex turn")
if codex_session:
    prompts = api(f"/api/v1/sessions/{codex_session}/messages")["prompts"]
    check(
        bool(prompts) and "Codex" in (prompts[0]["system"] or ""),
        "Codex's developer messages are captured as what the model was told",
        [p["system_chars"] for p in prompts],
    )

# --- Codex over plain HTTP: a provider of its own that does not offer WebSocket.
http_dir = project("codex-http")
opened = websocket_opens()
http_provider = (
    'model_providers.lorehttp={name="lore over http", base_url="' + GATEWAY + '/v1", '
    'env_key="OPENAI_API_KEY", wire_api="responses", supports_websockets=false}'
)
code, out = run(["codex", *codex_exec, "-c", http_provider, "-c", "model_provider=lorehttp", "codex over http"], http_dir)
check(code == 0 and "codex over http" in out, "codex exec works over HTTP", out)
check(websocket_opens() == opened, "that codex exec opened no WebSocket", websocket_opens() - opened)
one_session(http_dir, "open_ai_responses", "codex over http")

# --- Codex through `lore setup` (~/.codex/config.toml), without lore run.
codex_setup_dir = project("codex-setup")
code, out = lore("setup", "codex", "--url", GATEWAY, cwd=codex_setup_dir)
check(code == 0, "lore setup codex", out)
code, out = run(["codex", *codex_exec, "codex through config.toml"], codex_setup_dir)
check(code == 0 and "codex through config.toml" in out, "codex exec works after lore setup alone", out)
one_session(codex_setup_dir, "open_ai_responses", "codex through config.toml")
code, out = lore("setup", "--undo", "codex", cwd=codex_setup_dir)
check(code == 0, "lore setup --undo codex", out)

# --- Codex logged in with ChatGPT: `lore run` sends it to the ChatGPT backend route
# (/v1/codex/responses, upstream /backend-api/codex/responses). A made-up login, never a real one.
def fake_jwt(claims):
    part = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()
    return part({"alg": "none", "typ": "JWT"}) + "." + part(claims) + ".sig"


chatgpt_home = os.path.join(WORK, "chatgpt-codex")
os.makedirs(chatgpt_home, exist_ok=True)
token = fake_jwt({
    "email": "e2e@example.com",
    "exp": int(time.time()) + 86400,
    "https://api.openai.com/auth": {"chatgpt_plan_type": "plus", "chatgpt_account_id": "acc-e2e", "chatgpt_user_id": "user-e2e"},
})
with open(os.path.join(chatgpt_home, "auth.json"), "w") as auth:
    json.dump({
        "auth_mode": "chatgpt",
        "OPENAI_API_KEY": None,
        "tokens": {"id_token": token, "access_token": token, "refresh_token": "rt-e2e", "account_id": "acc-e2e"},
        "last_refresh": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
    }, auth)
chatgpt_dir = project("codex-chatgpt")
saved = dict(ENV)
ENV["CODEX_HOME"] = chatgpt_home
del ENV["CODEX_API_KEY"], ENV["OPENAI_API_KEY"]
code, out = lore("run", "codex", *codex_exec, "codex on a chatgpt login", cwd=chatgpt_dir)
ENV.clear()
ENV.update(saved)
check(
    code == 0 and "answered by the ChatGPT backend" in out,
    "codex with a ChatGPT login reaches the ChatGPT backend through lore run",
    out,
)
one_session(chatgpt_dir, "open_ai_responses", "codex on a chatgpt login", "answered by the ChatGPT backend")

print(f"{len(passed)} passed, {len(failures)} failed")
if failures:
    print(f"failed: {failures}")
    sys.exit(1)
