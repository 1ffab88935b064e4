"""A user's whole CrewAI project (`spec.runner.crew: module:Class`, a @CrewBase class) run unchanged, as one process for
the execution, with the crew's own process (sequential or hierarchical).

The crew's tasks must be the Crew's tasks, by name and in order: each task's result is written as its own outcome line
(with its `taskIndex`) the moment CrewAI reports it complete, and each step carries the index of the task it belongs
to. kubecrew's model settings reach the agents whose model the project left to the environment.
"""

from __future__ import annotations

import importlib
import os
import threading
import time
from typing import TYPE_CHECKING, Any

from .launch import Launch, LlmSettings, Project
from .llm import LlmConfigError, build_llm
from .steps import StepListener
from .task import MAX_TASK_OUTPUT_BYTES, TaskFailed, json_dict, one_line

if TYPE_CHECKING:
    from crewai import Crew
    from crewai.tasks.task_output import TaskOutput


class ProjectUnusable(Exception):
    """The project cannot be run; the message names the reference or what differs."""


class HumanInputRefused(Exception):
    """A task of a whole project asked CrewAI for human input, which kubecrew cannot give it there."""


def _refusal(task: Any) -> HumanInputRefused:
    return HumanInputRefused(
        f'Task "{getattr(task, "name", None) or "?"}" asks for human input (human_input=True), which a whole CrewAI '
        "project (runner.crew) cannot wait for: remove human_input from the project's task, or run the crew task by "
        "task (humanInput on the Crew's task, without runner.crew)"
    )


class ProjectHumanInput:
    """CrewAI's human-input provider in a whole project: the project runs as one run, so kubecrew cannot park one of
    its tasks for a person (core/whole-project.ts refuses humanInput there), and stdin holds only the launch message,
    already read. A task asking for human input fails before its first model call, saying so."""

    def setup_messages(self, context: Any) -> bool:
        if getattr(context.task, "human_input", False):
            raise _refusal(context.task)
        return False

    def post_setup_messages(self, context: Any) -> None:
        return None

    def handle_feedback(self, formatted_answer: Any, context: Any) -> Any:
        raise _refusal(context.task)

    async def handle_feedback_async(self, formatted_answer: Any, context: Any) -> Any:
        raise _refusal(context.task)

    @staticmethod
    def _get_output_string(answer: Any) -> str:
        # Part of CrewAI's provider protocol.
        output = answer.output
        return output if isinstance(output, str) else str(output.model_dump_json())


def import_crew_class(reference: str) -> Any:
    """The class `module:Class` names; a ProjectUnusable naming the reference when it cannot be had."""
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise ProjectUnusable(f"runner.crew {reference} is not module:Class")
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # a missing module, or the user's module raising while it is imported
        raise ProjectUnusable(
            f"runner.crew {reference} cannot be imported ({type(error).__name__}: {error}); "
            "is the project installed in the runner image?"
        ) from error
    if not hasattr(module, attribute):
        raise ProjectUnusable(f"runner.crew {reference}: {module_name} has no attribute {attribute}")
    return getattr(module, attribute)


def model_environment(settings: LlmSettings) -> dict[str, str]:
    """The environment variables CrewAI reads for a model the project does not name (its .env convention)."""
    if settings.provider not in ("openai", "openai-compatible"):
        return {}
    env = {"MODEL": settings.model}
    if settings.api_key:
        env["OPENAI_API_KEY"] = settings.api_key
    elif settings.provider == "openai-compatible":
        env["OPENAI_API_KEY"] = "unused"  # CrewAI's OpenAI client always sends a key; local servers ignore it
    if settings.base_url:
        env["OPENAI_BASE_URL"] = settings.base_url
    return env


def install_default_llm(settings: LlmSettings | None) -> None:
    """Agents without a model of their own (CrewAI's environment fallback) get the crew's `llm`; so do models the project
    names by string alone, through the environment CrewAI reads for their key and base URL."""
    if settings is None:
        return
    for name, value in model_environment(settings).items():
        os.environ.setdefault(name, value)
    try:
        llm = build_llm(settings)
    except LlmConfigError as error:
        raise ProjectUnusable(str(error)) from error
    from crewai.utilities import llm_utils

    if not hasattr(llm_utils, "_llm_via_environment_or_fallback"):
        raise ProjectUnusable("this CrewAI has no environment fallback for models; the adapter does not fit its version")
    # CrewAI builds an agent's model from the environment when it names none: that model is the crew's llm.
    setattr(llm_utils, "_llm_via_environment_or_fallback", lambda: llm)


def build_crew(project: Project, settings: LlmSettings | None) -> Crew:
    from crewai import Crew

    if project.crew is None:
        raise ProjectUnusable("the launch message's project names no crew")
    install_default_llm(settings)
    cls = import_crew_class(project.crew)
    try:
        made = cls().crew()
    except Exception as error:
        raise ProjectUnusable(f"runner.crew {project.crew}: building its crew failed: {type(error).__name__}: {error}")
    if not isinstance(made, Crew):
        raise ProjectUnusable(f"runner.crew {project.crew}: its crew() gave a {type(made).__name__}, not a Crew")
    names = [str(t.name) for t in made.tasks]
    wanted = [t.name for t in project.tasks]
    if names != wanted:
        raise ProjectUnusable(
            f"runner.crew {project.crew} has the tasks {names}, the Crew lists {wanted}: "
            "give the Crew the project's tasks, by name and in order (kubecrew import crewai writes them)"
        )
    made.tracing = False
    return made


