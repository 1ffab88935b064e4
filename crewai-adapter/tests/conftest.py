"""Shared test material: a launch message like the runner's, and an OpenAI-compatible server on loopback."""

from __future__ import annotations

from collections.abc import Iterator
import copy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import json
import threading
from typing import Any

import pytest

LAUNCH: dict[str, Any] = {
    "assignment": {
        "execution": {"id": "0b7e8a52-5d6c-4f1e-9a3b-2c1d0e9f8a7b", "crew": "research"},
        "task": {
            "index": 1,
            "name": "write",
            "description": "Write a short article about AI agents.",
            "expectedOutput": "Three paragraphs in markdown.",
        },
        "agent": {
            "name": "writer",
            "role": "Senior Writer",
            "goal": "Explain AI agents clearly",
            "backstory": "You have written for technical magazines for ten years.",
            "tools": [],
            "mcps": [],
            "apps": [],
            "maxIter": 20,
        },
        "context": [{"task": "research", "output": "Agents plan, act and observe."}],
        "inputs": {},
        "tools": {"mcpServers": [], "allowedHosts": []},
        "runtime": "crewai",
    },
    "attempt": 1,
    "modelLabel": "openai-compatible/llama3",
    "llm": {"provider": "openai-compatible", "model": "llama3", "baseURL": "http://127.0.0.1:1/v1"},
    "mcpServers": [],
    "secrets": [],
}


def launch_message(**changes: Any) -> dict[str, Any]:
    message = copy.deepcopy(LAUNCH)
    message.update(changes)
    return message


class ChatServer:
    """Answers every Chat Completions request with `answer` and keeps the requests (headers and JSON bodies)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answer = "Fixture answer."
        #: Answers for the first requests, in order; `answer` after them. A dict is a tool call: {"name", "arguments"}.
        self.answers: list[str | dict[str, Any]] = []
        #: Requests from this one on (counted from 0) get no answer until the server stops.
        self.hold_from: int | None = None
        self.stopping = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                outer.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                if outer.hold_from is not None and len(outer.requests) > outer.hold_from:
                    outer.stopping.wait(timeout=120)
                    return
                content = outer.answers.pop(0) if outer.answers else outer.answer
                message: dict[str, Any] = {"role": "assistant", "content": content}
                if isinstance(content, dict):
                    call = {"name": content["name"], "arguments": json.dumps(content["arguments"])}
                    message = {"role": "assistant", "content": None, "tool_calls": [
                        {"id": f"call_{len(outer.requests)}", "type": "function", "function": call}
                    ]}
                reply = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "created": 1_700_000_000,
                    "model": body.get("model", "m"),
                    "choices": [
                        {"index": 0, "message": message, "finish_reason": "tool_calls" if "tool_calls" in message else "stop"}
                    ],
                    "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
                }
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    server = ChatServer()
    yield server
    server.stopping.set()
    server.server.shutdown()
