"""OpenTelemetry spans of the task's Python side, in the execution's trace.

With an OTLP endpoint in the standard variables (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT
with /v1/traces; OTLP over HTTP with protobuf, as kubecrew's Node components export) the adapter sends one
`invoke_agent <role>` span, a child of the TRACEPARENT the runner hands it (its task's span), and under it one
`chat <model>` span per LLM call and one `execute_tool <name>` span per tool call, from CrewAI's events and named as
OpenTelemetry's GenAI semantic conventions say. Prompts and completions only with KUBECREW_TRACE_CONTENT=true, and
then without the task's secrets. Without an endpoint nothing is created and no connection is made. The provider is
kubecrew's own: never the global one, which CrewAI's telemetry (switched off) would use.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
import json
import threading
from typing import TYPE_CHECKING, Any

from .launch import Launch
from .redact import Redactor

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

TRACEPARENT = "TRACEPARENT"
TRACE_CONTENT = "KUBECREW_TRACE_CONTENT"
#: The GenAI convention's provider names, where kubecrew's differ.
PROVIDER_NAMES = {"openai": "openai", "anthropic": "anthropic"}


def traces_endpoint(env: Mapping[str, str]) -> str | None:
    """Where spans go; None when no endpoint is set, OTEL_SDK_DISABLED=true, or a protocol other than http/protobuf."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    protocol = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
    if protocol and protocol != "http/protobuf":
        return None
    traces = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if traces:
        return traces
    base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    return f"{base.rstrip('/')}/v1/traces" if base else None


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _nanos(moment: datetime) -> int:
    """Nanoseconds since the epoch, exact (a float timestamp loses the microseconds); naive means local time."""
    aware = moment if moment.tzinfo else moment.astimezone()
    return (aware - _EPOCH) // timedelta(microseconds=1) * 1000


class Tracing:
    """The exporting provider; the spans of one launch come from `task_spans`."""

    def __init__(self, env: Mapping[str, str], exporter: SpanExporter) -> None:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        # Resource.create adds OTEL_RESOURCE_ATTRIBUTES; OTEL_SERVICE_NAME, when set, names the service.
        service = env.get("OTEL_SERVICE_NAME", "").strip() or "kubecrew-crewai"
        self._provider = TracerProvider(resource=Resource.create({"service.name": service}))
        self._provider.add_span_processor(BatchSpanProcessor(exporter))
        self.tracer = self._provider.get_tracer("kubecrew")
        self.content = env.get(TRACE_CONTENT, "").strip().lower() == "true"
        self.traceparent = env.get(TRACEPARENT)
        self._spans: TaskSpans | None = None

    def task_spans(self, launch: Launch) -> TaskSpans:
        return TaskSpans(self, launch)

    def follow(self, launch: Launch) -> None:
        """Starts the launch's agent span and follows CrewAI's events into spans (imports CrewAI)."""
        self._spans = self.task_spans(launch)
        self._spans.subscribe()

    def finish(self, status: int) -> None:
        """Ends the agent span (an error unless the exit status is 0), then sends everything and stops."""
        if self._spans is not None:
            self._spans.end(failed=status != 0)
        self.shutdown()

    def shutdown(self) -> None:
        """Sends what is buffered (a few seconds at most) and stops; never raises: telemetry must not fail a task."""
        try:
            self._provider.shutdown()
        except Exception:  # noqa: BLE001 - the exporter's failure is not the task's
            pass


def start_tracing(env: Mapping[str, str]) -> Tracing | None:
    """Tracing when an endpoint is set; call before OTEL_SDK_DISABLED is set for CrewAI (the SDK reads it once)."""
    endpoint = traces_endpoint(env)
    if endpoint is None:
        return None
    import requests
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    # Straight to the operator's collector, as the runner's own spans go: the proxy variables the runner sets for
    # the crew's calls (its egress policy) are not for kubecrew's telemetry.
    session = requests.Session()
    session.trust_env = False
    return Tracing(env, OTLPSpanExporter(endpoint=endpoint, session=session))


