"""The adapter's stdout: JSON lines, `{"step": TaskStep}` per step as it ends and one `{"outcome": TaskOutcome}` last.

The shapes are core/task-step.ts's TaskStep and core/task-assignment.ts's TaskOutcome; the runner validates every line
with those schemas. Everything else the process prints (CrewAI's console, warnings) goes to stderr, its log.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any, TextIO

from .redact import Redactor


def take_stdout() -> TextIO:
    """The protocol's stream: a private copy of file descriptor 1, which then points at stderr for everything else.

    Called before CrewAI is imported, so that no library (nor a C extension writing to fd 1) can mix text into the
    protocol.
    """
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = os.fdopen(1, "w", buffering=1, encoding="utf-8", closefd=False)
    return os.fdopen(protocol_fd, "w", buffering=1, encoding="utf-8")


class Emitter:
    """Writes protocol lines, one at a time (CrewAI's event handlers run on other threads), every text redacted."""

    def __init__(self, stream: TextIO, redactor: Redactor) -> None:
        self._stream = stream
        self._redactor = redactor
        self._lock = threading.Lock()
        self._index = 0

    def step(self, step: dict[str, Any], task_index: int | None = None, agent: str | None = None) -> None:
        """A step; in a whole project's run (project.py) with the index of the task it belongs to and its agent's role,
        so that the runner reports it as that task's while the task runs."""
        with self._lock:
            numbered = {"index": self._index, **step}
            self._index += 1
            line: dict[str, Any] = {"step": self._redactor.value(numbered)}
            if task_index is not None:
                line["taskIndex"] = task_index
            if agent:
                line["agent"] = self._redactor.value(agent)
            self._write(line)

    def outcome(self, outcome: dict[str, Any]) -> None:
        with self._lock:
            self._write({"outcome": self._redactor.value(outcome)})

    def quiet(self, timeout: float) -> None:
        """Waits (at most `timeout` seconds) for a line being written to be whole, and lets no other line start."""
        self._lock.acquire(timeout=timeout)

    def _write(self, line: dict[str, Any]) -> None:
        self._stream.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._stream.flush()
