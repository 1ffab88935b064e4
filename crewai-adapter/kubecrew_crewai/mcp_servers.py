"""The task's MCP servers (the crew's `mcpServers`/`mcps` and the connected apps' endpoint, resolved by the runner)
through CrewAI's own MCP support: its server configurations, its tool resolver and its native MCP tools."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
import contextvars
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from crewai.tools import BaseTool
from pydantic import ConfigDict

from .launch import McpServer

if TYPE_CHECKING:
    from crewai import Agent
    from crewai.mcp import MCPServerHTTP, MCPServerSSE


class McpServerUnusable(Exception):
    """A server the task cannot use (down, refused, not speaking MCP); the message names it, never its headers."""


def tool_allowed(server: McpServer, only: list[str] | None, tool: dict[str, Any]) -> bool:
    """A server's tool is offered when the server's allow-list and the task's `tools` (if any) both name it."""
    name = str(tool.get("original_name") or tool.get("name") or "")
    if server.tools is not None and name not in server.tools:
        return False
    return only is None or name in only


def crewai_mcp_server(server: McpServer, only: list[str] | None) -> MCPServerHTTP | MCPServerSSE:
    from crewai.mcp import MCPServerHTTP, MCPServerSSE

    def tool_filter(_context: Any, tool: dict[str, Any]) -> bool:
        return tool_allowed(server, only, tool)

    headers = dict(server.headers) or None
    if server.transport == "sse":
        return MCPServerSSE(url=server.url, headers=headers, tool_filter=tool_filter)
    return MCPServerHTTP(url=server.url, headers=headers, streamable=True, tool_filter=tool_filter)


class McpTool(BaseTool):
    """One of CrewAI's native MCP tools, called in a thread of its own.

    CrewAI 1.15.30's native tool starts its event loop inside an `except RuntimeError` block when the calling thread has
    none (the sequential process's case); its transport's teardown then takes that handled error for the failure of the
    call, and every call fails with "no running event loop". A fresh thread has no handled error around the loop.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    native: Any
    #: The tool's name on its server (CrewAI's name may carry the server's): what a task's `tools` names.
    original_name: str = ""

    def _run(self, **kwargs: Any) -> Any:
        context = contextvars.copy_context()
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="kubecrew-mcp") as pool:
            return pool.submit(context.run, asyncio.run, self.native._run_async(**kwargs)).result()


def mcp_tools(agent: Agent, servers: list[McpServer], only: list[str] | None) -> list[BaseTool]:
    """The servers' tools, discovered by CrewAI's resolver (one server at a time, so a failure names its server)."""
    tools: list[BaseTool] = []
    for server in servers:
        try:
            natives = agent.get_mcp_tools([crewai_mcp_server(server, only)])
        except Exception as error:
            parts = urlsplit(server.url)
            where = f'MCP server "{server.name}" ({parts.scheme}://{parts.netloc}{parts.path})'
            raise McpServerUnusable(f"{where}: cannot be used: {error}") from error
        tools.extend(
            McpTool(
                name=t.name,
                description=t.description,
                args_schema=t.args_schema,
                native=t,
                original_name=str(getattr(t, "original_tool_name", None) or t.name),
            )
            for t in natives
        )
    return tools
