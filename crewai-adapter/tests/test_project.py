"""A whole project as `crewai create crew` writes it, run by `python -m kubecrew_crewai` with its own process."""

from __future__ import annotations

import json
import os
from pathlib import Path
import signal
import subprocess
import sys
import time
from typing import Any

from .conftest import ChatServer, launch_message

SECRET = "sk-project-secret-0123456789"


def create_project(root: Path, name: str) -> Path:
    """The real CLI's project (its telemetry off); the folder to put on PYTHONPATH."""
    crewai = Path(sys.executable).with_name("crewai")
    env = {**os.environ, "CREWAI_DISABLE_TELEMETRY": "true", "GIT_CONFIG_GLOBAL": "/dev/null"}
    subprocess.run(
        [str(crewai), "create", "crew", name, "--classic", "--skip-provider"],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    return root / name / "src"


def project_message(server: ChatServer, crew: str, tasks: list[str]) -> dict[str, Any]:
    message = launch_message(
        llm={"provider": "openai-compatible", "model": "llama3", "baseURL": server.base_url, "apiKey": SECRET},
        secrets=[SECRET],
        project={"crew": crew, "tasks": [{"name": n, "index": i} for i, n in enumerate(tasks)]},
    )
    message["assignment"]["inputs"] = {"topic": "tide pools", "current_year": "2026"}
    return message


def run(message: dict[str, Any], src: Path, home: Path) -> tuple[int, list[dict[str, Any]], str]:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update(HOME=str(home), PYTHONPATH=str(src))
    done = subprocess.run(
        [sys.executable, "-m", "kubecrew_crewai"],
        input=json.dumps(message),
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()], done.stderr


def test_the_cli_project_runs_whole_and_reports_each_task_as_it_completes(chat_server: ChatServer, tmp_path: Path) -> None:
    src = create_project(tmp_path, "tidepool")
    chat_server.answer = "Fixture answer."
    message = project_message(chat_server, "tidepool.crew:Tidepool", ["research_task", "reporting_task"])
    code, lines, stderr = run(message, src, tmp_path)
    assert code == 0, stderr
    outcomes = [line["outcome"] for line in lines if "outcome" in line]
    assert [(o["taskName"], o["taskIndex"], o["output"]) for o in outcomes] == [
        ("research_task", 0, "Fixture answer."),
        ("reporting_task", 1, "Fixture answer."),
    ]
    # Each task's steps come before its outcome, tagged with its index.
    kinds = [(("step", line["taskIndex"]) if "step" in line else ("outcome", line["outcome"]["taskIndex"])) for line in lines]
    assert kinds == [("step", 0), ("outcome", 0), ("step", 1), ("outcome", 1)]
    assert outcomes[0]["agent"] == "tide pools Senior Data Researcher"
    assert outcomes[1]["tokenUsage"]["totalTokens"] == 14
    # The model the project left to the environment is the crew's llm; the inputs and the first output reached it.
    assert [r["body"]["model"] for r in chat_server.requests] == ["llama3", "llama3"]
    assert chat_server.requests[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
    second = json.dumps(chat_server.requests[1]["body"]["messages"])
    assert "tide pools" in json.dumps(chat_server.requests[0]["body"]["messages"]) and "Fixture answer." in second
    # The project's output_file went to the private home, not the (read-only) working directory it was started in.
    assert (tmp_path / "report.md").read_text() == "Fixture answer."
    assert SECRET not in json.dumps(lines) + stderr


def test_a_crew_reference_that_cannot_be_imported_fails_the_first_task_naming_it(
    chat_server: ChatServer, tmp_path: Path
) -> None:
    message = project_message(chat_server, "missing_project.crew:Crew", ["a", "b"])
    code, lines, _ = run(message, tmp_path, tmp_path)
    assert code == 1
    assert [list(line) for line in lines] == [["outcome"]]
    outcome = lines[0]["outcome"]
    assert outcome["taskName"] == "a"
    assert outcome["error"].startswith("runner.crew missing_project.crew:Crew cannot be imported (ModuleNotFoundError")
    assert chat_server.requests == []


def test_tasks_that_differ_from_the_crews_are_refused_naming_both(chat_server: ChatServer, tmp_path: Path) -> None:
    src = create_project(tmp_path, "other")
    code, lines, _ = run(project_message(chat_server, "other.crew:Other", ["research_task"]), src, tmp_path)
    assert code == 1
    assert "has the tasks ['research_task', 'reporting_task'], the Crew lists ['research_task']" in lines[0]["outcome"]["error"]
    assert chat_server.requests == []


def test_sigterm_mid_project_ends_the_process_at_once_with_each_line_whole(chat_server: ChatServer, tmp_path: Path) -> None:
    src = create_project(tmp_path, "stopped")
    chat_server.hold_from = 1  # the second task's model call never gets its answer
    message = project_message(chat_server, "stopped.crew:Stopped", ["research_task", "reporting_task"])
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update(HOME=str(tmp_path), PYTHONPATH=str(src))
    adapter = subprocess.Popen(
        [sys.executable, "-m", "kubecrew_crewai"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert adapter.stdin is not None and adapter.stdout is not None
    adapter.stdin.write(json.dumps(message))
    adapter.stdin.close()
    lines = []
    for text in adapter.stdout:
        lines.append(json.loads(text))
        if "outcome" in lines[-1]:
            break
    deadline = time.monotonic() + 60
    while len(chat_server.requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(chat_server.requests) == 2  # the second task is waiting for its model
    stopped = time.monotonic()
    adapter.send_signal(signal.SIGTERM)
    rest = adapter.stdout.read()
    status = adapter.wait(timeout=30)
    took = time.monotonic() - stopped
    assert status == 143
    assert took < 2.5, f"the adapter took {took:.1f} s to end after SIGTERM"
    lines += [json.loads(line) for line in rest.splitlines()]
    # The finished task's outcome stands; nothing of the stopped one claims an outcome (the runner reports the stop).
    assert [line["outcome"]["taskName"] for line in lines if "outcome" in line] == ["research_task"]


def test_a_project_task_asking_for_human_input_fails_saying_why_and_never_reads_stdin(
    chat_server: ChatServer, tmp_path: Path
) -> None:
    src = create_project(tmp_path, "reviewed")
    crew_py = src / "reviewed" / "crew.py"
    source = crew_py.read_text()
    assert "output_file='report.md'" in source
    crew_py.write_text(source.replace("output_file='report.md'", "output_file='report.md', human_input=True"))
    message = project_message(chat_server, "reviewed.crew:Reviewed", ["research_task", "reporting_task"])
    code, lines, stderr = run(message, src, tmp_path)
    assert code == 1, stderr
    outcomes = [line["outcome"] for line in lines if "outcome" in line]
    assert [o["taskName"] for o in outcomes] == ["research_task", "reporting_task"]
    assert outcomes[0]["output"] == "Fixture answer."
    assert outcomes[1]["error"].startswith(
        'Task "reporting_task" asks for human input (human_input=True), which a whole CrewAI project (runner.crew) '
        "cannot wait for"
    )
    # It failed before its model call, and nothing read the console (stdin is at its end: CrewAI's console provider
    # failed the task with an EOFError after its answer).
    assert len(chat_server.requests) == 1
    assert "EOFError" not in stderr + json.dumps(lines)
