#!/usr/bin/env python3
"""A scripted model server for the agent CLI tests: loopback only, Python 3 standard library.

It speaks just enough of three model APIs to drive the real agent CLIs through a script:
  - Anthropic Messages   POST /v1/messages                       (Claude Code; SSE when "stream")
  - OpenAI Responses     POST /v1/responses, /responses          (Codex CLI; SSE when "stream")
  - Gemini               POST .../models/M:generateContent        (Gemini CLI)
                         POST .../models/M:streamGenerateContent  (SSE with alt=sse)

What the model answers is data: a scenario file (JSON, see tests/agents/scenarios/). A
scenario is a list of rules; each request is matched against them and answered by one step:
  {"rules": [
     {"name": "...",
      "api": "anthropic|openai|gemini",            optional: only requests of that API
      "match": ["regex", ...],                     every one found in the request's user text
      "not": ["regex", ...],                       none of them found there
      "match_history": ["regex", ...],             every one found in the whole conversation
                                                   (system prompt and tool results included)
      "capture": {"var": "regex with one group"},  from the user text; ${var} in the steps
      "capture_history": {"var": "regex"},         from everything, tool results included
                                                   (the last match wins)
      "steps": [STEP, ...]}],
   "default": STEP}                                what an unmatched request gets
The step is picked by how many answers the model already gave in this conversation (the
request carries the whole conversation, so the server keeps no state and parallel agents do
not disturb each other); past the last step, the last one is repeated. A STEP is
  {"text": "..."}                                  a final answer
  {"tool": "NAME", "input": {...}, "text": "..."}  one tool call (text optional, said first);
                                                   an "input" that is a string is a freeform
                                                   tool call (Codex's apply_patch)
  {"cases": [{"history": "regex", ...STEP}, ..., STEP]}   the first case whose regex is found
                                                   in the conversation (tool results included);
                                                   a case without "history" always matches
Strings in steps expand ${var} (captures, plus ${today} = YYYY-MM-DD in UTC).

Usage: model_server.py --scenario FILE [--port 0] [--port-file FILE] [--log FILE.jsonl] [--dump-dir DIR]
It binds 127.0.0.1 only, prints "listening on http://127.0.0.1:PORT" and writes the port to
--port-file (atomically) once it accepts connections. The log holds one JSON line per request:
the API, the rule and step it matched (or "unmatched"), the tool names the client offered.
"""
import argparse
import datetime
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCENARIO = {}
LOG_PATH = None
DUMP_DIR = None
LOG_LOCK = threading.Lock()
COUNTER = [0]
DUMPS = [0]
COUNTER_LOCK = threading.Lock()


def next_id(prefix):
    with COUNTER_LOCK:
        COUNTER[0] += 1
        return "%s_%06d" % (prefix, COUNTER[0])


def log(entry):
    if not LOG_PATH:
        return
    entry["ts"] = time.time()
    line = json.dumps(entry) + "\n"
    with LOG_LOCK:
        with open(LOG_PATH, "a", encoding="utf-8") as f:
            f.write(line)


