from datetime import datetime, timedelta, timezone
from typing import Any

from kubecrew_crewai.steps import StepListener, iso, llm_output


class Sink:
    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []

    def step(self, step: dict[str, Any]) -> None:
        self.steps.append(step)


T0 = datetime(2026, 1, 2, 3, 4, 5, 678_000, tzinfo=timezone.utc)


def test_an_llm_call_becomes_a_step_with_its_duration_and_tokens() -> None:
    sink = Sink()
    listener = StepListener(sink)
    listener.llm_started("c1", T0)
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    listener.llm_ended("c1", T0 + timedelta(milliseconds=250), response="Hello", usage=usage)
    listener.llm_ended("c2", T0, response=[{"function": {"name": "echo"}}, {"function": {"name": "sum"}}])
    assert sink.steps == [
        {
            "kind": "llm",
            "startedAt": "2026-01-02T03:04:05.678Z",
            "durationMs": 250,
            "output": "Hello",
            "tokenUsage": {"inputTokens": 10, "outputTokens": 2, "totalTokens": 12},
        },
        {"kind": "llm", "startedAt": "2026-01-02T03:04:05.678Z", "durationMs": 0, "output": "calls: echo, sum"},
    ]
    assert listener.tokens == {"inputTokens": 10, "outputTokens": 2, "totalTokens": 12}


def test_a_tool_call_and_a_failed_one() -> None:
    sink = Sink()
    listener = StepListener(sink)
    listener.tool_ended("echo", {"text": "x"}, T0, T0 + timedelta(seconds=1), output="Echo: x")
    listener.tool_ended("http_request", {"url": "u"}, T0, T0, error="refused")
    assert sink.steps[0] == {
        "kind": "tool",
        "tool": "echo",
        "input": '{"text": "x"}',
        "output": "Echo: x",
        "startedAt": iso(T0),
        "durationMs": 1000,
    }
    assert sink.steps[1]["error"] == "refused"
    assert sink.steps[1]["output"] == "Tool error: refused"


def test_llm_output_of_other_shapes() -> None:
    assert llm_output(None) == ""
    assert llm_output({"a": 1}) == '{"a": 1}'
