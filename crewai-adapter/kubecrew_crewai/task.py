"""One kubecrew task carried out by CrewAI: the agent, the task with the earlier tasks' outputs as its context, and a
sequential Crew of that one task, as CrewAI's sequential process would run it at this point of the crew."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .guardrails import Guardrail, task_guardrails
from .launch import Launch
from .llm import LlmConfigError, build_llm
from .mcp_servers import McpServerUnusable, mcp_tools
from . import references
from .review import install

if TYPE_CHECKING:
    from crewai import Agent, Crew, Task
    from crewai.tasks.task_output import TaskOutput
    from crewai.tools import BaseTool

#: The largest output kept whole (core/task-assignment.ts); a larger one fails the task instead of being cut.
MAX_TASK_OUTPUT_BYTES = 1024 * 1024


class TaskFailed(Exception):
    """The task ended without an output; the message is the outcome's error (one line)."""


def one_line(text: str) -> str:
    return " ".join(text.split())


def context_tasks(launch: Launch, agent: Agent) -> list[Task]:
    """The earlier tasks, each carrying its output: CrewAI builds the task's context from these outputs itself."""
    from crewai import Task
    from crewai.tasks.task_output import TaskOutput

    tasks = []
    for earlier in launch.context:
        task = Task(name=earlier.task, description=earlier.task, expected_output=earlier.task, agent=agent)
        task.output = TaskOutput(name=earlier.task, description=earlier.task, raw=earlier.output, agent=agent.role)
        tasks.append(task)
    return tasks


def task_tools(launch: Launch) -> list[BaseTool]:
    tools: list[BaseTool] = []
    offered = launch.only is None or "http_request" in launch.only
    if "http_request" in launch.agent_tools and offered:
        from .http_request_tool import HttpRequestTool

        tools.append(HttpRequestTool(allowed_hosts=launch.allowed_hosts))
    return tools


def python_fields(launch: Launch, agent: Agent) -> dict[str, Any]:
    """The task's references into the user's code, imported: its tools join the agent's (the agent is this task's
    alone), its model becomes the Task's output_pydantic, its guardrail the first of the task's (guardrail_fields)."""
    refs = launch.python
    if refs is None:
        return {}
    try:
        agent.tools = [*(agent.tools or []), *(references.tool(r) for r in refs.tools)]
        fields: dict[str, Any] = {}
        if refs.output_pydantic:
            fields["output_pydantic"] = references.model(refs.output_pydantic)
        if refs.guardrail:
            fields["guardrail"] = references.function(refs.guardrail)
    except references.ReferenceUnusable as error:
        raise TaskFailed(str(error)) from error
    return fields


def guardrail_fields(launch: Launch, function: Guardrail | None) -> dict[str, Any]:
    """The task's guardrails as CrewAI takes them: the python.guardrail function first, then guardrails[] and the rule
    in words. One goes as CrewAI's guardrail; more as its guardrails list (given a list, CrewAI ignores guardrail)."""
    try:
        made = [*([function] if function is not None else []), *task_guardrails(launch.guardrail, launch.guardrails)]
    except ValueError as error:
        raise TaskFailed(str(error)) from error
    if not made:
        return {}
    fields: dict[str, Any] = {"guardrail": made[0]} if len(made) == 1 else {"guardrails": made}
    if launch.guardrail_max_retries is not None:
        fields["guardrail_max_retries"] = launch.guardrail_max_retries
    return fields


def output_json(launch: Launch) -> dict[str, Any]:
    """The task's outputJson as CrewAI's output_json: a pydantic model made from the schema by CrewAI itself."""
    if launch.output_json is None:
        return {}
    from crewai.utilities.pydantic_schema_utils import create_model_from_schema

    try:
        model = create_model_from_schema(launch.output_json, model_name=launch.output_json.get("title") or "Output")
    except Exception as error:  # a schema CrewAI cannot turn into a model
        raise TaskFailed(f"outputJson cannot be used by CrewAI: {type(error).__name__}: {error}") from error
    return {"output_json": model}


def build_crew(launch: Launch) -> tuple[Crew, Task]:
    from crewai import Agent, Crew, Process, Task

    if launch.llm is None:
        raise TaskFailed("The agent has no LLM configured (set the crew's llm or the agent's llm)")
    try:
        llm = build_llm(launch.llm)
    except LlmConfigError as error:
        raise TaskFailed(str(error)) from error
    agent = Agent(
        role=launch.agent_role,
        goal=launch.agent_goal,
        backstory=launch.agent_backstory,
        llm=llm,
        tools=task_tools(launch),
        max_iter=launch.max_iter,
        allow_delegation=False,
        verbose=False,
    )
    try:
        agent.tools = [*(agent.tools or []), *mcp_tools(agent, launch.mcp_servers, launch.only)]
    except McpServerUnusable as error:
        raise TaskFailed(str(error)) from error
    python = {**output_json(launch), **python_fields(launch, agent)}
    python.update(guardrail_fields(launch, python.pop("guardrail", None)))
    task = Task(
        name=launch.task_name,
        description=launch.description,
        expected_output=launch.expected_output,
        agent=agent,
        context=context_tasks(launch, agent),
        # A person's feedback reaches CrewAI through its human-input hook, answered by kubecrew (review.py).
        human_input=launch.review is not None,
        **python,
    )
    crew = Crew(agents=[agent], tasks=[task], process=Process.sequential, verbose=False, tracing=False)
    return crew, task


def run_task(launch: Launch) -> dict[str, Any]:
    """Runs the task; the outcome's output or error (and the model, tokens are the step listener's)."""
    from crewai.crews.crew_output import CrewOutput

    crew, _ = build_crew(launch)
    install(launch.review)
    result = crew.kickoff()
    if not isinstance(result, CrewOutput):  # a streaming crew's output; this crew does not stream
        raise TaskFailed(f"CrewAI answered with a {type(result).__name__}, not a CrewOutput")
    task_output = result.tasks_output[0] if result.tasks_output else None
    output = task_output.raw if task_output else result.raw
    size = len(output.encode("utf-8"))
    if size > MAX_TASK_OUTPUT_BYTES:
        raise TaskFailed(f"Task output is {size} bytes, above the 1 MiB limit")
    if not output.strip():
        raise TaskFailed("The LLM returned an empty answer")
    return {"output": output, **json_dict(task_output)}


def json_dict(task_output: TaskOutput | None) -> dict[str, Any]:
    """CrewAI's json_dict (output_json), or the output_pydantic model's JSON: the outcome's jsonDict."""
    if task_output is None:
        return {}
    if task_output.json_dict:
        return {"jsonDict": task_output.json_dict}
    if task_output.pydantic is not None:
        return {"jsonDict": task_output.pydantic.model_dump(mode="json")}
    return {}


def timed(launch: Launch) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    try:
        fields = run_task(launch)
    except TaskFailed as error:
        fields = {"error": one_line(str(error))}
    except Exception as error:  # CrewAI's and its providers' errors: the task fails with the message
        label = launch.model_label or "the model"
        fields = {"error": one_line(f"CrewAI failed ({label}): {type(error).__name__}: {error}")}
    return fields, round(time.monotonic() - started, 3)
