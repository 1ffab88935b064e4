from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import threading
from typing import Any

import pytest

from kubecrew_crewai.http_request_tool import (
    MAX_TOOL_OUTPUT_CHARS,
    HttpRequestInput,
    HttpRequestRefused,
    HttpRequestTool,
    host_allowed,
    send_request,
)


@pytest.fixture
def site(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    # Straight to the loopback server: no proxy in these tests (the runner's tests cover the proxy).
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/big":
                body = b"x" * (MAX_TOOL_OUTPUT_CHARS + 10)
            elif self.path == "/moved":
                self.send_response(302)
                self.send_header("location", "/elsewhere")
                self.send_header("content-length", "0")
                self.end_headers()
                return
            else:
                body = b'{"ok": true}'
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_host_patterns_as_the_runner_reads_them() -> None:
    assert host_allowed("https://api.example.com/x", ["api.example.com"])
    assert host_allowed("https://a.b.example.com/", ["*.example.com"])
    assert not host_allowed("https://example.com/", ["*.example.com"])
    assert host_allowed("http://h:8080/", ["h:8080"])
    assert not host_allowed("http://h:8081/", ["h:8080"])
    assert host_allowed("https://API.Example.com./", ["api.example.com"])


def test_answers_status_type_and_body(site: str) -> None:
    answer = send_request(HttpRequestInput(method="GET", url=f"http://{site}/"), [site])
    assert answer == 'HTTP 200 OK\ncontent-type: application/json\n\n{"ok": true}'


def test_returns_a_redirect_without_following_it(site: str) -> None:
    answer = send_request(HttpRequestInput(method="GET", url=f"http://{site}/moved"), [site])
    assert answer.startswith("HTTP 302 Found\nlocation: /elsewhere")


def test_cuts_a_long_answer_with_a_marker(site: str) -> None:
    answer = send_request(HttpRequestInput(method="GET", url=f"http://{site}/big"), [site])
    assert len(answer) < MAX_TOOL_OUTPUT_CHARS
    assert answer.endswith(f"[truncated: the response body ({MAX_TOOL_OUTPUT_CHARS + 10} bytes) is cut here; 32568 characters shown]")


def test_refuses_what_the_crew_does_not_allow(site: str) -> None:
    with pytest.raises(HttpRequestRefused, match=r"not in the crew's toolPolicy.allowedHosts \(allowed: none\)"):
        send_request(HttpRequestInput(method="GET", url=f"http://{site}/"), [])
    with pytest.raises(HttpRequestRefused, match="file: URLs are refused"):
        send_request(HttpRequestInput(method="GET", url="file:///etc/passwd"), [site])
    with pytest.raises(HttpRequestRefused, match="A GET request has no body"):
        send_request(HttpRequestInput(method="GET", url=f"http://{site}/", body="x"), [site])


def test_is_a_crewai_tool_with_the_runners_name_and_input() -> None:
    tool = HttpRequestTool(allowed_hosts=["h"])
    assert tool.name == "http_request"
    assert set(tool.args_schema.model_json_schema()["properties"]) == {"method", "url", "headers", "body"}