class ProjectRun:
    """Turns CrewAI's task events into one outcome per task and tags each step with its task."""

    def __init__(self, launch: Launch, project: Project, sink: Any) -> None:
        self._launch = launch
        self._sink = sink
        self._index = {t.name: t.index for t in project.tasks}
        self._tasks = project.tasks
        self._lock = threading.Lock()
        self.current: int = project.tasks[0].index if project.tasks else 0
        #: The role of the agent on the task running now ("" when CrewAI names none, as a hierarchical crew's tasks).
        self.agent = ""
        self._started: dict[int, float] = {}
        self._tokens: dict[int, dict[str, int]] = {}
        self.reported: set[int] = set()
        self.failed = False

    # StepSink: the step belongs to the task running now (one at a time in sequential and hierarchical crews).
    def step(self, step: dict[str, Any]) -> None:
        with self._lock:
            index, agent = self.current, self.agent
            usage = step.get("tokenUsage")
            if isinstance(usage, dict):
                total = self._tokens.setdefault(index, {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0})
                for key in total:
                    total[key] += int(usage.get(key, 0))
        self._sink.step(step, task_index=index, agent=agent)

    def task_started(self, name: str | None, agent: str = "") -> None:
        with self._lock:
            index = self._index.get(name or "", self.current)
            self.current = index
            self.agent = agent
            self._started.setdefault(index, time.monotonic())

    def outcome(self, index: int, agent: str, fields: dict[str, Any]) -> None:
        with self._lock:
            if index in self.reported:
                return
            self.reported.add(index)
            seconds = round(time.monotonic() - self._started.get(index, time.monotonic()), 3)
            tokens = self._tokens.get(index, {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0})
            if "error" in fields:
                self.failed = True
        name = next(t.name for t in self._tasks if t.index == index)
        label = self._launch.model_label
        self._sink.outcome(
            {
                "taskName": name,
                "taskIndex": index,
                "agent": agent,
                **fields,
                "executionTime": seconds,
                "tokenUsage": tokens,
                **({"model": label} if label else {}),
                "attempt": self._launch.attempt,
            }
        )

    def task_completed(self, name: str | None, output: TaskOutput) -> None:
        index = self._index.get(name or "", self.current)
        raw = output.raw or ""
        size = len(raw.encode("utf-8"))
        if size > MAX_TASK_OUTPUT_BYTES:
            fields: dict[str, Any] = {"error": f"Task output is {size} bytes, above the 1 MiB limit"}
        elif not raw.strip():
            fields = {"error": "The LLM returned an empty answer"}
        else:
            fields = {"output": raw, **json_dict(output)}
        self.outcome(index, str(output.agent or "").strip(), fields)

    def first_unreported(self) -> int | None:
        return next((t.index for t in self._tasks if t.index not in self.reported), None)

    def subscribe(self) -> None:
        from crewai.events import TaskCompletedEvent, TaskStartedEvent, crewai_event_bus

        # Coroutines, like the step listener's: CrewAI runs them in the order the events were emitted, so a task's
        # steps are tagged before the next task starts and written before its outcome.
        @crewai_event_bus.on(TaskStartedEvent)
        async def on_task_started(_source: Any, event: TaskStartedEvent) -> None:
            task = event.task
            agent = str(getattr(getattr(task, "agent", None), "role", "") or "").strip()
            self.task_started(getattr(task, "name", None) or event.task_name, agent)

        @crewai_event_bus.on(TaskCompletedEvent)
        async def on_task_completed(_source: Any, event: TaskCompletedEvent) -> None:
            self.task_completed(getattr(event.task, "name", None) or event.task_name, event.output)


def run_project(launch: Launch, project: Project, sink: Any) -> int:
    """Kicks the project's crew off with the execution's inputs; every task's outcome is written as it completes, and
    a failure becomes the outcome of the first task without one. 0 when every task succeeded."""
    run = ProjectRun(launch, project, sink)
    StepListener(run).subscribe()
    run.subscribe()
    from crewai.events import crewai_event_bus

    # A crew writes its output_file and memory relative to the working directory: the private home, which is writable.
    os.chdir(os.environ.get("HOME") or "/tmp")
    from crewai.core.providers.human_input import set_provider

    set_provider(ProjectHumanInput())
    error: str | None = None
    try:
        if project.declared is not None:
            from .declared import build_declared_crew

            # The Crew's texts come with the inputs filled in: CrewAI is given none to fill in again.
            build_declared_crew(launch, project.declared).kickoff()
        else:
            crew = build_crew(project, launch.llm)
            crew.kickoff(inputs={str(k): v for k, v in project.inputs.items()})
    except (ProjectUnusable, HumanInputRefused, TaskFailed) as unusable:
        error = one_line(str(unusable))
    except Exception as failure:  # CrewAI's and the project's errors: the task running now fails with the message
        label = launch.model_label or "the model"
        error = one_line(f"CrewAI failed ({label}): {type(failure).__name__}: {failure}")
    crewai_event_bus.flush(timeout=10)
    missing = run.first_unreported()
    if missing is not None:
        why = error or "the project's crew ended without running this task"
        run.outcome(missing, launch.agent_role, {"error": why})
    return 1 if run.failed or missing is not None else 0
