"""A crew declared in the Crew (not a project of the user's) that CrewAI can only run whole: its process hierarchical
(CrewAI's manager, around managerLlm or the crew's managerAgent, hands each task's work to the agents) or agents with
allow_delegation (their coworkers must be agents of the same Crew). The Crew is built here from the spec's agents (each
with its own tools, MCP servers and connected apps) and tasks (each with its `tools` as CrewAI's task tools) and run by
project.py, which reports each task as CrewAI completes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .guardrails import Guardrail, task_guardrails
from .launch import CrewAgent, DeclaredCrew, DeclaredTask, Launch, LlmSettings
from .llm import LlmConfigError, build_llm
from .mcp_servers import McpServerUnusable, McpTool, mcp_tools
from . import references
from .task import TaskFailed

if TYPE_CHECKING:
    from crewai import Agent, Crew, Task
    from crewai.llms.base_llm import BaseLLM
    from crewai.tools import BaseTool


def model(settings: LlmSettings | None, who: str) -> BaseLLM:
    if settings is None:
        raise TaskFailed(f"{who} has no LLM configured (set the crew's llm or the agent's llm)")
    try:
        return build_llm(settings)
    except LlmConfigError as error:
        raise TaskFailed(f"{who}: {error}") from error


def crew_agent(spec: CrewAgent) -> Agent:
    """The agent with its tools: http_request when it has it, and its MCP servers' tools (its `mcps` and its connected
    apps), found through CrewAI's MCP support as a task's agent's are (mcp_servers.py)."""
    from crewai import Agent

    tools: list[Any] = []
    if "http_request" in spec.tools:
        from .http_request_tool import HttpRequestTool

        tools.append(HttpRequestTool(allowed_hosts=spec.allowed_hosts))
    agent = Agent(
        role=spec.role,
        goal=spec.goal,
        backstory=spec.backstory,
        llm=model(spec.llm, f'agent "{spec.name}"'),
        tools=tools,
        max_iter=spec.max_iter,
        allow_delegation=spec.allow_delegation,
        verbose=False,
    )
    try:
        agent.tools = [*tools, *mcp_tools(agent, spec.mcp_servers, None)]
    except McpServerUnusable as error:
        raise TaskFailed(f'agent "{spec.name}": {error}') from error
    return agent


def task_tools(task: DeclaredTask, agent: Agent | None) -> list[BaseTool]:
    """The tools of its agent's a task's `tools` names (by the name on its server, or as CrewAI names it), as CrewAI's
    Task tools: they replace the agent's own for the task (in a hierarchical crew CrewAI gives them to the manager,
    beside its delegation to the task's agent). CrewAI takes an empty list for none given, so a task that names none
    of its agent's tools fails rather than run with all of them."""
    if task.tools is None:
        return []
    if agent is None:
        raise TaskFailed(f'task "{task.name}" has tools but no agent whose tools they would be')
    named = set(task.tools)
    own: list[BaseTool] = list(agent.tools or [])
    chosen = [t for t in own if t.name in named or (isinstance(t, McpTool) and t.original_name in named)]
    if own and not chosen:
        offered = ", ".join(sorted(t.original_name if isinstance(t, McpTool) else t.name for t in own))
        raise TaskFailed(
            f'task "{task.name}" has tools ({", ".join(task.tools)}), none of which its agent "{task.agent}" has '
            f"(it has {offered})"
        )
    return chosen


def checks(task: DeclaredTask, function: Any, llm: BaseLLM) -> list[Guardrail]:
    """The task's guardrails; a rule in words is CrewAI's LLM guardrail made here with a model, as a hierarchical
    crew's task may have no agent of its own to lend one."""
    from crewai.tasks.llm_guardrail import LLMGuardrail

    try:
        made = [*([function] if function is not None else []), *task_guardrails(task.guardrail, task.guardrails)]
    except ValueError as error:
        raise TaskFailed(str(error)) from error
    return [LLMGuardrail(description=g, llm=llm) if isinstance(g, str) else g for g in made]


def crew_task(task: DeclaredTask, agent: Agent | None, earlier: dict[str, Task], fallback: BaseLLM) -> Task:
    from crewai import Task

    fields: dict[str, Any] = {}
    function = None
    try:
        if task.python is not None:
            fields["tools"] = [references.tool(r) for r in task.python.tools]
            if task.python.output_pydantic:
                fields["output_pydantic"] = references.model(task.python.output_pydantic)
            if task.python.guardrail:
                function = references.function(task.python.guardrail)
    except references.ReferenceUnusable as error:
        raise TaskFailed(str(error)) from error
    if task.output_json is not None:
        from crewai.utilities.pydantic_schema_utils import create_model_from_schema

        title = task.output_json.get("title") or "Output"
        try:
            fields["output_json"] = create_model_from_schema(task.output_json, model_name=title)
        except Exception as error:  # a schema CrewAI cannot turn into a model
            raise TaskFailed(f'task "{task.name}": outputJson cannot be used by CrewAI: {error}') from error
    guardrails = checks(task, function, agent.llm if agent is not None else fallback)  # type: ignore[arg-type]
    if guardrails:
        fields["guardrails"] = guardrails
        if task.guardrail_max_retries is not None:
            fields["guardrail_max_retries"] = task.guardrail_max_retries
    if task.context is not None:
        fields["context"] = [earlier[name] for name in task.context]
    narrowed = task_tools(task, agent)
    if narrowed:
        fields["tools"] = [*fields.get("tools", []), *narrowed]
    return Task(
        name=task.name,
        description=task.description,
        expected_output=task.expected_output,
        agent=agent,
        async_execution=task.async_execution,
        **fields,
    )


def build_declared_crew(launch: Launch, declared: DeclaredCrew) -> Crew:
    from crewai import Agent, Crew, Process

    agents = {spec.name: crew_agent(spec) for spec in declared.agents}
    lead = model(launch.llm, "the manager" if declared.process == "hierarchical" else f'agent "{launch.agent_role}"')
    tasks: dict[str, Task] = {}
    for task in declared.tasks:
        agent = agents.get(task.agent) if task.agent is not None else None
        if task.agent is not None and agent is None:
            raise TaskFailed(f'task "{task.name}" names agent "{task.agent}", which the crew does not have')
        tasks[task.name] = crew_task(task, agent, tasks, lead)
    fields: dict[str, Any] = {}
    if declared.process == "hierarchical":
        if declared.manager == "agent":
            fields["manager_agent"] = Agent(
                role=launch.agent_role,
                goal=launch.agent_goal,
                backstory=launch.agent_backstory,
                llm=lead,
                max_iter=launch.max_iter,
                allow_delegation=True,
                verbose=False,
            )
        else:
            fields["manager_llm"] = lead
    return Crew(
        agents=list(agents.values()),
        tasks=list(tasks.values()),
        process=Process.hierarchical if declared.process == "hierarchical" else Process.sequential,
        verbose=False,
        tracing=False,
        **fields,
    )
