"""CrewAI's events as kubecrew steps: each LLM call, each tool call and each check of an answer (a guardrail), as it
ends.

The handlers are coroutines: CrewAI runs them one after the other on its event loop, in the order the events were
emitted (its plain handlers run on a pool of threads, where a tool's step could overtake the LLM call that asked for
it).
"""

from __future__ import annotations

from datetime import datetime, timezone
import json
import threading
from typing import Any, Protocol

from .guardrails import check_name


class StepSink(Protocol):
    def step(self, step: dict[str, Any]) -> None: ...


def iso(moment: datetime) -> str:
    """RFC 3339 in UTC with milliseconds, as JavaScript's toISOString writes it."""
    utc = moment.astimezone(timezone.utc) if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def millis(start: datetime, end: datetime) -> int:
    return max(0, round((end - start).total_seconds() * 1000))


def token_usage(usage: dict[str, Any] | None) -> dict[str, int] | None:
    if not usage:
        return None
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    total = int(usage.get("total_tokens") or prompt + completion)
    return {"inputTokens": prompt, "outputTokens": completion, "totalTokens": total}


def _call_name(call: Any) -> str:
    if isinstance(call, dict):
        function = call.get("function")
        if isinstance(function, dict) and function.get("name"):
            return str(function["name"])
        return str(call.get("name") or "?")
    function = getattr(call, "function", None)
    return str(getattr(function, "name", None) or getattr(call, "name", None) or "?")


def llm_output(response: Any) -> str:
    """The turn's text, or the tools it called (`calls: a, b`), as the TypeScript runner words it."""
    if isinstance(response, str):
        return response
    if isinstance(response, list) and response:
        return "calls: " + ", ".join(_call_name(c) for c in response)
    if response is None:
        return ""
    return json.dumps(response, default=str)


def tool_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str, ensure_ascii=False)


def delegation_tool_names() -> set[str]:
    """CrewAI's delegation tools' names, as given and as its native tool calling spells them (from the package)."""
    from crewai.tools.agent_tools.ask_question_tool import AskQuestionTool
    from crewai.tools.agent_tools.delegate_work_tool import DelegateWorkTool
    from crewai.utilities.string_utils import sanitize_tool_name

    names = {str(tool.model_fields["name"].default) for tool in (DelegateWorkTool, AskQuestionTool)}
    return names | {sanitize_tool_name(name) for name in names}


