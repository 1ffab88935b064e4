"""CrewAI's own runtime for declarative flows (crewai.flow/v1), driven for the comparison tests: the reference side
of test/integration/flows/. Reads one JSON object on stdin and prints one JSON object on stdout (after a line
`@@result@@`, since CrewAI prints its own panels).

  {"validate": [<definition>, ...]}  -> {"validate": [{"ok": true} | {"ok": false, "error": "..."}]}
  {"run": [{"path": ..., "inputs": {...}, "feedback": ["...", ...]}, ...]}
                                     -> {"run": [{"methods": [...], "outputs": {...}, "completed": [...], ...}]}

A run loads the file as `crewai run` does (crewai_cli.run_declarative_flow.load_declarative_flow) and kicks it off;
the methods are the order CrewAI's event bus reports them starting; human_feedback reads its answers from `feedback`
in order (CrewAI asks the console with input()). The LLM is whatever the environment names (OPENAI_BASE_URL: the
test's fixture).
"""

import builtins
import json
import sys
from typing import Any


def _validate(document: Any) -> dict[str, Any]:
    from crewai.flow.flow_definition import FlowDefinition

    try:
        FlowDefinition.model_validate(document)
    except Exception as exc:  # noqa: BLE001 - any refusal is the answer
        return {"ok": False, "error": str(exc)}
    return {"ok": True}


def _jsonable(value: Any) -> Any:
    from crewai.utilities.serialization import to_serializable

    return to_serializable(value)


def _output(entry: dict[str, Any]) -> Any:
    value = entry.get("human_feedback", entry["output"])
    if isinstance(value, (str, int, float, bool, list, dict)) or value is None:
        return value
    raw = getattr(value, "raw", None)
    if raw is not None:
        return {"raw": raw}
    return _jsonable(value)


def _run(case: dict[str, Any]) -> dict[str, Any]:
    from crewai.events import crewai_event_bus
    from crewai.events.types.flow_events import MethodExecutionStartedEvent
    from crewai_cli.run_declarative_flow import load_declarative_flow

    methods: list[str] = []
    answers = list(case.get("feedback", []))
    asked: list[str] = []

    def scripted_input(prompt: str = "") -> str:
        asked.append(prompt)
        return answers.pop(0) if answers else ""

    builtins.input = scripted_input
    with crewai_event_bus.scoped_handlers():

        @crewai_event_bus.on(MethodExecutionStartedEvent)
        def _started(_source: Any, event: Any) -> None:
            methods.append(event.method_name)

        flow = load_declarative_flow(case["path"])
        try:
            result = flow.kickoff(inputs=case.get("inputs") or None)
            error = None
        except Exception as exc:  # noqa: BLE001 - the failure is part of what is compared
            result, error = None, f"{type(exc).__name__}: {exc}"
        if hasattr(crewai_event_bus, "flush"):
            crewai_event_bus.flush()
    # The per-method entries are private: the public method_outputs drops the names.
    outputs = {entry["method"]: _output(entry) for entry in flow._method_outputs}
    return {
        "methods": methods,
        "outputs": outputs,
        "completed": [{"method": e["method"], "output": _output(e)} for e in flow._method_outputs],
        "result": _jsonable(result),
        "error": error,
        "feedback_asked": len(asked),
    }


def main() -> None:
    request = json.load(sys.stdin)
    answer: dict[str, Any] = {}
    if "validate" in request:
        answer["validate"] = [_validate(d) for d in request["validate"]]
    if "run" in request:
        answer["run"] = [_run(case) for case in request["run"]]
    sys.stdout.write("\n@@result@@\n" + json.dumps(answer, default=str) + "\n")


if __name__ == "__main__":
    main()
