"""kubecrew's built-in `http_request` tool as a CrewAI tool: the same input, checks and answer as the runner's own
(runner/http-request-tool.ts). Requests go out through the runner's egress proxy (HTTP_PROXY/HTTPS_PROXY), where the
outbound URL policy judges every address."""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

import httpx
from crewai.tools import BaseTool
from pydantic import BaseModel, Field

HTTP_REQUEST_TOOL = "http_request"
TIMEOUT_SECONDS = 30.0
#: At most this much of a response body is read (runner/tool-limits.ts).
MAX_HTTP_BODY_BYTES = 256 * 1024
#: The answer is cut here for the model, with a marker.
MAX_TOOL_OUTPUT_CHARS = 32 * 1024
#: The header the egress proxy sets on its own refusals (runner/egress-proxy.ts).
REFUSED_HEADER = "x-kubecrew-outbound"

DESCRIPTION = (
    "Sends one HTTP request (GET, POST, PUT or DELETE) and returns the status, the content type and the response body "
    "(long bodies are cut, with a marker). Only hosts the crew allows can be called; redirects are returned, not followed."
)


class HttpRequestRefused(Exception):
    """A request the tool refuses to send; CrewAI gives the model the message as the tool's error."""


class HttpRequestInput(BaseModel):
    method: Literal["GET", "POST", "PUT", "DELETE"] = Field(description="HTTP method")
    url: str = Field(description="Absolute http(s) URL; its host must be one of the crew's allowed hosts")
    headers: dict[str, str] | None = Field(default=None, description="Request headers")
    body: str | None = Field(default=None, description="Request body, e.g. JSON text (not with GET)")


def host_allowed(url: str, patterns: list[str]) -> bool:
    """runner/allowed-hosts.ts's rule: `api.example.com`, `*.example.com` (subdomains only), optional `:port`."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().rstrip(".")
    port = str(parts.port or (443 if parts.scheme == "https" else 80))
    for pattern in patterns:
        name, _, pattern_port = pattern.lower().partition(":")
        if pattern_port and pattern_port != port:
            continue
        if name.startswith("*."):
            if host.endswith(name[1:]) and len(host) > len(name) - 1:
                return True
        elif host == name:
            return True
    return False


def send_request(request: HttpRequestInput, allowed_hosts: list[str], timeout: float = TIMEOUT_SECONDS) -> str:
    parts = urlsplit(request.url)
    if parts.scheme and parts.scheme not in ("http", "https"):
        raise HttpRequestRefused(f"{parts.scheme}: URLs are refused: only http and https")
    if not parts.scheme or not parts.netloc:
        raise HttpRequestRefused(f'"{request.url[:200]}" is not an absolute URL')
    if not host_allowed(request.url, allowed_hosts):
        allowed = ", ".join(allowed_hosts) if allowed_hosts else "none"
        raise HttpRequestRefused(f"{parts.netloc} is not in the crew's toolPolicy.allowedHosts (allowed: {allowed})")
    if request.method == "GET" and request.body is not None:
        raise HttpRequestRefused("A GET request has no body")
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False, trust_env=True) as client:
            with client.stream(
                request.method, request.url, headers=request.headers, content=request.body
            ) as response:
                if response.headers.get(REFUSED_HEADER) == "refused":
                    raise HttpRequestRefused(response.read().decode("utf-8", "replace"))
                body, complete = _read_bounded(response)
                return _answer(response, body, complete)
    except httpx.ProxyError as error:
        # A refused CONNECT: the proxy's status line carries the policy's message.
        raise HttpRequestRefused(str(error).removeprefix("403 ")) from error
    except httpx.TimeoutException as error:
        raise HttpRequestRefused(f"No response within {timeout:g} s") from error


def _read_bounded(response: httpx.Response) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_HTTP_BODY_BYTES:
            return b"".join(chunks)[:MAX_HTTP_BODY_BYTES], False
    return b"".join(chunks), True


def _answer(response: httpx.Response, body: bytes, complete: bool) -> str:
    head = [f"HTTP {response.status_code} {response.reason_phrase}".strip()]
    content_type = response.headers.get("content-type")
    if content_type:
        head.append(f"content-type: {content_type}")
    location = response.headers.get("location")
    if location and 300 <= response.status_code < 400:
        head.append(f"location: {location}")
    text = "\n".join(head) + "\n\n" + body.decode("utf-8", "replace")
    if complete and len(text) <= MAX_TOOL_OUTPUT_CHARS:
        return text
    declared = response.headers.get("content-length", "")
    if complete:
        size = f"{len(body)} bytes"
    elif declared.isdigit() and int(declared) > 0:
        size = f"{declared} bytes"
    else:
        size = f"more than {MAX_HTTP_BODY_BYTES} bytes"
    kept = text[: MAX_TOOL_OUTPUT_CHARS - 200]
    return f"{kept}\n[truncated: the response body ({size}) is cut here; {len(kept)} characters shown]"


class HttpRequestTool(BaseTool):
    name: str = HTTP_REQUEST_TOOL
    description: str = DESCRIPTION
    args_schema: type[BaseModel] = HttpRequestInput
    allowed_hosts: list[str] = Field(default_factory=list)

    def _run(
        self,
        method: str,
        url: str,
        headers: dict[str, str] | None = None,
        body: str | None = None,
    ) -> str:
        request = HttpRequestInput.model_validate({"method": method, "url": url, "headers": headers, "body": body})
        return send_request(request, self.allowed_hosts)
