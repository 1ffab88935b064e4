"""CrewAI's own verdict on crew definitions, for the import conformance test (test/integration/import/).

Run with the Python of the pinned CrewAI virtual environment (hack/crewai-venv.sh):
    python crewai_verdicts.py CASES.json
CASES.json is a list of {"id", "kind", "path", "build"}:
  kind "json-project": path is a crew.jsonc (agents/ beside it), checked by CrewAI's JSON-first validation
                       (validate_crew_project), then built (load_crew) unless build is false;
  kind "inline":       path is a YAML or JSON file holding a CrewDefinition, checked by CrewDefinition and the
                       JSON-first validation, then built (load_crew_from_definition) unless build is false;
  kind "crewbase":     path is a src/ folder and "module" the package, or a crew.py itself: its @CrewBase class is
                       instantiated and its crew() built, as `crewai run` does;
  kind "model-fields": no path: "fields" lists the fields a definition may set on Agent, Task and Crew.
Building never runs a model. Prints one JSON list of {"id", "accepted", "errors", "crew"} where crew summarises what
CrewAI built (agents, tasks, process, inputs) for the test to compare with the import; "jsonc" holds the value
CrewAI's JSONC parser reads from each .jsonc/.json file of a JSON-first project.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
from pathlib import Path
import sys
import tempfile
from typing import Any

import yaml
from crewai.project.crew_definition import CrewDefinition
from crewai.project.crew_loader import load_crew, load_crew_from_definition
from crewai.project.json_loader import load_jsonc_file, validate_crew_project


def llm_summary(llm: Any) -> dict[str, Any] | None:
    if llm is None:
        return None
    return {
        "model": getattr(llm, "model", None),
        "provider": getattr(llm, "provider", None),
        "base_url": getattr(llm, "base_url", None) or getattr(llm, "api_base", None),
        "temperature": getattr(llm, "temperature", None),
        "max_tokens": getattr(llm, "max_tokens", None),
    }


def mcp_summary(entry: Any) -> Any:
    if isinstance(entry, str):
        return entry
    return {"url": getattr(entry, "url", None), "streamable": getattr(entry, "streamable", None)}


def crew_summary(crew: Any, inputs: dict[str, Any]) -> dict[str, Any]:
    return {
        "process": crew.process.value,
        "inputs": inputs,
        "agents": [
            {
                "role": agent.role,
                "goal": agent.goal,
                "backstory": agent.backstory,
                "max_iter": agent.max_iter,
                "llm": llm_summary(agent.llm),
                "apps": agent.apps,
                "mcps": [mcp_summary(m) for m in agent.mcps or []],
            }
            for agent in crew.agents
        ],
        "tasks": [
            {
                "name": task.name,
                "description": task.description,
                "expected_output": task.expected_output,
                "agent": task.agent.role if task.agent else None,
                "context": [c.name for c in task.context] if isinstance(task.context, list) else None,
                "async_execution": bool(task.async_execution),
                "human_input": bool(task.human_input),
                "structured_output": bool(task.output_json or task.output_pydantic or task.response_model),
                "guardrail": task.guardrail if isinstance(task.guardrail, str) else None,
                "guardrails": [g for g in task.guardrails or [] if isinstance(g, str)]
                if isinstance(task.guardrails, list)
                else None,
                "guardrail_max_retries": task.guardrail_max_retries,
            }
            for task in crew.tasks
        ],
    }


def load_data(path: Path) -> Any:
    if path.suffix in (".json", ".jsonc"):
        return load_jsonc_file(path)
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def as_json_project(definition: dict[str, Any]) -> Path:
    """The same crew as a JSON-first project, for CrewAI's validation that runs no project code."""
    folder = Path(tempfile.mkdtemp(prefix="crewai-verdict-"))
    (folder / "agents").mkdir()
    manager = definition.get("manager_agent")
    for name, body in definition["agents"].items():
        (folder / "agents" / f"{name}.json").write_text(json.dumps(body, default=str), encoding="utf-8")
    names = [name for name in definition["agents"] if name != manager]
    crew = {**definition, "agents": names}
    (folder / "crew.json").write_text(json.dumps(crew, default=str), encoding="utf-8")
    return folder / "crew.json"


def model_fields() -> dict[str, Any]:
    """The fields a definition may set on CrewAI's Agent, Task (and ConditionalTask) and Crew."""
    from crewai import Agent, Crew, Task
    from crewai.project import json_loader
    from crewai.tasks.conditional_task import ConditionalTask

    task_fields = set(Task.model_fields) | set(ConditionalTask.model_fields)
    return {
        "agent": sorted(set(Agent.model_fields) - json_loader._AGENT_RUNTIME_FIELDS),
        "task": sorted(task_fields - json_loader._TASK_RUNTIME_FIELDS),
        # A definition's crew also holds its inputs' defaults (CrewDefinition's, and the JSON loader's extra field).
        "crew": sorted((set(Crew.model_fields) - json_loader._CREW_RUNTIME_FIELDS) | {"inputs"}),
        "max_iter": Agent.model_fields["max_iter"].default,
    }


def verdict(case: dict[str, Any]) -> dict[str, Any]:
    path = Path(case.get("path", "."))
    build = case.get("build", True)
    result: dict[str, Any] = {"id": case["id"], "accepted": False, "errors": [], "crew": None}
    try:
        if case["kind"] == "json-project":
            result["jsonc"] = {
                str(file): load_jsonc_file(file)
                for file in [path, *sorted((path.parent / "agents").glob("*.json*"))]
            }
            validate_crew_project(path)
            if build:
                crew, inputs = load_crew(path)
                result["crew"] = crew_summary(crew, inputs)
        elif case["kind"] == "inline":
            data = load_data(path)
            definition = CrewDefinition.model_validate(data).model_dump(mode="python", exclude_none=True)
            validate_crew_project(as_json_project(definition))
            if build:
                crew, inputs = load_crew_from_definition(data, source=str(path), project_root=path.parent)
                result["crew"] = crew_summary(crew, inputs)
        elif case["kind"] == "crewbase":
            if path.is_file():
                spec = importlib.util.spec_from_file_location(f"crew_{case['id'].replace(':', '_')}", path)
                assert spec and spec.loader
                module = importlib.util.module_from_spec(spec)
                # @CrewBase finds config/ beside the class's file, through the module's entry here.
                sys.modules[spec.name] = module
                spec.loader.exec_module(module)
            else:
                sys.path.insert(0, str(path))
                module = importlib.import_module(f"{case['module']}.crew")
            classes = [v for v in vars(module).values() if getattr(v, "is_crew_class", False)]
            crew = classes[0]().crew()
            result["crew"] = crew_summary(crew, {})
        elif case["kind"] == "model-fields":
            result["fields"] = model_fields()
        else:
            raise ValueError(f"unknown kind {case['kind']}")
        result["accepted"] = True
    except Exception as exc:  # CrewAI's refusal, whatever its class
        result["errors"] = [line for line in str(exc).splitlines() if line.strip()][:20]
    return result


def main() -> None:
    cases = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    verdicts = []
    # CrewAI prints banners and warnings to stdout: keep stdout for the verdicts alone.
    with contextlib.redirect_stdout(sys.stderr):
        for case in cases:
            verdicts.append(verdict(case))
    json.dump(verdicts, sys.stdout, default=str)


if __name__ == "__main__":
    main()
