"""Parses the fake upstream's replies with the official SDKs (anthropic, openai).

Run by tests/sdk.rs with FAKE_UPSTREAM_URL set and this exact script queue:
Text, Text, ToolCall, Thinking, ToolCall, Text, Text, ToolCall, Text, Text, ToolCall,
ToolCall, Error(429), then ToolCall, Thinking, ToolCall, ToolCall, ToolCall, ToolCall,
ToolCall, Thinking for the strict section. Exits non-zero (assertion) on any mismatch.

The first part uses the SDKs' normal (lenient) parsing and stream helpers; the strict
part fetches raw bodies and validates them with pydantic against the SDK types, so a
missing required field or a wrong literal fails.
"""

import os

import anthropic
import openai

URL = os.environ["FAKE_UPSTREAM_URL"]
TOOL = {"name": "get_weather", "description": "w", "input_schema": {"type": "object"}}
FN = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
RFN = {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}
USER = [{"role": "user", "content": "hi"}]

a = anthropic.Anthropic(base_url=URL, api_key="sk-ant", max_retries=0)

m = a.messages.create(model="claude-x", max_tokens=10, messages=USER)
assert m.content[0].text == "alpha", m
assert m.usage.cache_read_input_tokens == 0

with a.messages.stream(model="claude-x", max_tokens=10, messages=USER) as s:
    text = "".join(s.text_stream)
    final = s.get_final_message()
assert text == "bravo charlie", text
assert final.content[0].text == "bravo charlie"
assert final.stop_reason == "end_turn"
assert final.usage.output_tokens >= 1

with a.messages.stream(model="claude-x", max_tokens=10, messages=USER, tools=[TOOL]) as s:
    final = s.get_final_message()
assert final.stop_reason == "tool_use", final
assert final.content[0].text == "Checking."
assert final.content[1].type == "tool_use"
assert final.content[1].input == {"city": "Paris", "days": 3}, final.content[1]
assert final.content[1].id == "toolu_1"

with a.messages.stream(model="claude-x", max_tokens=10, messages=USER) as s:
    final = s.get_final_message()
assert final.content[0].type == "thinking"
assert final.content[0].thinking == "Hmm, let me think about it."
assert final.content[0].signature == "sig123"
assert final.content[1].text == "Done."

m = a.messages.create(model="claude-x", max_tokens=10, messages=USER, tools=[TOOL])
assert m.content[0].input == {"city": "Paris", "days": 3}

o = openai.OpenAI(base_url=URL + "/v1", api_key="sk-oai", max_retries=0)

c = o.chat.completions.create(model="gpt-x", messages=USER)
assert c.choices[0].message.content == "delta"
assert c.usage.prompt_tokens_details.cached_tokens == 0

chunks = list(
    o.chat.completions.create(
        model="gpt-x", messages=USER, stream=True, stream_options={"include_usage": True}
    )
)
assert "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices) == "echo foxtrot"
assert chunks[-1].usage.total_tokens > 0

with o.chat.completions.stream(model="gpt-x", messages=USER, tools=[FN]) as s:
    for _ in s:
        pass
    final = s.get_final_completion()
call = final.choices[0].message.tool_calls[0]
assert final.choices[0].finish_reason == "tool_calls"
assert call.id == "call_1" and call.function.name == "get_weather"
assert call.function.arguments == '{"city":"Paris","days":3}', call

r = o.responses.create(model="gpt-x", input="hi")
assert r.output_text == "golf", r

with o.responses.stream(model="gpt-x", input="hi") as s:
    deltas = [e.delta for e in s if e.type == "response.output_text.delta"]
    final = s.get_final_response()
assert "".join(deltas) == "hotel india"
assert final.output_text == "hotel india"
assert final.usage.input_tokens_details.cached_tokens == 0

with o.responses.stream(model="gpt-x", input="hi", tools=[RFN]) as s:
    final = s.get_final_response()
fc = [i for i in final.output if i.type == "function_call"][0]
assert fc.call_id == "call_2" and fc.arguments == '{"city":"Paris","days":3}', fc

r = o.responses.create(model="gpt-x", input="hi", tools=[RFN])
assert [i.type for i in r.output] == ["message", "function_call"], r

try:
    a.messages.create(model="claude-x", max_tokens=10, messages=USER)
    raise AssertionError("expected RateLimitError")
except anthropic.RateLimitError as e:
    assert e.response.headers["retry-after"] == "3"
    assert e.response.headers["request-id"].startswith("req_fake_")


# ---- strict validation of raw bodies and every SSE event ----
import json
import urllib.request

import pydantic
from anthropic.types import Message, RawMessageStreamEvent
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent

A_HDR = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
O_HDR = {"authorization": "Bearer k"}


def post(path, body, headers):
    req = urllib.request.Request(
        URL + path,
        data=json.dumps(body).encode(),
        headers=dict(headers, **{"content-type": "application/json"}),
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        assert r.status == 200
        return r.read().decode()


def sse(path, body, headers):
    out = []
    for block in post(path, body, headers).split("\n\n"):
        data = [l[6:] for l in block.split("\n") if l.startswith("data: ")]
        if data and data[0] != "[DONE]":
            out.append(json.loads("\n".join(data)))
    return out


def strict(typ, value):
    pydantic.TypeAdapter(typ).validate_python(value, strict=False)


def raw(path, body, headers):
    return json.loads(post(path, body, headers))


ab = {"model": "claude-x", "max_tokens": 10, "messages": USER, "stream": True}
for _ in range(2):  # ToolCall, Thinking
    for ev in sse("/v1/messages", ab, A_HDR):
        if ev["type"] != "ping":  # the SDK skips pings; not part of the event union
            strict(RawMessageStreamEvent, ev)
strict(Message, raw("/v1/messages", dict(ab, stream=False), A_HDR))
cb = {"model": "gpt-x", "messages": USER}
strict(ChatCompletion, raw("/v1/chat/completions", cb, O_HDR))
for ev in sse("/v1/chat/completions", dict(cb, stream=True, stream_options={"include_usage": True}), O_HDR):
    strict(ChatCompletionChunk, ev)
rb = {"model": "gpt-x", "input": "hi"}
strict(Response, raw("/v1/responses", rb, O_HDR))
for _ in range(2):  # ToolCall, Thinking
    for ev in sse("/v1/responses", dict(rb, stream=True), O_HDR):
        strict(ResponseStreamEvent, ev)

print("sdk smoke ok")
