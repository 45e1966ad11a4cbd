"""A scripted model on loopback that speaks enough of three vendors' APIs for their agent
programs to run a session headless: the Anthropic Messages API (SSE), the OpenAI
Responses API (SSE) and the Gemini API (`:streamGenerateContent?alt=sse`, and
`:generateContent` for the side requests such as Gemini CLI's model router).

The script is a list of steps, each a tool call in words every agent has (a shell
command, maybe in a subfolder; a file written; a file edited), then a final text. Which
step a request gets is read from the conversation itself: the number of tool results it
carries. So side requests (titles, routing, token counts) never advance the script.

Standard library only, runnable as a program too (`python model_server.py CONFIG`), so a
test can start it inside a network namespace of its own.
"""

from __future__ import annotations

import gzip
import json
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

Step = dict[str, str]  # {"shell": CMD, "dir": SUB} | {"write": PATH, "content": TEXT} | …


@dataclass
class Script:
    steps: list[Step]
    root: str  # the project: the agents that want absolute file paths get them below it
    final: str = "Done."
    log: Path | None = None  # every request, one JSON object a line
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def path(self, rel: str) -> str:
        return str(Path(self.root) / rel)

    def record(self, entry: dict[str, Any]) -> None:
        with self.lock:
            self.requests.append(entry)
            if self.log is not None:
                with self.log.open("a") as fh:
                    fh.write(json.dumps(entry) + "\n")

    def step(self, done: int) -> Step | None:
        return self.steps[done] if done < len(self.steps) else None


# --- Anthropic Messages API -------------------------------------------------------------


def anthropic_tool_call(step: Step, script: Script) -> tuple[str, dict[str, Any]]:
    if "shell" in step:
        command = step["shell"]
        if step.get("dir"):
            command = f"cd {step['dir']} && {command}"
        return "Bash", {"command": command, "description": "run a command"}
    if "write" in step:
        return "Write", {"file_path": script.path(step["write"]), "content": step["content"]}
    if "read" in step:
        return "Read", {"file_path": script.path(step["read"])}
    return "Edit", {
        "file_path": script.path(step["edit"]),
        "old_string": step["old"],
        "new_string": step["new"],
    }


def anthropic_results(body: dict[str, Any]) -> int:
    count = 0
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            count += sum(1 for part in content if part.get("type") == "tool_result")
    return count


def anthropic_events(body: dict[str, Any], script: Script) -> list[tuple[str, dict[str, Any]]]:
    """The SSE events of one answer: a tool call when the script has one left and the
    request offers tools, else the final text."""
    model = body.get("model", "model")
    step = script.step(anthropic_results(body)) if body.get("tools") else None
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_{time.monotonic_ns()}",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 1},
                },
            },
        )
    ]
    if step is not None:
        name, args = anthropic_tool_call(step, script)
        block = {"type": "tool_use", "id": f"toolu_{time.monotonic_ns()}", "name": name}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(args)}
        stop = "tool_use"
        block["input"] = {}
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": script.final}
        stop = "end_turn"
    events += [
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


# --- OpenAI Responses API ---------------------------------------------------------------


def openai_results(body: dict[str, Any]) -> int:
    return sum(
        1
        for item in body.get("input") or []
        if isinstance(item, dict) and str(item.get("type", "")).endswith("_call_output")
    )


def openai_tool_call(step: Step, body: dict[str, Any], call_id: str) -> dict[str, Any]:
    """A shell command through the shell tool the request offers (Codex 0.17x:
    `exec_command`), an edit through `apply_patch` (a freeform tool, or a function)."""
    tools = {t.get("name"): t for t in body.get("tools") or [] if isinstance(t, dict)}
    if "shell" in step:
        args: dict[str, Any]
        if "exec_command" in tools:
            name, args = "exec_command", {"cmd": step["shell"]}
        elif "shell_command" in tools:
            name, args = "shell_command", {"command": step["shell"]}
        else:
            name, args = "shell", {"command": ["bash", "-lc", step["shell"]]}
        if step.get("dir"):
            args["workdir"] = step["dir"]
        return {
            "type": "function_call",
            "name": name,
            "arguments": json.dumps(args),
            "call_id": call_id,
        }
    patch = _patch(step)
    if tools.get("apply_patch", {}).get("type") == "custom":
        return {
            "type": "custom_tool_call",
            "name": "apply_patch",
            "input": patch,
            "call_id": call_id,
        }
    return {
        "type": "function_call",
        "name": "apply_patch",
        "arguments": json.dumps({"input": patch}),
        "call_id": call_id,
    }


def _patch(step: Step) -> str:
    if "write" in step:
        lines = "".join(f"+{line}\n" for line in step["content"].splitlines())
        return f"*** Begin Patch\n*** Add File: {step['write']}\n{lines}*** End Patch\n"
    old = "".join(f"-{line}\n" for line in step["old"].splitlines())
    new = "".join(f"+{line}\n" for line in step["new"].splitlines())
    return f"*** Begin Patch\n*** Update File: {step['edit']}\n@@\n{old}{new}*** End Patch\n"


def openai_events(body: dict[str, Any], script: Script) -> list[tuple[str, dict[str, Any]]]:
    response_id = f"resp_{time.monotonic_ns()}"
    step = script.step(openai_results(body)) if body.get("tools") else None
    if step is not None:
        item = openai_tool_call(step, body, f"call_{time.monotonic_ns()}")
    else:
        item = {
            "type": "message",
            "role": "assistant",
            "id": f"msg_{time.monotonic_ns()}",
            "content": [{"type": "output_text", "text": script.final, "annotations": []}],
        }
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    return [
        ("response.created", {"type": "response.created", "response": {"id": response_id}}),
        (
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": item},
        ),
        (
            "response.completed",
            {"type": "response.completed", "response": {"id": response_id, "usage": usage}},
        ),
    ]


# --- Gemini API -------------------------------------------------------------------------


def gemini_results(body: dict[str, Any]) -> int:
    count = 0
    for content in body.get("contents") or []:
        for part in content.get("parts") or []:
            count += "functionResponse" in part
    return count


def gemini_tool_call(step: Step, script: Script) -> dict[str, Any]:
    if "shell" in step:
        args = {"command": step["shell"], "description": "run a command"}
        if step.get("dir"):
            args["dir_path"] = step["dir"]
        return {"name": "run_shell_command", "args": args}
    if "write" in step:
        args = {"file_path": script.path(step["write"]), "content": step["content"]}
        return {"name": "write_file", "args": args}
    if "read" in step:
        return {"name": "read_file", "args": {"file_path": script.path(step["read"])}}
    return {
        "name": "replace",
        "args": {
            "file_path": script.path(step["edit"]),
            "old_string": step["old"],
            "new_string": step["new"],
            "instruction": "edit the file",
        },
    }


# What Gemini CLI's model router asks for (JSON by a schema): both of its classifiers'
# fields, so whichever strategy runs finds its own.
ROUTER_ANSWER = {
    "reasoning": "a scripted task",
    "model_choice": "flash",
    "complexity_reasoning": "a scripted task",
    "complexity_score": 10,
}


def gemini_answer(body: dict[str, Any], script: Script) -> dict[str, Any]:
    config = body.get("generationConfig") or {}
    part: dict[str, Any]
    if config.get("responseMimeType") == "application/json" or config.get("responseJsonSchema"):
        part = {"text": json.dumps(ROUTER_ANSWER)}
    else:
        step = script.step(gemini_results(body)) if body.get("tools") else None
        part = {"functionCall": gemini_tool_call(step, script)} if step else {"text": script.final}
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-scripted",
    }