class TaskSpans:
    """The spans of one launch: its agent's invocation and each LLM and tool call CrewAI reports, as they end."""

    def __init__(self, tracing: Tracing, launch: Launch) -> None:
        from opentelemetry.trace import SpanKind
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        self._tracer = tracing.tracer
        self._content = tracing.content
        self._redactor = Redactor(launch.secrets)
        self._provider = PROVIDER_NAMES.get(launch.llm.provider, launch.llm.provider) if launch.llm else None
        self._model = launch.llm.model if launch.llm else None
        parent = TraceContextTextMapPropagator().extract({"traceparent": tracing.traceparent or ""})
        self._agent = self._tracer.start_span(
            f"invoke_agent {launch.agent_role}",
            context=parent,
            kind=SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": launch.agent_role,
                "kubecrew.task": launch.task_name,
                "kubecrew.execution": launch.execution_id,
            },
        )
        from opentelemetry import trace

        self._context = trace.set_span_in_context(self._agent, parent)
        self._started: dict[str, tuple[datetime, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def _text(self, value: Any) -> str:
        text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
        return self._redactor.text(text)

    def llm_started(self, call_id: str, at: datetime, model: str | None, messages: Any, **request: Any) -> None:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": self._model or model or "unknown",
        }
        if self._provider:
            attributes["gen_ai.provider.name"] = self._provider
        if request.get("temperature") is not None:
            attributes["gen_ai.request.temperature"] = float(request["temperature"])
        if request.get("max_tokens") is not None:
            attributes["gen_ai.request.max_tokens"] = int(request["max_tokens"])
        if self._content and messages is not None:
            attributes["gen_ai.input.messages"] = self._text(messages)
        with self._lock:
            self._started[call_id] = (at, attributes)

    def llm_ended(
        self,
        call_id: str,
        at: datetime,
        *,
        usage: dict[str, Any] | None = None,
        response: Any = None,
        finish_reason: str | None = None,
        error: str | None = None,
    ) -> None:
        from opentelemetry.trace import SpanKind, Status, StatusCode

        with self._lock:
            started, attributes = self._started.pop(call_id, (at, {"gen_ai.operation.name": "chat"}))
        if usage:
            attributes["gen_ai.usage.input_tokens"] = int(usage.get("prompt_tokens") or 0)
            attributes["gen_ai.usage.output_tokens"] = int(usage.get("completion_tokens") or 0)
        if finish_reason:
            attributes["gen_ai.response.finish_reasons"] = [finish_reason]
        if self._content and error is None and response is not None:
            attributes["gen_ai.output.messages"] = self._text(response)
        model = attributes.get("gen_ai.request.model", "unknown")
        span = self._tracer.start_span(
            f"chat {model}",
            context=self._context,
            kind=SpanKind.CLIENT,
            start_time=_nanos(started),
            attributes=attributes,
        )
        if error is not None:
            # The kind of failure, not its text: a provider's message may quote the request.
            span.set_status(Status(StatusCode.ERROR, "LLM call failed"))
        span.end(end_time=_nanos(at))

    def tool_ended(self, tool: str, started: datetime, ended: datetime, error: str | None = None) -> None:
        """A tool call: its name only; its input and output may hold what the task is about."""
        from opentelemetry.trace import SpanKind, Status, StatusCode

        span = self._tracer.start_span(
            f"execute_tool {tool}",
            context=self._context,
            kind=SpanKind.INTERNAL,
            start_time=_nanos(started),
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool},
        )
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, "tool call failed"))
        span.end(end_time=_nanos(ended))

    def end(self, failed: bool) -> None:
        from opentelemetry.trace import Status, StatusCode

        if failed:
            self._agent.set_status(Status(StatusCode.ERROR, "task failed"))
        self._agent.end()

    def subscribe(self) -> None:
        """Registers the handlers on CrewAI's event bus, beside the steps' (imports CrewAI)."""
        from crewai.events import (
            LLMCallCompletedEvent,
            LLMCallFailedEvent,
            LLMCallStartedEvent,
            ToolUsageErrorEvent,
            ToolUsageFinishedEvent,
            ToolUsageStartedEvent,
            crewai_event_bus,
        )

        tool_starts: dict[str, datetime] = {}

        @crewai_event_bus.on(LLMCallStartedEvent)
        async def on_llm_started(_source: Any, event: LLMCallStartedEvent) -> None:
            self.llm_started(
                event.call_id,
                event.timestamp,
                event.model,
                event.messages,
                temperature=event.temperature,
                max_tokens=event.max_tokens,
            )

        @crewai_event_bus.on(LLMCallCompletedEvent)
        async def on_llm_completed(_source: Any, event: LLMCallCompletedEvent) -> None:
            self.llm_ended(
                event.call_id,
                event.timestamp,
                usage=event.usage,
                response=event.response,
                finish_reason=event.finish_reason,
            )

        @crewai_event_bus.on(LLMCallFailedEvent)
        async def on_llm_failed(_source: Any, event: LLMCallFailedEvent) -> None:
            self.llm_ended(event.call_id, event.timestamp, error=event.error)

        @crewai_event_bus.on(ToolUsageStartedEvent)
        async def on_tool_started(_source: Any, event: ToolUsageStartedEvent) -> None:
            tool_starts[event.tool_name] = event.timestamp

        @crewai_event_bus.on(ToolUsageFinishedEvent)
        async def on_tool_finished(_source: Any, event: ToolUsageFinishedEvent) -> None:
            failed = str(event.failure) if event.failure is not None else None
            self.tool_ended(event.tool_name, event.started_at, event.finished_at, failed)

        @crewai_event_bus.on(ToolUsageErrorEvent)
        async def on_tool_error(_source: Any, event: ToolUsageErrorEvent) -> None:
            started = tool_starts.pop(event.tool_name, event.timestamp)
            self.tool_ended(event.tool_name, started, event.timestamp, str(event.error))
