"""`python -m kubecrew_crewai`: runs one task of a crew with CrewAI.

stdin: one JSON launch message (launch.py), from the runner. stdout: JSON lines, `{"step": …}` as each LLM call and
tool call ends and `{"outcome": …}` last (protocol.py). stderr: the log. Exit status 0 when the task succeeded, 1 when
it failed (the outcome says why), 2 when there is no outcome (a launch message it cannot read). A launch message with a
`project` runs the user's whole CrewAI project instead (project.py): one outcome line per task, steps tagged with theirs.
"""

from __future__ import annotations

import logging
import os
import sys

from .protocol import Emitter, take_stdout
from .redact import RedactingFilter, Redactor
from .startup import load_crewai
from .tracing import TRACEPARENT, Tracing, start_tracing

#: CrewAI's telemetry, its traces and OpenTelemetry off: no call leaves the process but the crew's own.
QUIET_ENV = {
    "CREWAI_DISABLE_TELEMETRY": "true",
    "CREWAI_DISABLE_TRACKING": "true",
    "CREWAI_TRACING_ENABLED": "false",
    "OTEL_SDK_DISABLED": "true",
}


def end_with_parent() -> None:
    """Linux: the kernel sends SIGTERM to this process when the runner that started it dies, so no adapter outlives
    its task (a runner killed with SIGKILL cannot forward anything). A runner that died before the request (while
    Python started) is not told of: the parent is no longer the runner that said its pid, and this process ends."""
    import signal

    try:
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
    except (OSError, AttributeError):
        return
    runner = os.environ.get("KUBECREW_RUNNER_PID", "")
    if runner.isdigit() and os.getppid() != int(runner):
        os.kill(os.getpid(), signal.SIGTERM)


#: The exit status after SIGTERM, as a shell reports a process that signal ended.
STOPPED_STATUS = 128 + 15


def end_on_sigterm(emitter: Emitter) -> None:
    """SIGTERM (a stop, the Job's deletion, its deadline, the runner's end) ends the process at once. Every step and
    outcome was written as it happened, so nothing is left to save. A handler of CrewAI's (its telemetry's, were it on)
    or of the project's would instead raise SystemExit in whatever the crew is doing, and the interpreter would then
    wait for its threads (an LLM call in flight). A line being written is finished first, so the runner never reads
    half of one."""
    import signal

    def stop(_signum: int, _frame: object) -> None:
        emitter.quiet(timeout=1.0)
        os._exit(STOPPED_STATUS)

    signal.signal(signal.SIGTERM, stop)


def end_on_sigterm_while_loading() -> None:
    """Until the launch message is read (and end_on_sigterm takes over) there is nothing to finish: SIGTERM ends the
    process at once, with the same status."""
    import signal

    signal.signal(signal.SIGTERM, lambda _signum, _frame: os._exit(STOPPED_STATUS))


def main(tracing: Tracing | None = None) -> int:
    end_with_parent()
    protocol = take_stdout()
    for name, value in QUIET_ENV.items():
        os.environ[name] = value
    end_on_sigterm_while_loading()
    # CrewAI first, the launch message after: a runner that starts the adapter early has it loaded by then.
    load_crewai()
    from .launch import LaunchError, parse_launch

    try:
        launch = parse_launch(sys.stdin.read())
    except LaunchError as error:
        print(f"kubecrew_crewai: {error}", file=sys.stderr)
        return 2
    os.environ.update(launch.env)
    redactor = Redactor(launch.secrets)
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(RedactingFilter(redactor))
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)
    emitter = Emitter(protocol, redactor)
    end_on_sigterm(emitter)
    if tracing is not None:
        tracing.traceparent = launch.env.get(TRACEPARENT, tracing.traceparent)
        tracing.follow(launch)

    if launch.project is not None:
        from .project import run_project

        return run_project(launch, launch.project, emitter)

    from .steps import StepListener
    from .task import timed

    listener = StepListener(emitter)
    listener.subscribe()
    fields, seconds = timed(launch)
    from crewai.events import crewai_event_bus

    crewai_event_bus.flush(timeout=10)
    emitter.outcome(
        {
            "taskName": launch.task_name,
            "taskIndex": launch.task_index,
            "agent": launch.agent_role,
            **fields,
            "executionTime": seconds,
            "tokenUsage": listener.tokens,
            **({"model": launch.model_label} if launch.model_label else {}),
            "attempt": launch.attempt,
        }
    )
    return 0 if "output" in fields else 1


if __name__ == "__main__":
    # kubecrew's own spans (tracing.py) from the operator's OTEL_* variables, made before main() sets
    # OTEL_SDK_DISABLED for CrewAI's telemetry (the OpenTelemetry SDK reads it when a provider is made).
    tracing = start_tracing(os.environ)
    status = main(tracing)
    if tracing is not None:
        tracing.finish(status)
    sys.stdout.flush()
    sys.stderr.flush()
    # The outcome is written: the interpreter's teardown (CrewAI's event bus and thread pools, thousands of modules)
    # took seconds a task and has nothing left to do.
    os._exit(status)
