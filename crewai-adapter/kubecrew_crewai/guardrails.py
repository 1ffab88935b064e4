"""A task's `guardrail` and `guardrails[]` as CrewAI runs them: a rule in words becomes CrewAI's own LLM guardrail (the
rule's text, which CrewAI checks with the agent's model), each built-in check (maxLength, regex, jsonSchema) a small
guardrail function answering `(ok, feedback)` the way CrewAI's guardrails do. CrewAI then sends a failed answer back to
the agent with the reason, up to guardrail_max_retries times, and emits each check on its event bus (steps.py).

No `from __future__ import annotations` here: CrewAI reads a guardrail function's return annotation at run time.
"""

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Union

if TYPE_CHECKING:
    from crewai.tasks.task_output import TaskOutput

#: A rule's first characters name an LLM guardrail in its steps (as runner/guardrails.ts names it).
RULE_IN_NAME_CHARS = 200


@dataclass(frozen=True)
class GuardrailCheck:
    """One of a task's `guardrails[]`: `kind` is llm, maxLength, regex or jsonSchema, `value` its argument."""

    kind: str
    value: Any


Guardrail = Union[str, Callable[["TaskOutput"], tuple[bool, Any]]]


def check_name(kind: str, value: Any) -> str:
    """The check in a few words, as a guardrail step's input names it: `maxLength 280`, `regex ^A`, `llm: <rule>`."""
    if kind == "llm":
        rule = str(value)
        return "llm: " + (rule if len(rule) <= RULE_IN_NAME_CHARS else rule[:RULE_IN_NAME_CHARS] + " …")
    if kind == "jsonSchema":
        return "jsonSchema"
    return f"{kind} {value}"


def _named(check: Callable[["TaskOutput"], tuple[bool, Any]], name: str) -> Callable[["TaskOutput"], tuple[bool, Any]]:
    # CrewAI names a function guardrail by its __name__ in its events: the step's input.
    check.__name__ = name
    check.__qualname__ = name
    return check


def max_length(limit: int) -> Callable[["TaskOutput"], tuple[bool, Any]]:
    def check(output: "TaskOutput") -> tuple[bool, Any]:
        length = len(output.raw)  # code points, as the kubecrew runtime counts them
        if length > limit:
            return False, f"the answer has {length} characters, more than {limit}"
        return True, output

    return _named(check, check_name("maxLength", limit))


def python_pattern(pattern: str) -> str:
    """A JavaScript regular expression (the field's documented syntax) in Python's: named groups are spelt apart."""
    named = re.sub(r"\(\?<(?![=!])([A-Za-z_][A-Za-z0-9_]*)>", r"(?P<\1>", pattern)
    return re.sub(r"\\k<([A-Za-z_][A-Za-z0-9_]*)>", r"(?P=\1)", named)


def regex(pattern: str) -> Callable[["TaskOutput"], tuple[bool, Any]]:
    try:
        compiled = re.compile(python_pattern(pattern))
    except re.error as error:
        raise ValueError(f"the regex guardrail {pattern} cannot be used in Python: {error}") from error

    def check(output: "TaskOutput") -> tuple[bool, Any]:
        if compiled.search(output.raw) is None:
            return False, f"the answer does not match /{pattern}/"
        return True, output

    return _named(check, check_name("regex", pattern))


def json_text(answer: str) -> str:
    """The answer without a Markdown code fence around it, as models often wrap JSON."""
    trimmed = answer.strip()
    fenced = re.fullmatch(r"```[A-Za-z]*\s*\n([\s\S]*?)\n?```", trimmed)
    return fenced.group(1) if fenced else trimmed


def json_schema(schema: dict[str, Any]) -> Callable[["TaskOutput"], tuple[bool, Any]]:
    from jsonschema import validators

    validator = validators.validator_for(schema)(schema)

    def check(output: "TaskOutput") -> tuple[bool, Any]:
        try:
            value = json.loads(json_text(output.raw))
        except json.JSONDecodeError as error:
            return False, f"the answer is not JSON ({error})"
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        if errors:
            return False, "; ".join(f"{e.json_path} {e.message}" for e in errors)
        return True, output

    return _named(check, check_name("jsonSchema", None))


def task_guardrails(rule: str | None, checks: list[GuardrailCheck]) -> list[Guardrail]:
    """The guardrails CrewAI gets, in the order the kubecrew runtime checks them: `guardrails[]`, then `guardrail`."""
    made: list[Guardrail] = []
    for check in checks:
        if check.kind == "llm":
            made.append(str(check.value))
        elif check.kind == "maxLength":
            made.append(max_length(int(check.value)))
        elif check.kind == "regex":
            made.append(regex(str(check.value)))
        elif check.kind == "jsonSchema":
            made.append(json_schema(dict(check.value)))
        else:
            raise ValueError(f"a guardrail of kind {check.kind} is not known to the adapter")
    if rule is not None:
        made.append(rule)
    return made
