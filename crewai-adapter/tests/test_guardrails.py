"""A task's guardrail and guardrails[] run by the real CrewAI: a failed check is a step with its reason, the retry
carries the reason to the model, and checks that never pass fail the task."""

import json
from typing import Any

import pytest

from kubecrew_crewai.guardrails import GuardrailCheck, python_pattern, task_guardrails
from kubecrew_crewai.launch import parse_launch

from .conftest import ChatServer, launch_message
from .test_main import run_adapter


def guarded(chat_server: ChatServer, **task: Any) -> dict[str, Any]:
    message = launch_message(
        llm={"provider": "openai-compatible", "model": "llama3", "baseURL": chat_server.base_url},
    )
    message["assignment"]["task"].update(task)
    return message


def steps_of(lines: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [line["step"] for line in lines if "step" in line and line["step"]["kind"] == kind]


def request_text(chat_server: ChatServer, index: int) -> str:
    return json.dumps(chat_server.requests[index]["body"]["messages"])


def test_the_launch_carries_the_guardrails() -> None:
    message = launch_message()
    message["assignment"]["task"]["guardrail"] = "Be polite."
    message["assignment"]["task"]["guardrails"] = [{"maxLength": 280}, {"regex": "^A"}, {"llm": "No jargon."}]
    launch = parse_launch(json.dumps(message))
    assert launch.guardrail == "Be polite."
    assert launch.guardrails == [
        GuardrailCheck("maxLength", 280),
        GuardrailCheck("regex", "^A"),
        GuardrailCheck("llm", "No jargon."),
    ]
    assert parse_launch(json.dumps(launch_message())).guardrails == []


def test_a_failed_built_in_check_is_a_step_and_its_reason_reaches_the_retry(chat_server: ChatServer) -> None:
    chat_server.answers = ["An answer far longer than twenty characters.", "Short and right."]
    message = guarded(chat_server, guardrails=[{"maxLength": 20}, {"regex": "^Short"}])
    code, lines, stderr = run_adapter(message)
    assert code == 0, stderr
    assert lines[-1]["outcome"]["output"] == "Short and right."
    checks = steps_of(lines, "guardrail")
    assert [(s["input"], s.get("output"), s.get("error")) for s in checks] == [
        ("maxLength 20", None, "the answer has 44 characters, more than 20"),
        ("maxLength 20", "passed", None),
        ("regex ^Short", "passed", None),
    ]
    # The step came after the LLM turn whose answer it checked, and the retry told the model why.
    kinds = [line["step"]["kind"] for line in lines if "step" in line]
    assert kinds[:2] == ["llm", "guardrail"]
    assert len(chat_server.requests) == 2
    assert "more than 20" in request_text(chat_server, 1)


def test_a_json_schema_check(chat_server: ChatServer) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    chat_server.answers = ['{"n": "two"}', '```json\n{"n": 2}\n```']
    code, lines, stderr = run_adapter(guarded(chat_server, guardrails=[{"jsonSchema": schema}]))
    assert code == 0, stderr
    checks = steps_of(lines, "guardrail")
    assert checks[0]["input"] == "jsonSchema" and "$.n 'two' is not of type 'integer'" == checks[0]["error"]
    assert checks[1]["output"] == "passed"


def test_a_rule_in_words_is_crewais_llm_guardrail(chat_server: ChatServer) -> None:
    rule = "The answer must name at least one real company."
    chat_server.answers = [
        "Agents are useful.",
        json.dumps({"valid": False, "feedback": "No company is named."}),
        "Acme uses agents.",
        json.dumps({"valid": True, "feedback": None}),
    ]
    code, lines, stderr = run_adapter(guarded(chat_server, guardrail=rule))
    assert code == 0, stderr
    assert lines[-1]["outcome"]["output"] == "Acme uses agents."
    checks = steps_of(lines, "guardrail")
    assert [(s["input"], s.get("output"), s.get("error")) for s in checks] == [
        (f"llm: {rule}", None, "No company is named."),
        (f"llm: {rule}", "passed", None),
    ]
    # CrewAI's guardrail agent put the rule and the answer to the model; the retry carried its feedback.
    assert rule in request_text(chat_server, 1) and "Agents are useful." in request_text(chat_server, 1)
    assert "No company is named." in request_text(chat_server, 2)
    # The guardrail's model calls are LLM steps of the task, and their tokens count.
    assert len(steps_of(lines, "llm")) == 4
    assert lines[-1]["outcome"]["tokenUsage"]["totalTokens"] == 4 * 14


def test_an_answer_that_never_passes_fails_the_task_after_the_retries(chat_server: ChatServer) -> None:
    chat_server.answer = "Never short enough for this."
    message = guarded(chat_server, guardrails=[{"maxLength": 5}], guardrailMaxRetries=1)
    code, lines, _ = run_adapter(message)
    assert code == 1
    assert len(chat_server.requests) == 2
    error = lines[-1]["outcome"]["error"]
    assert "after 1 retries" in error and "more than 5" in error
    assert [s["error"] for s in steps_of(lines, "guardrail")] == ["the answer has 28 characters, more than 5"] * 2


def test_the_checks_in_the_kubecrew_runtimes_order() -> None:
    made = task_guardrails("Rule.", [GuardrailCheck("llm", "First."), GuardrailCheck("maxLength", 3)])
    assert made[0] == "First." and made[2] == "Rule."
    assert getattr(made[1], "__name__") == "maxLength 3"


def test_javascript_named_groups_become_pythons() -> None:
    assert python_pattern(r"(?<year>\d{4})-\k<year>(?<=x)(?<!y)") == r"(?P<year>\d{4})-(?P=year)(?<=x)(?<!y)"


def test_a_pattern_python_cannot_read_fails_with_the_pattern_named(chat_server: ChatServer) -> None:
    code, lines, _ = run_adapter(guarded(chat_server, guardrails=[{"regex": "(?<=a+)b"}]))
    assert code == 1
    assert lines[-1]["outcome"]["error"].startswith("the regex guardrail (?<=a+)b cannot be used in Python")
    assert chat_server.requests == []


@pytest.mark.parametrize("retries", [None, 2])
def test_guardrail_max_retries_reaches_crewai(retries: int | None) -> None:
    from kubecrew_crewai.task import guardrail_fields

    message = launch_message()
    message["assignment"]["task"]["guardrails"] = [{"maxLength": 9}, {"regex": "a"}]
    if retries is not None:
        message["assignment"]["task"]["guardrailMaxRetries"] = retries
    fields = guardrail_fields(parse_launch(json.dumps(message)), None)
    assert len(fields["guardrails"]) == 2
    assert fields.get("guardrail_max_retries") == retries
