"""What the runner hands the adapter on stdin: one task, its model and its tool sources, secrets already resolved.

The runner (runner/crewai-runtime.ts) validated the assignment with its zod schema; this module reads only the fields
the adapter uses and refuses a message without them, naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
import json
from typing import Any

from .guardrails import GuardrailCheck
from .references import PythonReferences
from .review import Review


class LaunchError(ValueError):
    """A launch message the adapter cannot use."""


@dataclass(frozen=True)
class LlmSettings:
    provider: str
    model: str
    base_url: str | None = None
    api_key: str | None = None
    temperature: float | None = None
    max_output_tokens: int | None = None


@dataclass(frozen=True)
class McpServer:
    name: str
    url: str
    transport: str
    headers: dict[str, str]
    #: Only these tools are offered (the server's allow-list narrowed by #tool selections); all when None.
    tools: list[str] | None
    timeout_seconds: int


@dataclass(frozen=True)
class ContextOutput:
    task: str
    output: str


@dataclass(frozen=True)
class ProjectTask:
    name: str
    index: int


@dataclass(frozen=True)
class DeclaredTask:
    """A task of a crew declared in the Crew (its texts with the inputs filled in), as declared.py gives it to CrewAI."""

    name: str
    description: str
    expected_output: str
    agent: str | None = None
    #: Names of the tasks whose outputs it takes; None: CrewAI's default (every earlier output).
    context: list[str] | None = None
    async_execution: bool = False
    #: The task's `tools`: the only tools of its agent's it may use; all of them when None.
    tools: list[str] | None = None
    guardrail: str | None = None
    guardrails: list[GuardrailCheck] = field(default_factory=list)
    guardrail_max_retries: int | None = None
    output_json: dict[str, Any] | None = None
    python: PythonReferences | None = None


@dataclass(frozen=True)
class CrewAgent:
    """An agent of a declared crew (the assignment's coworkers), with its model's key resolved by the runner."""

    name: str
    role: str
    goal: str
    backstory: str
    tools: list[str]
    max_iter: int
    allow_delegation: bool
    llm: LlmSettings | None
    allowed_hosts: list[str]
    #: Its MCP servers (its `mcps`, and its connected apps' endpoint), resolved by the runner as a task's are.
    mcp_servers: list[McpServer] = field(default_factory=list)


@dataclass(frozen=True)
class DeclaredCrew:
    """A crew declared in the Crew that CrewAI runs whole (hierarchical, or agents that delegate): declared.py."""

    process: str
    #: A hierarchical crew's manager: `llm` (CrewAI's own, around the launch's llm) or `agent` (the launch's agent).
    manager: str | None
    tasks: list[DeclaredTask]
    agents: list[CrewAgent]


@dataclass(frozen=True)
class Project:
    """A whole CrewAI project run as one process for the execution (project.py)."""

    #: `module:Class`, a @CrewBase class in the runner image; None for a declared crew.
    crew: str | None
    #: The Crew's tasks in order: the project's crew must have exactly these.
    tasks: list[ProjectTask]
    #: The execution's inputs, as CrewAI's kickoff takes them.
    inputs: dict[str, Any] = field(default_factory=dict)
    #: The crew as the Crew declares it, when no project class is named.
    declared: DeclaredCrew | None = None


@dataclass(frozen=True)
class Launch:
    execution_id: str
    task_name: str
    task_index: int
    description: str
    expected_output: str
    agent_role: str
    agent_goal: str
    agent_backstory: str
    agent_tools: list[str]
    max_iter: int
    context: list[ContextOutput]
    allowed_hosts: list[str]
    #: The task's `tools`: the names of the only tools it may use; all of its agent's when None.
    only: list[str] | None
    attempt: int
    #: `provider/model`, as outcomes name the model.
    model_label: str | None
    llm: LlmSettings | None
    mcp_servers: list[McpServer] = field(default_factory=list)
    #: Values that must never appear in a step, a log line or the outcome.
    secrets: list[str] = field(default_factory=list)
    #: A revision of a humanInput task: the answer a person sent back and their feedback (None: its first answer).
    review: Review | None = None
    #: References into the user's code (the task's python field): tools, output_pydantic, guardrail.
    python: PythonReferences | None = None
    guardrail_max_retries: int | None = None
    #: The task's guardrail: a rule in words, checked by CrewAI's LLM guardrail.
    guardrail: str | None = None
    #: The task's guardrails[], in order (guardrails.py makes CrewAI guardrails of them).
    guardrails: list[GuardrailCheck] = field(default_factory=list)
    #: The task's outputJson (a JSON Schema): CrewAI's output_json, a model made from it.
    output_json: dict[str, Any] | None = None
    #: The crew's own project, run whole (spec.runner.crew); None: this one task.
    project: Project | None = None
    #: Variables set before the task runs (the runner's egress proxy, the task span's TRACEPARENT): a runner that
    #: started the adapter before it had them (startup.py) hands them over here.
    env: dict[str, str] = field(default_factory=dict)


def _get(obj: Any, path: str, kind: type | tuple[type, ...]) -> Any:
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            raise LaunchError(f"the launch message has no {path}")
        value = value[part]
    if not isinstance(value, kind):
        raise LaunchError(f"the launch message's {path} is not a {getattr(kind, '__name__', kind)}")
    return value


def _opt(obj: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, kind):
        raise LaunchError(f"the launch message's {key} is not a {getattr(kind, '__name__', kind)}")
    return value


def _llm(raw: Any) -> LlmSettings | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise LaunchError("the launch message's llm is not an object")
    return LlmSettings(
        provider=_get(raw, "provider", str),
        model=_get(raw, "model", str),
        base_url=_opt(raw, "baseURL", str),
        api_key=_opt(raw, "apiKey", str),
        temperature=_opt(raw, "temperature", (int, float)),
        max_output_tokens=_opt(raw, "maxOutputTokens", int),
    )


def _mcp_server(raw: Any) -> McpServer:
    headers = _get(raw, "headers", dict)
    return McpServer(
        name=_get(raw, "name", str),
        url=_get(raw, "url", str),
        transport=_get(raw, "transport", str),
        headers={str(k): str(v) for k, v in headers.items()},
        tools=_opt(raw, "tools", list),
        timeout_seconds=_get(raw, "timeoutSeconds", int),
    )


def parse_launch(text: str) -> Launch:
    """The launch message in `text` (JSON); a LaunchError naming what is missing or wrong."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise LaunchError(f"the launch message is not JSON: {error}") from error
    assignment = _get(raw, "assignment", dict)
    agent = _get(assignment, "agent", dict)
    tools = _get(assignment, "tools", dict)
    return Launch(
        execution_id=_get(assignment, "execution.id", str),
        task_name=_get(assignment, "task.name", str),
        task_index=_get(assignment, "task.index", int),
        description=_get(assignment, "task.description", str),
        expected_output=_get(assignment, "task.expectedOutput", str),
        agent_role=_get(agent, "role", str),
        agent_goal=_get(agent, "goal", str),
        agent_backstory=_get(agent, "backstory", str),
        agent_tools=[str(t) for t in _get(agent, "tools", list)],
        max_iter=_get(agent, "maxIter", int),
        context=[
            ContextOutput(task=_get(c, "task", str), output=_get(c, "output", str))
            for c in _get(assignment, "context", list)
        ],
        allowed_hosts=[str(h) for h in _get(tools, "allowedHosts", list)],
        only=_opt(tools, "only", list),
        attempt=_get(raw, "attempt", int),
        model_label=_opt(raw, "modelLabel", str),
        llm=_llm(raw.get("llm")),
        mcp_servers=[_mcp_server(s) for s in _get(raw, "mcpServers", list)],
        secrets=[str(s) for s in _get(raw, "secrets", list) if s],
        review=_review(_get(assignment, "task", dict).get("review")),
        python=_python(_get(assignment, "task", dict).get("python")),
        guardrail_max_retries=_opt(_get(assignment, "task", dict), "guardrailMaxRetries", int),
        output_json=_opt(_get(assignment, "task", dict), "outputJson", dict),
        guardrail=_opt(_get(assignment, "task", dict), "guardrail", str),
        guardrails=_guardrails(_get(assignment, "task", dict).get("guardrails")),
        project=_project(raw.get("project"), assignment, raw.get("agentKeys") or {}, raw.get("agentMcpServers") or {}),
        env=_env(raw.get("env")),
    )


GUARDRAIL_KINDS = ("llm", "maxLength", "regex", "jsonSchema")


def _guardrails(raw: Any) -> list[GuardrailCheck]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise LaunchError("the launch message's assignment.task.guardrails is not a list")
    checks = []
    for i, item in enumerate(raw):
        kinds = [k for k in GUARDRAIL_KINDS if isinstance(item, dict) and item.get(k) is not None]
        if len(kinds) != 1:
            raise LaunchError(f"the launch message's assignment.task.guardrails[{i}] is not one of {GUARDRAIL_KINDS}")
        checks.append(GuardrailCheck(kind=kinds[0], value=item[kinds[0]]))
    return checks


def _env(raw: Any) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        raise LaunchError("the launch message's env is not an object of strings")
    return {str(k): v for k, v in raw.items()}


def _project(
    raw: Any, assignment: dict[str, Any], keys: dict[str, Any], servers: dict[str, Any]
) -> Project | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise LaunchError("the launch message's project is not an object")
    inputs = assignment.get("inputs") or {}
    if not isinstance(inputs, dict):
        raise LaunchError("the launch message's assignment.inputs is not an object")
    declared = raw.get("declared")
    crew = _get(raw, "crew", str) if declared is None else None
    return Project(
        crew=crew,
        tasks=[ProjectTask(name=_get(t, "name", str), index=_get(t, "index", int)) for t in _get(raw, "tasks", list)],
        inputs=inputs,
        declared=None if declared is None else _declared(declared, assignment.get("coworkers") or [], keys, servers),
    )


def _declared(raw: Any, coworkers: list[Any], keys: dict[str, Any], servers: dict[str, Any]) -> DeclaredCrew:
    if not isinstance(servers, dict):
        raise LaunchError("the launch message's agentMcpServers is not an object")
    tasks = []
    for t in _get(raw, "tasks", list):
        context = _opt(t, "context", list)
        only = _opt(t, "tools", list)
        tasks.append(
            DeclaredTask(
                name=_get(t, "name", str),
                description=_get(t, "description", str),
                expected_output=_get(t, "expectedOutput", str),
                agent=_opt(t, "agent", str),
                context=None if context is None else [str(c) for c in context],
                async_execution=bool(t.get("asyncExecution")),
                tools=None if only is None else [str(x) for x in only],
                guardrail=_opt(t, "guardrail", str),
                guardrails=_guardrails(t.get("guardrails")),
                guardrail_max_retries=_opt(t, "guardrailMaxRetries", int),
                output_json=_opt(t, "outputJson", dict),
                python=_python(t.get("python")),
            )
        )
    agents = []
    for c in coworkers:
        agent = _get(c, "agent", dict)
        name = _get(agent, "name", str)
        llm = _llm(agent.get("llm"))
        key = keys.get(name)
        if llm is not None and isinstance(key, str) and key:
            llm = replace(llm, api_key=key)
        agents.append(
            CrewAgent(
                name=name,
                role=_get(agent, "role", str),
                goal=_get(agent, "goal", str),
                backstory=str(agent.get("backstory") or ""),
                tools=[str(x) for x in agent.get("tools") or []],
                max_iter=_get(agent, "maxIter", int),
                allow_delegation=bool(agent.get("allowDelegation")),
                llm=llm,
                allowed_hosts=[str(h) for h in (c.get("tools") or {}).get("allowedHosts") or []],
                mcp_servers=[_mcp_server(s) for s in _agent_servers(servers, name)],
            )
        )
    return DeclaredCrew(process=_get(raw, "process", str), manager=_opt(raw, "manager", str), tasks=tasks, agents=agents)


def _agent_servers(servers: dict[str, Any], name: str) -> list[Any]:
    own = servers.get(name) or []
    if not isinstance(own, list):
        raise LaunchError(f"the launch message's agentMcpServers.{name} is not a list")
    return own


def _python(raw: Any) -> PythonReferences | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise LaunchError("the launch message's assignment.task.python is not an object")
    tools = _opt(raw, "tools", list) or []
    return PythonReferences(
        tools=[str(t) for t in tools],
        output_pydantic=_opt(raw, "outputPydantic", str),
        guardrail=_opt(raw, "guardrail", str),
    )


def _review(raw: Any) -> Review | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise LaunchError("the launch message's assignment.task.review is not an object")
    return Review(previous_output=_get(raw, "previousOutput", str), feedback=_get(raw, "feedback", str))
