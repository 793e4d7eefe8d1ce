"""End-to-end test: the official anthropic and openai Python SDKs drive the Lore gateway.

The gateway runs in front of the fake upstream (tests/support). Each scenario checks the reply
the SDK parsed and then the conversation Lore captured, through the management API.
Usage: LORE_E2E_GATEWAY=http://127.0.0.1:PORT python sdk_e2e.py
"""

import json
import os
import sys
import time
import urllib.request

import anthropic
import openai

GATEWAY = os.environ["LORE_E2E_GATEWAY"].rstrip("/")
results = {"passed": 0, "failed": 0}


def check(condition, what):
    if condition:
        results["passed"] += 1
        print(f"ok      {what}")
    else:
        results["failed"] += 1
        print(f"FAILED  {what}")


def api(path):
    with urllib.request.urlopen(GATEWAY + path, timeout=10) as response:
        return json.load(response)


def transcript(session_id, expected_len):
    """The captured conversation, once it has `expected_len` messages (replies land just after)."""
    deadline = time.time() + 10
    while True:
        messages = api(f"/api/v1/sessions/{session_id}/messages")["messages"]
        if len(messages) >= expected_len or time.time() > deadline:
            return messages
        time.sleep(0.05)


def anthropic_scenarios():
    client = anthropic.Anthropic(base_url=GATEWAY, api_key="sk-ant-e2e-key", max_retries=0)
    model = "claude-sonnet-5"

    raw = client.messages.with_raw_response.create(
        model=model, max_tokens=64, messages=[{"role": "user", "content": "anthropic plain"}]
    )
    reply = raw.parse()
    session = raw.headers.get("x-lore-session-id")
    check(reply.content[0].text == "ok: anthropic plain", "anthropic: non-streaming reply parsed")
    check(session is not None, "anthropic: session header present")

    history = [
        {"role": "user", "content": "anthropic plain"},
        {"role": "assistant", "content": reply.content[0].text},
        {"role": "user", "content": "now stream"},
    ]
    with client.messages.stream(model=model, max_tokens=64, messages=history) as stream:
        streamed = "".join(stream.text_stream)
        final = stream.get_final_message()
    check(streamed == "ok: now stream", "anthropic: streamed text assembled by the SDK")
    check(final.stop_reason == "end_turn", "anthropic: final message has a stop reason")
    messages = transcript(session, 4)
    check([m["text"] for m in messages] == ["anthropic plain", "ok: anthropic plain", "now stream", "ok: now stream"],
          "anthropic: both turns captured once, in order")

    tools = [{"name": "get_time", "description": "Current time", "input_schema": {"type": "object", "properties": {}}}]
    history = [{"role": "user", "content": "what time is it? [[call:get_time]]"}]
    with client.messages.stream(model=model, max_tokens=64, tools=tools, messages=history) as stream:
        first = stream.get_final_message()
    calls = [block for block in first.content if block.type == "tool_use"]
    check(first.stop_reason == "tool_use" and len(calls) == 1 and calls[0].name == "get_time",
          "anthropic: streamed tool call parsed")
    history.append({"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in first.content]})
    history.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": calls[0].id, "content": "12:00"}]})
    raw = client.messages.with_raw_response.create(model=model, max_tokens=64, tools=tools, messages=history)
    second = raw.parse()
    check(second.stop_reason == "end_turn", "anthropic: tool result answered")
    messages = transcript(raw.headers.get("x-lore-session-id"), 4)
    kinds = [[part["type"] for part in m["parts"]] for m in messages]
    check(kinds[1] == ["tool_call"] and kinds[2] == ["tool_result"], "anthropic: tool round trip captured with pairing")
    check(json.loads(messages[1]["parts"][0]["arguments"]) == calls[0].input, "anthropic: tool arguments captured exactly")


def openai_scenarios():
    client = openai.OpenAI(base_url=GATEWAY + "/v1", api_key="sk-openai-e2e-key", max_retries=0)
    model = "gpt-4o"

    raw = client.chat.completions.with_raw_response.create(
        model=model, messages=[{"role": "user", "content": "openai plain"}]
    )
    completion = raw.parse()
    session = raw.headers.get("x-lore-session-id")
    check(completion.choices[0].message.content == "ok: openai plain", "openai chat: non-streaming reply parsed")

    history = [
        {"role": "user", "content": "openai plain"},
        {"role": "assistant", "content": completion.choices[0].message.content},
        {"role": "user", "content": "stream it"},
    ]
    stream = client.chat.completions.create(model=model, messages=history, stream=True, stream_options={"include_usage": True})
    pieces, usage = [], None
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        if chunk.usage:
            usage = chunk.usage
    check("".join(pieces) == "ok: stream it", "openai chat: streamed deltas assembled")
    check(usage is not None and usage.prompt_tokens > 0, "openai chat: usage chunk relayed")
    messages = transcript(session, 4)
    check([m["text"] for m in messages] == ["openai plain", "ok: openai plain", "stream it", "ok: stream it"],
          "openai chat: both turns captured once, in order")

    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}}}]
    history = [{"role": "user", "content": "look it up [[call:lookup]]"}]
    first = client.chat.completions.create(model=model, messages=history, tools=tools)
    call = first.choices[0].message.tool_calls[0]
    check(first.choices[0].finish_reason == "tool_calls" and call.function.name == "lookup", "openai chat: tool call parsed")
    history.append(first.choices[0].message.model_dump(exclude_none=True))
    history.append({"role": "tool", "tool_call_id": call.id, "content": "found it"})
    raw = client.chat.completions.with_raw_response.create(model=model, messages=history, tools=tools, stream=True)
    text = "".join(chunk.choices[0].delta.content or "" for chunk in raw.parse() if chunk.choices)
    check(text.startswith("ok:"), "openai chat: streamed answer after the tool result")
    messages = transcript(raw.headers.get("x-lore-session-id"), 4)
    roles = [m["role"] for m in messages]
    check(roles == ["user", "assistant", "tool", "assistant"], "openai chat: tool round trip captured")

    raw = client.responses.with_raw_response.create(model="gpt-5", input="responses plain")
    response = raw.parse()
    check(response.output_text == "ok: responses plain", "openai responses: non-streaming reply parsed")
    events = list(client.responses.create(model="gpt-5", input="responses stream", stream=True))
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    check(deltas == "ok: responses stream" and events[-1].type == "response.completed", "openai responses: stream parsed")
    messages = transcript(raw.headers.get("x-lore-session-id"), 2)
    check([m["text"] for m in messages] == ["responses plain", "ok: responses plain"], "openai responses: captured")