def text_of(value):
    """Every string inside a JSON value, joined: tool results come in many shapes."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(text_of(v) for v in value)
    if isinstance(value, dict):
        return "\n".join(text_of(v) for v in value.values())
    return ""


# ---------------------------------------------------------------- reading the conversation
class Conversation:
    """What the server needs of a request, whatever the API: the user's text (prompts, not
    tool results), everything said so far, how many answers the model gave, the tools offered."""

    def __init__(self):
        self.user_text = []
        self.history = []
        self.model_turns = 0
        self.tools = []


def read_anthropic(body):
    c = Conversation()
    c.history.append(text_of(body.get("system", "")))
    for m in body.get("messages", []):
        content = m.get("content")
        if m.get("role") == "assistant":
            c.model_turns += 1
            c.history.append(text_of(content))
            continue
        if isinstance(content, str):
            c.user_text.append(content)
            c.history.append(content)
            continue
        for block in content or []:
            if block.get("type") == "text":
                c.user_text.append(block.get("text", ""))
            c.history.append(text_of(block.get("content", block.get("text", ""))))
    c.tools = [t.get("name", "") for t in body.get("tools", []) or []]
    return c


def read_openai(body):
    c = Conversation()
    c.history.append(text_of(body.get("instructions", "")))
    items = body.get("input", [])
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    said = False  # an answer's text and its tool call come back as two items: one answer
    for it in items:
        kind = it.get("type", "message")
        if kind in ("function_call", "custom_tool_call", "local_shell_call") and said:
            said = False
            c.history.append(text_of(it.get("arguments", it.get("input", it.get("action", "")))))
            continue
        said = kind == "message" and it.get("role") == "assistant"
        if kind == "message":
            if it.get("role") == "assistant":
                c.model_turns += 1
                c.history.append(text_of(it.get("content")))
            elif it.get("role") == "user":
                t = text_of(it.get("content"))
                c.user_text.append(t)
                c.history.append(t)
            else:
                c.history.append(text_of(it.get("content")))
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            c.model_turns += 1
            c.history.append(text_of(it.get("arguments", it.get("input", it.get("action", "")))))
        elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            c.history.append(text_of(it.get("output", "")))
    c.tools = [t.get("name", t.get("type", "")) for t in body.get("tools", []) or []]
    return c


def read_gemini(body):
    c = Conversation()
    c.history.append(text_of(body.get("systemInstruction", body.get("system_instruction", ""))))
    for content in body.get("contents", []):
        parts = content.get("parts", []) or []
        if content.get("role") == "model":
            # one answer may come back as several contents (text, then a call)
            if any("functionCall" in p or "text" in p for p in parts):
                c.model_turns += 1
            c.history.append(text_of(parts))
            continue
        for p in parts:
            if "text" in p:
                c.user_text.append(p["text"])
                c.history.append(p["text"])
            elif "functionResponse" in p:
                c.history.append(text_of(p["functionResponse"].get("response", {})))
    for t in body.get("tools", []) or []:
        for d in t.get("functionDeclarations", t.get("function_declarations", [])) or []:
            c.tools.append(d.get("name", ""))
    return c


# ---------------------------------------------------------------- picking the answer
def expand(value, env):
    if isinstance(value, str):
        return re.sub(r"\$\{(\w+)\}", lambda m: env.get(m.group(1), m.group(0)), value)
    if isinstance(value, list):
        return [expand(v, env) for v in value]
    if isinstance(value, dict):
        return {k: expand(v, env) for k, v in value.items()}
    return value


def choose(api, conv):
    """(rule name, step index, step, captures) for a conversation, the step expanded."""
    user = "\n".join(conv.user_text)
    history = "\n".join(conv.history)
    for rule in SCENARIO.get("rules", []):
        if rule.get("api") and rule["api"] != api:
            continue
        if not all(re.search(p, user) for p in rule.get("match", [])):
            continue
        if any(re.search(p, user) for p in rule.get("not", [])):
            continue
        if not all(re.search(p, history) for p in rule.get("match_history", [])):
            continue
        env = {"today": datetime.datetime.utcnow().strftime("%Y-%m-%d")}
        for var, pattern in rule.get("capture", {}).items():
            m = re.search(pattern, user)
            if m:
                env[var] = m.group(1)
        for var, pattern in rule.get("capture_history", {}).items():
            found = re.findall(pattern, history)
            if found:
                env[var] = found[-1]
        steps = rule.get("steps") or [{"text": ""}]
        index = min(conv.model_turns, len(steps) - 1)
        step = steps[index]
        if "cases" in step:
            picked = None
            for case in step["cases"]:
                if "history" not in case or re.search(case["history"], history):
                    picked = case
                    break
            step = picked or {"text": ""}
        return rule.get("name", "?"), index, expand(step, env), env
    return None, 0, SCENARIO.get("default", {"text": "OK"}), {}


# ---------------------------------------------------------------- answering, per API
def usage_numbers(conv):
    prompt = sum(len(h) for h in conv.history) // 4 + 1
    return prompt, 20


def anthropic_events(step, model, conv):
    msg_id = next_id("msg")
    prompt_tokens, out_tokens = usage_numbers(conv)
    usage = {"input_tokens": prompt_tokens, "output_tokens": 1, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0}
    yield "message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": usage}}
    index = 0
    blocks = []
    if step.get("text"):
        yield "content_block_start", {"type": "content_block_start", "index": index,
                                      "content_block": {"type": "text", "text": ""}}
        yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                      "delta": {"type": "text_delta", "text": step["text"]}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        blocks.append({"type": "text", "text": step["text"]})
        index += 1
    stop = "end_turn"
    if step.get("tool"):
        tool_id = next_id("toolu")
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {
            "type": "tool_use", "id": tool_id, "name": step["tool"], "input": {}}}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
            "type": "input_json_delta", "partial_json": json.dumps(step.get("input", {}))}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        blocks.append({"type": "tool_use", "id": tool_id, "name": step["tool"], "input": step.get("input", {})})
        stop = "tool_use"
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": out_tokens}}
    yield "message_stop", {"type": "message_stop"}
    # the whole message, for a request without "stream"
    yield None, {"id": msg_id, "type": "message", "role": "assistant", "model": model, "content": blocks,
                 "stop_reason": stop, "stop_sequence": None,
                 "usage": dict(usage, output_tokens=out_tokens)}


def openai_events(step, model, conv):
    resp_id = next_id("resp")
    prompt_tokens, out_tokens = usage_numbers(conv)
    base = {"id": resp_id, "object": "response", "created_at": int(time.time()), "model": model,
            "status": "in_progress", "output": []}
    seq = [0]

    def ev(kind, payload):
        seq[0] += 1
        payload = dict(payload, type=kind, sequence_number=seq[0])
        return kind, payload

    yield ev("response.created", {"response": base})
    yield ev("response.in_progress", {"response": base})
    output = []
    if step.get("text"):
        item_id = next_id("msg")
        item = {"type": "message", "id": item_id, "status": "in_progress", "role": "assistant", "content": []}
        idx = len(output)
        yield ev("response.output_item.added", {"output_index": idx, "item": item})
        yield ev("response.content_part.added", {"item_id": item_id, "output_index": idx, "content_index": 0,
                                                 "part": {"type": "output_text", "text": "", "annotations": []}})
        yield ev("response.output_text.delta", {"item_id": item_id, "output_index": idx, "content_index": 0,
                                                "delta": step["text"]})
        yield ev("response.output_text.done", {"item_id": item_id, "output_index": idx, "content_index": 0,
                                               "text": step["text"]})
        part = {"type": "output_text", "text": step["text"], "annotations": []}
        yield ev("response.content_part.done", {"item_id": item_id, "output_index": idx, "content_index": 0,
                                                "part": part})
        done = dict(item, status="completed", content=[part])
        yield ev("response.output_item.done", {"output_index": idx, "item": done})
        output.append(done)
    if step.get("tool"):
        idx = len(output)
        if isinstance(step.get("input"), str):  # a freeform ("custom") tool such as Codex's apply_patch
            call = {"type": "custom_tool_call", "id": next_id("ctc"), "call_id": next_id("call"),
                    "name": step["tool"], "input": step["input"], "status": "completed"}
            yield ev("response.output_item.added", {"output_index": idx, "item": dict(call, input="")})
        else:
            call = {"type": "function_call", "id": next_id("fc"), "call_id": next_id("call"), "name": step["tool"],
                    "arguments": json.dumps(step.get("input", {})), "status": "completed"}
            yield ev("response.output_item.added", {"output_index": idx, "item": dict(call, arguments="")})
            yield ev("response.function_call_arguments.delta", {"item_id": call["id"], "output_index": idx,
                                                                "delta": call["arguments"]})
            yield ev("response.function_call_arguments.done", {"item_id": call["id"], "output_index": idx,
                                                               "arguments": call["arguments"]})
        yield ev("response.output_item.done", {"output_index": idx, "item": call})
        output.append(call)
    final = dict(base, status="completed", output=output, usage={
        "input_tokens": prompt_tokens, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": out_tokens, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt_tokens + out_tokens})
    yield ev("response.completed", {"response": final})
    yield None, final


def gemini_events(step, model, conv):
    prompt_tokens, out_tokens = usage_numbers(conv)
    parts = []
    if step.get("text"):
        parts.append({"text": step["text"]})
    if step.get("tool"):
        parts.append({"functionCall": {"name": step["tool"], "args": step.get("input", {})}})
    chunk = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
             "usageMetadata": {"promptTokenCount": prompt_tokens, "candidatesTokenCount": out_tokens,
                               "totalTokenCount": prompt_tokens + out_tokens},
             "modelVersion": model, "responseId": next_id("gem")}
    yield "", chunk
    yield None, chunk


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # the JSON log says what matters; keep stderr quiet
        pass

    def send_json(self, status, doc):
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_sse(self, events, named):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for kind, payload in events:
            if kind is None:
                continue
            head = ("event: %s\n" % kind) if named else ""
            self.wfile.write((head + "data: " + json.dumps(payload) + "\n\n").encode())
            self.wfile.flush()
        self.close_connection = True

    def do_GET(self):
        path = self.path.split("?")[0]
        log({"method": "GET", "path": self.path})
        if path.endswith("/models") or path.endswith("/v1/models"):
            self.send_json(200, {"object": "list", "data": [], "models": []})
        elif path == "/health":
            self.send_json(200, {"ok": True})
        else:
            self.send_json(404, {"error": {"message": "not scripted: GET " + path}})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path, _, query = self.path.partition("?")
        if DUMP_DIR:
            with COUNTER_LOCK:
                DUMPS[0] += 1
                name = "%06d.json" % DUMPS[0]
            with open(os.path.join(DUMP_DIR, name), "wb") as f:
                f.write(raw)
        if path.endswith("/messages/count_tokens"):
            conv = read_anthropic(body)
            log({"method": "POST", "path": self.path, "api": "anthropic", "count_tokens": True})
            self.send_json(200, {"input_tokens": usage_numbers(conv)[0]})
            return
        if path.endswith("/messages"):
            api, conv, model, stream = "anthropic", read_anthropic(body), body.get("model", ""), body.get("stream")
            make, named = anthropic_events, True
        elif path.endswith("/responses"):
            api, conv, model, stream = "openai", read_openai(body), body.get("model", ""), body.get("stream")
            make, named = openai_events, True
        elif ":generateContent" in path or ":streamGenerateContent" in path:
            api, conv = "gemini", read_gemini(body)
            model = path.rsplit("/", 1)[-1].split(":")[0]
            stream = ":streamGenerateContent" in path
            make, named = gemini_events, False
        elif ":countTokens" in path:
            log({"method": "POST", "path": self.path, "api": "gemini", "count_tokens": True})
            self.send_json(200, {"totalTokens": usage_numbers(read_gemini(body))[0]})
            return
        else:
            log({"method": "POST", "path": self.path, "unknown": True})
            self.send_json(404, {"error": {"message": "not scripted: POST " + path}})
            return
        rule, index, step, captured = choose(api, conv)
        log({"method": "POST", "path": self.path, "api": api, "model": model, "stream": bool(stream),
             "rule": rule or "unmatched", "step": index, "turns": conv.model_turns,
             "tool": step.get("tool"), "text": (step.get("text") or "")[:80], "tools": conv.tools,
             "vars": {k: v for k, v in captured.items() if len(v) < 200},
             "user": "\n".join(conv.user_text)[-300:] if rule is None else ""})
        events = list(make(step, model, conv))
        if stream:
            self.send_sse(events, named)
        else:
            self.send_json(200, events[-1][1])


def main():
    global SCENARIO, LOG_PATH, DUMP_DIR
    ap = argparse.ArgumentParser(description="Scripted model server for the agent CLI tests (loopback only)")
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--log")
    ap.add_argument("--dump-dir", help="write each request body there (to see what a CLI sends)")
    a = ap.parse_args()
    try:
        with open(a.scenario, encoding="utf-8") as f:
            SCENARIO = json.load(f)
    except (OSError, ValueError) as e:
        print("model_server: cannot read scenario %s: %s" % (a.scenario, e), file=sys.stderr)
        return 2
    if not isinstance(SCENARIO.get("rules", []), list):
        print("model_server: %s: \"rules\" must be a list" % a.scenario, file=sys.stderr)
        return 2
    LOG_PATH = a.log
    DUMP_DIR = a.dump_dir
    server = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, a.port_file)
    print("listening on http://127.0.0.1:%d" % port, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
