"""`python -m kubecrew_crewai` as the runner starts it, against an OpenAI-compatible server on loopback."""

import json
import os
from pathlib import Path
import subprocess
import sys
import time
from typing import Any

import pytest

from .conftest import ChatServer, launch_message

SECRET = "sk-test-very-secret-0123456789"


def run_adapter(message: dict[str, Any]) -> tuple[int, list[dict[str, Any]], str]:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["HOME"] = str(Path(os.environ.get("TMPDIR", "/tmp")))
    done = subprocess.run(
        [sys.executable, "-m", "kubecrew_crewai"],
        input=json.dumps(message),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return done.returncode, lines, done.stderr


def test_runs_the_task_with_crewai_and_reports_steps_then_the_outcome(chat_server: ChatServer) -> None:
    message = launch_message(
        llm={"provider": "openai-compatible", "model": "llama3", "baseURL": chat_server.base_url, "apiKey": SECRET},
        secrets=[SECRET],
    )
    chat_server.answer = f"Done. (the key was {SECRET})"
    code, lines, stderr = run_adapter(message)
    assert code == 0, stderr
    assert [list(line) for line in lines] == [["step"], ["outcome"]]
    step = lines[0]["step"]
    assert step["index"] == 0 and step["kind"] == "llm"
    assert step["tokenUsage"] == {"inputTokens": 11, "outputTokens": 3, "totalTokens": 14}
    outcome = lines[1]["outcome"]
    assert outcome["output"] == "Done. (the key was [redacted])"
    assert outcome["tokenUsage"]["totalTokens"] == 14
    assert outcome["model"] == "openai-compatible/llama3"
    # The key reached the model server, and nothing the adapter printed.
    assert chat_server.requests[0]["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert SECRET not in json.dumps(lines) + stderr


def test_a_task_that_cannot_run_reports_why(chat_server: ChatServer) -> None:
    code, lines, _ = run_adapter(launch_message(llm={"provider": "mock", "model": "mock"}))
    assert code == 1
    assert lines[-1]["outcome"]["error"].startswith("The mock provider is not available on the crewai runtime")
    assert chat_server.requests == []


def test_an_unreadable_launch_message_exits_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kubecrew_crewai"], input="{}", capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "the launch message has no assignment" in done.stderr


@pytest.mark.parametrize("lives_for", [1.0, 0.0])
def test_ends_when_the_runner_that_started_it_dies(lives_for: float) -> None:
    # A parent that starts the adapter (which then waits for its launch message) and is killed with SIGKILL: after the
    # adapter started (1 s), or at once, before Python could ask the kernel to be told (0 s).
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, os, signal, time; "
            "r, w = os.pipe(); "
            # The launch message's pipe stays open in another process: the adapter's stdin never ends by itself.
            "subprocess.Popen(['sleep', '120'], pass_fds=[w]); "
            "child = subprocess.Popen([sys.executable, '-m', 'kubecrew_crewai'], stdin=r, "
            "env={**os.environ, 'KUBECREW_RUNNER_PID': str(os.getpid())}); "
            "print(child.pid, flush=True); "
            f"time.sleep({lives_for}); os.kill(os.getpid(), signal.SIGKILL)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    parent.wait(timeout=30)

    def ended() -> bool:
        stat = Path(f"/proc/{child}/stat")
        return not stat.exists() or stat.read_text().split(") ")[1].startswith("Z")  # a zombie: init reaps it

    # Well before the launch message's pipe closes (120 s), which would end it too.
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not ended():
        time.sleep(0.1)
    assert ended()


def test_output_json_reaches_crewai_and_its_object_is_the_outcomes_json_dict(chat_server: ChatServer) -> None:
    message = launch_message(
        llm={"provider": "openai-compatible", "model": "llama3", "baseURL": chat_server.base_url, "apiKey": SECRET},
    )
    schema = {
        "type": "object",
        "title": "Facts",
        "properties": {"headline": {"type": "string"}, "count": {"type": "integer"}},
        "required": ["headline", "count"],
    }
    message["assignment"]["task"]["outputJson"] = schema
    chat_server.answer = '{"headline": "Tides", "count": 2}'
    code, lines, stderr = run_adapter(message)
    assert code == 0, stderr
    outcome = lines[-1]["outcome"]
    assert outcome["jsonDict"] == {"headline": "Tides", "count": 2}
    # CrewAI asked for the schema's fields (its own structured-output request or its instructions).
    assert "headline" in json.dumps(chat_server.requests[0]["body"])
