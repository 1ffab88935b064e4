"""A crew declared in the Crew that CrewAI runs whole (process hierarchical, or an agent with allow_delegation), built
by the adapter from the spec and run by the real CrewAI against an OpenAI-compatible server on loopback."""

import json
import socket
from typing import Any

from crewai.tools.agent_tools.agent_tools import AgentTools
from crewai.utilities.string_utils import sanitize_tool_name

from .conftest import ChatServer, launch_message
from .mcp_fixture import McpFixture, mcp_server  # noqa: F401 (a fixture)
from .test_main import SECRET, run_adapter


def delegate_tool() -> str:
    """CrewAI's own delegation tool's name as its native tool calling sends it, read from the package."""
    from crewai import LLM, Agent

    agent = Agent(role="R", goal="g", backstory="b", llm=LLM(model="openai/x", base_url="http://127.0.0.1:9", api_key="k"))
    return sanitize_tool_name(AgentTools(agents=[agent]).tools()[0].name)


def agent(name: str, role: str, base_url: str, **more: Any) -> dict[str, Any]:
    llm = {"provider": "openai-compatible", "model": "llama3", "baseURL": base_url}
    spec = {"name": name, "role": role, "goal": f"Be a good {role}", "backstory": "", "tools": [], "mcps": []}
    return {"agent": {**spec, "apps": [], "maxIter": 5, "llm": llm, **more}, "tools": {"mcpServers": [], "allowedHosts": []}}


def declared_launch(chat_server: ChatServer, declared: dict[str, Any], agents: list[dict[str, Any]]) -> dict[str, Any]:
    message = launch_message(
        llm={"provider": "openai-compatible", "model": "llama3", "baseURL": chat_server.base_url, "apiKey": SECRET},
        secrets=[SECRET],
        agentKeys={a["agent"]["name"]: SECRET for a in agents},
    )
    names = [t["name"] for t in declared["tasks"]]
    message["project"] = {"declared": declared, "tasks": [{"name": n, "index": i} for i, n in enumerate(names)]}
    message["assignment"]["coworkers"] = agents
    message["assignment"]["task"].update(index=0, name=names[0])
    return message


def text(chat_server: ChatServer, index: int) -> str:
    return json.dumps(chat_server.requests[index]["body"]["messages"])


def test_a_hierarchical_crews_manager_delegates_to_its_agents_and_each_task_is_reported(chat_server: ChatServer) -> None:
    tool = delegate_tool()
    chat_server.answers = [
        {"name": tool, "arguments": {"task": "Find two facts", "context": "An article", "coworker": "Researcher"}},
        "Tides follow the moon.",
        {"name": tool, "arguments": {"task": "Write it up", "context": "Tides follow the moon.", "coworker": "Writer"}},
        "A draft on tides.",
        "The article on tides.",
        "A title: Tides.",
    ]
    declared = {
        "process": "hierarchical",
        "manager": "llm",
        "tasks": [
            {"name": "article", "description": "Write an article about tides", "expectedOutput": "An article"},
            {"name": "title", "description": "Title the article", "expectedOutput": "A title", "agent": "writer"},
        ],
    }
    agents = [agent("researcher", "Researcher", chat_server.base_url), agent("writer", "Writer", chat_server.base_url)]
    message = declared_launch(chat_server, declared, agents)
    message["assignment"]["agent"].update(name="manager", role="Crew Manager")
    code, lines, stderr = run_adapter(message)
    assert code == 0, stderr
    outcomes = [line["outcome"] for line in lines if "outcome" in line]
    assert [(o["taskName"], o["taskIndex"], o["output"]) for o in outcomes] == [
        ("article", 0, "The article on tides."),
        ("title", 1, "A title: Tides."),
    ]
    assert len(chat_server.requests) == 6
    # The coworkers' own calls got the work handed over; the manager got their answers back.
    assert "Find two facts" in text(chat_server, 1) and "Be a good Researcher" in text(chat_server, 1)
    assert "Write it up" in text(chat_server, 3) and "Be a good Writer" in text(chat_server, 3)
    assert "A draft on tides." in text(chat_server, 4)
    # Each delegation is a step of the task it happened in, with the coworker named.
    delegations = [line for line in lines if "step" in line and line["step"]["kind"] == "delegation"]
    assert [(d["taskIndex"], d["step"]["coworker"], d["step"]["output"]) for d in delegations] == [
        (0, "Researcher", "Tides follow the moon."),
        (0, "Writer", "A draft on tides."),
    ]
    assert SECRET not in json.dumps(lines) + stderr