class StepListener:
    """Subscribes to CrewAI's event bus and hands each finished LLM call and tool call to `sink` as a step."""

    def __init__(self, sink: StepSink) -> None:
        self._sink = sink
        self._started: dict[str, datetime] = {}
        self._lock = threading.Lock()
        self.tokens = {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}

    def llm_started(self, call_id: str, at: datetime) -> None:
        with self._lock:
            self._started[call_id] = at

    def llm_ended(
        self, call_id: str, at: datetime, response: Any = None, usage: dict[str, Any] | None = None, error: str | None = None
    ) -> None:
        with self._lock:
            started = self._started.pop(call_id, at)
        tokens = token_usage(usage)
        if tokens:
            for key, value in tokens.items():
                self.tokens[key] += value
        step: dict[str, Any] = {"kind": "llm", "startedAt": iso(started), "durationMs": millis(started, at)}
        if error is not None:
            step["error"] = error
        else:
            step["output"] = llm_output(response)
        if tokens:
            step["tokenUsage"] = tokens
        self._sink.step(step)

    def tool_ended(
        self,
        tool: str,
        args: Any,
        started: datetime,
        ended: datetime,
        output: Any = None,
        error: str | None = None,
    ) -> None:
        step: dict[str, Any] = {
            "kind": "tool",
            "tool": tool,
            "input": json.dumps(args if args is not None else None, default=str, ensure_ascii=False),
            "output": tool_text(output) if error is None else f"Tool error: {error}",
            "startedAt": iso(started),
            "durationMs": millis(started, ended),
        }
        if error is not None:
            step["error"] = error
        self._sink.step(step)

    def delegation_ended(
        self, tool: str, args: Any, started: datetime, ended: datetime, output: Any = None, error: str | None = None
    ) -> None:
        """Work handed to, or a question asked of, a coworker (CrewAI's delegation tools): the coworker ran in this
        process, its own LLM calls are steps too."""
        fields = args if isinstance(args, dict) else {}
        request = fields.get("task") or fields.get("question") or tool_text(args)
        step: dict[str, Any] = {
            "kind": "delegation",
            "tool": tool,
            "coworker": str(fields.get("coworker") or "?"),
            "input": str(request),
            "startedAt": iso(started),
            "durationMs": millis(started, ended),
        }
        if error is not None:
            step["error"] = error
        else:
            step["output"] = tool_text(output)
        self._sink.step(step)

    def guardrail_started(self, key: tuple[Any, ...], at: datetime) -> None:
        with self._lock:
            self._started[f"guardrail:{key}"] = at

    def guardrail_ended(self, key: tuple[Any, ...], check: str, at: datetime, error: str | None) -> None:
        """A check of the task's answer: its input names the check, its output is `passed`, its error the reason the
        answer failed it (CrewAI sends that reason back to the agent with the retry)."""
        with self._lock:
            started = self._started.pop(f"guardrail:{key}", at)
        step: dict[str, Any] = {"kind": "guardrail", "input": check, "startedAt": iso(started)}
        step["durationMs"] = millis(started, at)
        if error is None:
            step["output"] = "passed"
        else:
            step["error"] = error
        self._sink.step(step)

    def subscribe(self) -> None:
        """Registers the handlers on CrewAI's event bus (imports CrewAI)."""
        from crewai.events import (
            LLMCallCompletedEvent,
            LLMCallFailedEvent,
            LLMCallStartedEvent,
            LLMGuardrailCompletedEvent,
            LLMGuardrailStartedEvent,
            ToolUsageErrorEvent,
            ToolUsageFinishedEvent,
            ToolUsageStartedEvent,
            crewai_event_bus,
        )

        tool_starts: dict[str, datetime] = {}
        delegation = delegation_tool_names()

        @crewai_event_bus.on(LLMCallStartedEvent)
        async def on_llm_started(_source: Any, event: LLMCallStartedEvent) -> None:
            self.llm_started(event.call_id, event.timestamp)

        @crewai_event_bus.on(LLMCallCompletedEvent)
        async def on_llm_completed(_source: Any, event: LLMCallCompletedEvent) -> None:
            self.llm_ended(event.call_id, event.timestamp, response=event.response, usage=event.usage)

        @crewai_event_bus.on(LLMCallFailedEvent)
        async def on_llm_failed(_source: Any, event: LLMCallFailedEvent) -> None:
            self.llm_ended(event.call_id, event.timestamp, error=event.error)

        @crewai_event_bus.on(ToolUsageStartedEvent)
        async def on_tool_started(_source: Any, event: ToolUsageStartedEvent) -> None:
            tool_starts[event.tool_name] = event.timestamp

        @crewai_event_bus.on(ToolUsageFinishedEvent)
        async def on_tool_finished(_source: Any, event: ToolUsageFinishedEvent) -> None:
            failure = event.failure
            error = str(getattr(failure, "message", None) or failure) if failure is not None else None
            ended = self.delegation_ended if event.tool_name in delegation else self.tool_ended
            ended(event.tool_name, event.tool_args, event.started_at, event.finished_at, event.output, error)

        @crewai_event_bus.on(ToolUsageErrorEvent)
        async def on_tool_error(_source: Any, event: ToolUsageErrorEvent) -> None:
            started = tool_starts.pop(event.tool_name, event.timestamp)
            ended = self.delegation_ended if event.tool_name in delegation else self.tool_ended
            ended(event.tool_name, event.tool_args, started, event.timestamp, error=str(event.error))

        def guardrail_key(event: LLMGuardrailStartedEvent | LLMGuardrailCompletedEvent) -> tuple[Any, ...]:
            return (event.task_id, event.guardrail_type, event.guardrail_name, event.retry_count)

        @crewai_event_bus.on(LLMGuardrailStartedEvent)
        async def on_guardrail_started(_source: Any, event: LLMGuardrailStartedEvent) -> None:
            self.guardrail_started(guardrail_key(event), event.timestamp)

        @crewai_event_bus.on(LLMGuardrailCompletedEvent)
        async def on_guardrail_completed(_source: Any, event: LLMGuardrailCompletedEvent) -> None:
            name = str(event.guardrail_name or "guardrail")
            check = check_name("llm", name) if event.guardrail_type == "llm" else name
            error = None if event.success else str(event.error or "the answer failed the check")
            self.guardrail_ended(guardrail_key(event), check, event.timestamp, error)
