#!/usr/bin/python3
"""A small OpenAI-protocol replay server for tests: POST /v1/chat/completions
answers from a script of recorded replies, one per request, in order; the
last entry repeats (or `"cycle": true` starts over). Binds 127.0.0.1 on an
ephemeral port and writes the port to --port-file once it listens.

Script (JSON): {"replies": [entry, ...], "cycle": false, "require_key": "K",
                "when": [{"contains": "text", "replies": [entry, ...]}, ...],
                "delay_s": 0.5}
A request whose body contains a `when` rule's text is answered from that
rule's replies (its own sequence, the last repeating) instead; `delay_s`
delays every answer (an entry's own delay_s adds to it).
entry:
  {"content": "text"}                  a 200 completion with usage
  {"content_file": "path"}             the completion's text from a file
  {"status": 429, "headers": {"Retry-After": "1"}, "body": {...}}   any status
  {"raw": "not json"}                  a 200 whose body is this text
  {"drop": true}                       close the connection without replying
  {"delay_s": 2.0, ...}                wait before answering (timeouts)
  {"no_usage": true, ...}              a completion without `usage`
With require_key, requests whose Authorization is not "Bearer K" get 401.
Every request is appended to --log as one JSON line when it arrives: path,
headers (the Authorization value replaced by whether it matched), body,
`t` (time.time()) and `in_flight` (requests being answered, itself
included); with --timeline, one line {"start", "end"} per answered request.
"""
import argparse
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--timeline")
    args = ap.parse_args()
    script = json.load(open(args.script))
    base = os.path.dirname(os.path.abspath(args.script))
    replies = script["replies"]
    rules = script.get("when", [])
    state = {"next": 0, "in_flight": 0, "rule_next": [0] * len(rules)}
    lock = threading.Lock()

    def take(body):
        with lock:
            for k, rule in enumerate(rules):
                if rule["contains"] in body:
                    i = state["rule_next"][k]
                    state["rule_next"][k] += 1
                    return rule["replies"][min(i, len(rule["replies"]) - 1)], "%d.%d" % (k, i)
            i = state["next"]
            state["next"] += 1
        if script.get("cycle"):
            return replies[i % len(replies)], i
        return replies[min(i, len(replies) - 1)], i

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def send(self, status, body, headers=None):
            data = body.encode() if isinstance(body, str) else body
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.done()
            self.wfile.write(data)

        def do_POST(self):
            self.start = time.time()
            self.answered = False
            with lock:
                state["in_flight"] += 1
                in_flight = state["in_flight"]
            try:
                self.answer(self.start, in_flight)
            finally:
                self.done()

        def done(self):
            """The request is answered (before its reply is written: the
            client may send the next one as soon as it has read it)."""
            if self.answered:
                return
            self.answered = True
            with lock:
                state["in_flight"] -= 1
                if args.timeline:
                    with open(args.timeline, "a") as f:
                        f.write(json.dumps({"start": self.start, "end": time.time()}) + "\n")

        def answer(self, start, in_flight):
            n = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(n).decode("utf-8", "replace")
            auth = self.headers.get("Authorization")
            key = script.get("require_key")
            entry, index = take(body)
            with lock, open(args.log, "a") as log:
                hdrs = {k: v for k, v in self.headers.items() if k.lower() != "authorization"}
                hdrs["authorization"] = "absent" if auth is None else ("matched" if key and auth == "Bearer " + key else "present")
                log.write(json.dumps({"index": index, "path": self.path, "headers": hdrs, "body": body, "t": start,
                                      "in_flight": in_flight}) + "\n")
            if self.path.rstrip("/") != "/v1/chat/completions":
                return self.send(404, json.dumps({"error": {"message": "no route " + self.path}}))
            if key and auth != "Bearer " + key:
                return self.send(401, json.dumps({"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}))
            delay = script.get("delay_s", 0) + entry.get("delay_s", 0)
            if delay:
                time.sleep(delay)
            if entry.get("drop"):
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            if "raw" in entry:
                return self.send(entry.get("status", 200), entry["raw"], entry.get("headers"))
            if "status" in entry and entry["status"] != 200:
                return self.send(entry["status"], json.dumps(entry.get("body", {"error": {"message": "scripted"}})),
                                 entry.get("headers"))
            content = entry.get("content")
            if "content_file" in entry:
                content = open(os.path.join(base, entry["content_file"])).read()
            req = json.loads(body)
            reply = {"id": "replay-%s" % index, "object": "chat.completion", "model": req.get("model", "?"),
                     "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                  "finish_reason": "stop"}]}
            if not entry.get("no_usage"):
                prompt = sum(len(m.get("content", "")) for m in req.get("messages", []))
                reply["usage"] = {"prompt_tokens": prompt // 4 + 1, "completion_tokens": len(content) // 4 + 1,
                                  "total_tokens": prompt // 4 + len(content) // 4 + 2}
            self.send(200, json.dumps(reply), entry.get("headers"))

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, args.port_file)
    try:
        server.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