def test_an_agent_with_allow_delegation_hands_work_to_a_coworker_in_a_sequential_crew(chat_server: ChatServer) -> None:
    tool = delegate_tool()
    chat_server.answers = [
        {"name": tool, "arguments": {"task": "Check the facts", "context": "Tides", "coworker": "Researcher"}},
        "The facts hold.",
        "Checked article.",
    ]
    declared = {
        "process": "sequential",
        "tasks": [{"name": "write", "description": "Write on tides", "expectedOutput": "Text", "agent": "writer"}],
    }
    agents = [
        agent("researcher", "Researcher", chat_server.base_url),
        agent("writer", "Writer", chat_server.base_url, allowDelegation=True),
    ]
    code, lines, stderr = run_adapter(declared_launch(chat_server, declared, agents))
    assert code == 0, stderr
    assert lines[-1]["outcome"]["output"] == "Checked article."
    # The writer was offered the delegation tool; the researcher was not (it cannot delegate).
    offered = [[t["function"]["name"] for t in r["body"].get("tools") or []] for r in chat_server.requests]
    assert tool in offered[0] and tool not in offered[1]
    assert "Check the facts" in text(chat_server, 1)


def test_a_declared_tasks_guardrail_and_an_unknown_agent(chat_server: ChatServer) -> None:
    chat_server.answers = ["Far too long an answer.", "Short."]
    declared: dict[str, Any] = {
        "process": "sequential",
        "tasks": [
            {
                "name": "write",
                "description": "Write",
                "expectedOutput": "Text",
                "agent": "writer",
                "guardrails": [{"maxLength": 10}],
            }
        ],
    }
    agents = [agent("writer", "Writer", chat_server.base_url, allowDelegation=True)]
    code, lines, stderr = run_adapter(declared_launch(chat_server, declared, agents))
    assert code == 0, stderr
    assert lines[-1]["outcome"]["output"] == "Short."
    assert [line["step"].get("error") for line in lines if "step" in line and line["step"]["kind"] == "guardrail"] == [
        "the answer has 23 characters, more than 10",
        None,
    ]
    declared["tasks"][0]["agent"] = "nobody"
    code, lines, _ = run_adapter(declared_launch(chat_server, declared, agents))
    assert code == 1
    assert lines[-1]["outcome"]["error"] == 'task "write" names agent "nobody", which the crew does not have'


def test_a_managers_agent_of_the_crews_own_leads_a_hierarchical_crew(chat_server: ChatServer) -> None:
    chat_server.answers = ["The article, written by the lead."]
    declared = {
        "process": "hierarchical",
        "manager": "agent",
        "tasks": [{"name": "article", "description": "Write an article", "expectedOutput": "An article"}],
    }
    message = declared_launch(chat_server, declared, [agent("writer", "Writer", chat_server.base_url)])
    message["assignment"]["agent"].update(name="lead", role="Editor in Chief", goal="Publish good articles")
    code, lines, stderr = run_adapter(message)
    assert code == 0, stderr
    assert lines[-1]["outcome"]["output"] == "The article, written by the lead."
    # The manager is the crew's own agent, offered CrewAI's delegation tool over the writer.
    assert "Editor in Chief" in text(chat_server, 0) and "Publish good articles" in text(chat_server, 0)
    assert delegate_tool() in [t["function"]["name"] for t in chat_server.requests[0]["body"].get("tools") or []]


def mcp_tool_name(server: dict[str, Any], tool: str) -> str:
    """The name the model is offered an MCP server's tool by, as CrewAI names it (found through the adapter's code)."""
    from crewai import LLM, Agent
    from crewai.utilities.string_utils import sanitize_tool_name

    from kubecrew_crewai.launch import McpServer
    from kubecrew_crewai.mcp_servers import McpTool, mcp_tools

    spec = McpServer(server["name"], server["url"], server["transport"], server["headers"], None, 10)
    model = LLM(model="openai/x", base_url="http://127.0.0.1:9", api_key="k")
    who = Agent(role="R", goal="g", backstory="b", llm=model)
    tools = mcp_tools(who, [spec], None)
    return next(sanitize_tool_name(t.name) for t in tools if isinstance(t, McpTool) and t.original_name == tool)


def offered(chat_server: ChatServer, index: int) -> list[str]:
    return [t["function"]["name"] for t in chat_server.requests[index]["body"].get("tools") or []]


MCP_SECRET = "mcp-header-secret-0123456789"


def fixture_server(mcp_server: McpFixture) -> dict[str, Any]:
    return {
        "name": "docs",
        "url": mcp_server.url,
        "transport": "streamable-http",
        "headers": {"Authorization": f"Bearer {MCP_SECRET}"},
        "timeoutSeconds": 10,
    }


