"""A real MCP server on loopback for the adapter's tests: the MCP Python SDK's FastMCP over streamable HTTP, with tools
whose answers the tests predict, recording each call and each request's Authorization header."""

from __future__ import annotations

from collections.abc import Iterator
import socket
import threading
import time
from typing import Any

import pytest


class McpFixture:
    """`lookup(key)` answers `value of <key>`, `shout(text)` answers the text in capitals."""

    def __init__(self) -> None:
        import uvicorn
        from mcp.server.fastmcp import FastMCP

        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.authorizations: list[str] = []
        server = FastMCP("kubecrew-test-fixture", stateless_http=True, json_response=True)

        @server.tool(description="Looks a key up")
        def lookup(key: str) -> str:
            self.calls.append(("lookup", {"key": key}))
            return f"value of {key}"

        @server.tool(description="Answers the text in capitals")
        def shout(text: str) -> str:
            self.calls.append(("shout", {"text": text}))
            return text.upper()

        inner = server.streamable_http_app()

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                headers = dict(scope.get("headers") or [])
                self.authorizations.append(headers.get(b"authorization", b"").decode())
            await inner(scope, receive, send)

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the MCP fixture did not start")
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{port}/mcp"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture
def mcp_server() -> Iterator[McpFixture]:
    fixture = McpFixture()
    yield fixture
    fixture.stop()