# --- the server ---------------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    script: Script

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def do_CONNECT(self) -> None:
        self._foreign(self.path)

    def _foreign(self, target: str) -> None:
        """A request meant for another host, sent here as to a proxy: recorded, refused."""
        self.script.record({"kind": "foreign", "method": self.command, "target": target})
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.close_connection = True

    def _answer(self) -> None:
        if not self.path.startswith("/"):  # an absolute URL: a client using us as its proxy
            self._foreign(self.path)
            return
        raw = self._body()
        if self.headers.get("Content-Encoding", "") == "gzip":
            raw = gzip.decompress(raw)
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        path = self.path
        self.script.record({"kind": "model", "method": self.command, "path": path, "body": body})
        route = path.split("?")[0]
        if route.endswith("/v1/messages") and self.command == "POST":
            events = anthropic_events(body, self.script)
            if body.get("stream"):
                self._sse(events, named=True)
            else:
                self._json(_anthropic_message(events))
        elif route.endswith("/responses") and self.command == "POST":
            self._sse(openai_events(body, self.script), named=True)
        elif route.endswith(":streamGenerateContent"):
            self._sse([("", gemini_answer(body, self.script))], named=False)
        elif route.endswith(":generateContent"):
            self._json(gemini_answer(body, self.script))
        elif route.endswith(":countTokens"):
            self._json({"totalTokens": 10})
        elif route.endswith("/v1/messages/count_tokens"):
            self._json({"input_tokens": 10})
        else:
            self._json({"error": {"message": f"not scripted: {path}"}}, status=404)

    def _json(self, doc: dict[str, Any], status: int = 200) -> None:
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: list[tuple[str, dict[str, Any]]], *, named: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, data in events:
            head = f"event: {name}\n" if named and name else ""
            self.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True


def _anthropic_message(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The same answer as one JSON message (a request without `stream`)."""
    message = dict(events[0][1]["message"])
    block = dict(events[1][1]["content_block"])
    delta = events[2][1]["delta"]
    if block["type"] == "tool_use":
        block["input"] = json.loads(delta["partial_json"])
    else:
        block["text"] = delta["text"]
    message["content"] = [block]
    message["stop_reason"] = events[4][1]["delta"]["stop_reason"]
    return message


def serve(script: Script, port: int = 0) -> ThreadingHTTPServer:
    handler = type("ScriptedHandler", (Handler,), {"script": script})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    return server


def answer_dns(script: Script, sock: socket.socket) -> None:
    """A name server that records every name asked for and answers REFUSED: in a network
    namespace whose resolv.conf points here, every host an agent tries to reach by name
    is on the record."""
    while True:
        try:
            query, peer = sock.recvfrom(4096)
        except OSError:
            return
        if len(query) < 12:
            continue
        labels, at = [], 12
        while at < len(query) and query[at]:
            size = query[at]
            labels.append(query[at + 1 : at + 1 + size].decode("ascii", "replace"))
            at += 1 + size
        script.record({"kind": "dns", "name": ".".join(labels)})
        # Header: the query's id, QR set, opcode kept, RCODE 5 (refused); the question kept.
        flags = bytes([0x80 | (query[2] & 0x79), 0x05])
        sock.sendto(query[:2] + flags + query[4:], peer)


def main(argv: list[str]) -> None:
    """`model_server.py CONFIG`: CONFIG holds {steps, root, final, log, port_file, dns};
    the HTTP port is written to port_file once the server listens (and, with dns, the
    name server on 127.0.0.1:53 too)."""
    config = json.loads(Path(argv[0]).read_text())
    script = Script(config["steps"], config["root"], config["final"], Path(config["log"]))
    server = serve(script)
    if config.get("dns"):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 53))
        threading.Thread(target=answer_dns, args=(script, sock), daemon=True).start()
    Path(config["port_file"]).write_text(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