def wait_searchable(query):
    """True once a BM25 hit holds `query` (any vector neighbour would answer hybrid recall)."""
    deadline = time.time() + 10
    while time.time() < deadline:
        results = api(f"/api/v1/recall?q={query}&mode=bm25")["results"]
        if any(query in r["snippet"] for r in results):
            return True
        time.sleep(0.1)
    return False


def recall_scenarios():
    """A model that calls only `recall` gets the answer inside the same streamed response."""
    fact = "The release train leaves on Thursdays from branch rel-42."
    a = anthropic.Anthropic(base_url=GATEWAY, api_key="sk-ant-e2e-memory", max_retries=0)
    a.messages.create(model="claude-sonnet-5", max_tokens=64, messages=[{"role": "user", "content": fact}])
    check(wait_searchable("rel-42"), "recall: the fact is searchable")
    ask = 'when does the train leave? [[call:recall {"query": "release train rel-42"}]]'

    tools = [{"name": "get_time", "description": "Current time", "input_schema": {"type": "object", "properties": {}}}]
    client = anthropic.Anthropic(base_url=GATEWAY, api_key="sk-ant-e2e-recall", max_retries=0)
    with client.messages.stream(model="claude-sonnet-5", max_tokens=64, tools=tools,
                                messages=[{"role": "user", "content": ask}]) as stream:
        final = stream.get_final_message()
    kinds = [block.type for block in final.content]
    check(kinds == ["text", "text"] and final.stop_reason == "end_turn",
          f"anthropic recall: one streamed message, marker then answer, no tool call ({kinds}, {final.stop_reason})")
    check(final.content[0].text.startswith("\U0001F4DA Searching all archives"), "anthropic recall: marker shown")
    check("rel-42" in final.content[1].text, "anthropic recall: the answer used the recall result")

    o = openai.OpenAI(base_url=GATEWAY + "/v1", api_key="sk-openai-e2e-recall", max_retries=0)
    chat_tools = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}}}]
    chunks = list(o.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": ask}],
                                             tools=chat_tools, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    calls = [c for c in chunks if c.choices and c.choices[0].delta.tool_calls]
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    check(not calls and finishes == ["stop"], f"openai recall: one stream, no tool call ({finishes})")
    check("\U0001F4DA Searching all archives" in text and "rel-42" in text.split("\U0001F4DA", 1)[1],
          "openai recall: marker then an answer that used the recall result")

    events = list(o.responses.create(model="gpt-5", input=ask, stream=True, tools=[
        {"type": "function", "name": "lookup", "parameters": {"type": "object", "properties": {}}}]))
    completed = [e for e in events if e.type == "response.completed"]
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    calls = [e for e in events if e.type == "response.output_item.added" and e.item.type == "function_call"]
    check(len(completed) == 1 and events[-1].type == "response.completed" and not calls,
          "openai responses recall: one stream, no function call")
    check("\U0001F4DA Searching all archives" in deltas and "rel-42" in deltas.split("\U0001F4DA", 1)[1],
          "openai responses recall: marker then an answer that used the recall result")

    history = [{"role": "user", "content": ask}, {"role": "assistant", "content": text},
               {"role": "user", "content": "thanks"}]
    reply = o.chat.completions.create(model="gpt-4o", messages=history, tools=chat_tools)
    check(reply.choices[0].message.content == "ok: thanks", "openai recall: the next turn goes through")


def main():
    for scenario in (anthropic_scenarios, openai_scenarios, recall_scenarios):
        try:
            scenario()
        except Exception as error:  # a crash is a failure with its reason, not a stack of noise
            results["failed"] += 1
            print(f"FAILED  {scenario.__name__} raised {type(error).__name__}: {error}")
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] or not results["passed"] else 0


if __name__ == "__main__":
    sys.exit(main())