def test_an_agent_of_a_hierarchical_crew_calls_its_own_mcp_servers_tools(
    chat_server: ChatServer, mcp_server: McpFixture
) -> None:
    server = fixture_server(mcp_server)
    lookup = mcp_tool_name(server, "lookup")
    chat_server.answers = [
        {"name": delegate_tool(), "arguments": {"task": "Look tides up", "context": "", "coworker": "Researcher"}},
        {"name": lookup, "arguments": {"key": "tides"}},
        "Tides: value of tides.",
        "The article on tides.",
    ]
    declared = {
        "process": "hierarchical",
        "manager": "llm",
        "tasks": [{"name": "article", "description": "Write about tides", "expectedOutput": "An article"}],
    }
    agents = [agent("researcher", "Researcher", chat_server.base_url), agent("writer", "Writer", chat_server.base_url)]
    message = declared_launch(chat_server, declared, agents)
    message["agentMcpServers"] = {"researcher": [server]}
    message["secrets"].append(MCP_SECRET)
    code, lines, stderr = run_adapter(message)
    assert code == 0, stderr
    assert lines[-1]["outcome"]["output"] == "The article on tides."
    # The researcher was offered its server's tool and called it; the manager was not offered it.
    assert lookup in offered(chat_server, 1) and lookup not in offered(chat_server, 0)
    assert mcp_server.calls == [("lookup", {"key": "tides"})]
    assert f"Bearer {MCP_SECRET}" in mcp_server.authorizations
    tools = [line for line in lines if "step" in line and line["step"]["kind"] == "tool"]
    assert [(t["taskIndex"], t["step"]["tool"], t["step"]["output"]) for t in tools] == [(0, lookup, "value of tides")]
    assert MCP_SECRET not in json.dumps(lines) + stderr


def test_a_tasks_tools_narrow_its_agents_for_that_task_only(chat_server: ChatServer, mcp_server: McpFixture) -> None:
    server = fixture_server(mcp_server)
    shout = mcp_tool_name(server, "shout")
    lookup = mcp_tool_name(server, "lookup")
    chat_server.answers = [{"name": shout, "arguments": {"text": "tides"}}, "TIDES", "Looked up."]
    declared: dict[str, Any] = {
        "process": "sequential",
        "tasks": [
            {"name": "loud", "description": "Shout", "expectedOutput": "Text", "agent": "writer", "tools": ["shout"]},
            {"name": "plain", "description": "Look up", "expectedOutput": "Text", "agent": "writer"},
        ],
    }
    agents = [
        agent("researcher", "Researcher", chat_server.base_url),
        agent("writer", "Writer", chat_server.base_url, allowDelegation=True, tools=["http_request"]),
    ]
    message = declared_launch(chat_server, declared, agents)
    message["agentMcpServers"] = {"writer": [server]}
    code, lines, stderr = run_adapter(message)
    assert code == 0, stderr
    assert [line["outcome"]["output"] for line in lines if "outcome" in line] == ["TIDES", "Looked up."]
    # The first task offered only the tool it names (and CrewAI's delegation); the second all of the writer's.
    assert shout in offered(chat_server, 0) and delegate_tool() in offered(chat_server, 0)
    assert lookup not in offered(chat_server, 0) and "http_request" not in offered(chat_server, 0)
    assert {shout, lookup, "http_request"} <= set(offered(chat_server, 2))
    assert mcp_server.calls == [("shout", {"text": "tides"})]

    declared["tasks"][0]["tools"] = ["search"]
    message = declared_launch(chat_server, declared, agents)
    code, lines, _ = run_adapter(message | {"agentMcpServers": {"writer": [server]}})
    assert code == 1
    assert lines[-1]["outcome"]["error"] == (
        'task "loud" has tools (search), none of which its agent "writer" has (it has http_request, lookup, shout)'
    )


def test_an_mcp_server_an_agent_cannot_use_fails_the_run_naming_it_and_the_server(chat_server: ChatServer) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    declared = {
        "process": "sequential",
        "tasks": [{"name": "write", "description": "Write", "expectedOutput": "Text", "agent": "writer"}],
    }
    agents = [agent("writer", "Writer", chat_server.base_url, allowDelegation=True)]
    message = declared_launch(chat_server, declared, agents)
    down = {"name": "docs", "url": f"http://127.0.0.1:{port}/mcp", "transport": "streamable-http", "headers": {}}
    message["agentMcpServers"] = {"writer": [down | {"timeoutSeconds": 5}]}
    code, lines, _ = run_adapter(message)
    assert code == 1
    error = lines[-1]["outcome"]["error"]
    assert error.startswith(f'agent "writer": MCP server "docs" (http://127.0.0.1:{port}/mcp): cannot be used:'), error
    assert chat_server.requests == []
