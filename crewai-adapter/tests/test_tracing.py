from datetime import datetime, timedelta, timezone
import json

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from kubecrew_crewai.launch import parse_launch
from kubecrew_crewai.tracing import Tracing, start_tracing, traces_endpoint

from .conftest import launch_message

T0 = datetime(2026, 1, 2, 3, 4, 5, 678_000, tzinfo=timezone.utc)
PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def traced(content: bool = False) -> tuple[Tracing, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    env = {"TRACEPARENT": PARENT, "KUBECREW_TRACE_CONTENT": "true" if content else ""}
    return Tracing(env, exporter), exporter


def test_no_endpoint_or_disabled_makes_no_tracing() -> None:
    assert start_tracing({}) is None
    assert start_tracing({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "TRUE"}) is None
    assert traces_endpoint({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"}) == "http://c:4318/v1/traces"
    assert traces_endpoint({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t/x"}) == "http://t/x"
    assert traces_endpoint({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}) is None


def test_llm_and_tool_calls_are_children_of_the_agent_span_under_the_traceparent() -> None:
    tracing, exporter = traced()
    launch = parse_launch(json.dumps(launch_message(secrets=["sk-secret-value"])))
    spans = tracing.task_spans(launch)
    spans.llm_started("c1", T0, "openai/llama3", [{"role": "user", "content": "a private prompt sk-secret-value"}])
    usage = {"prompt_tokens": 40, "completion_tokens": 6}
    spans.llm_ended("c1", T0 + timedelta(milliseconds=250), usage=usage, response="Hi", finish_reason="stop")
    spans.tool_ended("lookup", T0, T0 + timedelta(milliseconds=5), error="boom")
    spans.end(failed=False)
    tracing.shutdown()
    by_name = {s.name: s for s in exporter.get_finished_spans()}
    agent = by_name["invoke_agent Senior Writer"]
    assert format(agent.context.trace_id, "032x") == "0af7651916cd43dd8448eb211c80319c"
    assert agent.parent is not None and format(agent.parent.span_id, "016x") == "b7ad6b7169203331"
    chat = by_name["chat llama3"]
    assert chat.parent is not None and chat.parent.span_id == agent.context.span_id
    assert dict(chat.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "llama3",
        "gen_ai.provider.name": "openai-compatible",
        "gen_ai.usage.input_tokens": 40,
        "gen_ai.usage.output_tokens": 6,
        "gen_ai.response.finish_reasons": ("stop",),
    }
    assert chat.end_time is not None and chat.start_time is not None
    assert chat.end_time - chat.start_time == 250_000_000
    tool = by_name["execute_tool lookup"]
    assert tool.status.is_ok is False
    assert "private prompt" not in str([dict(s.attributes or {}) for s in exporter.get_finished_spans()])


def test_content_only_when_asked_and_without_secrets() -> None:
    tracing, exporter = traced(content=True)
    spans = tracing.task_spans(parse_launch(json.dumps(launch_message(secrets=["sk-secret-value"]))))
    spans.llm_started("c1", T0, None, [{"role": "user", "content": "a private prompt sk-secret-value"}])
    spans.llm_ended("c1", T0, response="the answer")
    spans.end(failed=True)
    tracing.shutdown()
    chat = next(s for s in exporter.get_finished_spans() if s.name.startswith("chat"))
    attributes = dict(chat.attributes or {})
    assert "a private prompt [redacted]" in str(attributes["gen_ai.input.messages"])
    assert attributes["gen_ai.output.messages"] == "the answer"
    agent = next(s for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent"))
    assert agent.status.is_ok is False
