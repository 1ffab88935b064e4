"""bench/crewai-start.ts's Python: runs the adapter (`-m kubecrew_crewai`) as the runner starts it, noting when each
phase of its start ends in $BENCH_MARKS (seconds since $BENCH_T0, the runner's start): interpreter up, CrewAI
imported, launch message read, agent and task built. It wraps the adapter's functions as their modules load (importing
them here would import CrewAI before the adapter does) and changes nothing they do."""

import importlib.abc
from importlib.machinery import PathFinder
import os
import runpy
import sys
import time
from types import ModuleType
from typing import Any, Callable

T0 = float(os.environ["BENCH_T0"])


def mark(name: str) -> None:
    with open(os.environ["BENCH_MARKS"], "a", encoding="utf-8") as marks:
        marks.write(f"{name} {time.time() - T0:.3f}\n")


mark("interpreter up")


def noted(name: str, function: Callable[..., Any], before: bool = False) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if before:
            mark(name)
        result = function(*args, **kwargs)
        if not before:
            mark(name)
        return result

    return wrapper


def patch_launch(module: ModuleType) -> None:
    module.parse_launch = noted("launch read", module.parse_launch, before=True)  # type: ignore[attr-defined]


def patch_task(module: ModuleType) -> None:
    module.build_crew = noted("agent and task built", module.build_crew)  # type: ignore[attr-defined]


AFTER_LOAD: dict[str, Callable[[ModuleType], None]] = {
    "crewai": lambda _module: mark("crewai imported"),
    "kubecrew_crewai.launch": patch_launch,
    "kubecrew_crewai.task": patch_task,
}


class Watch(importlib.abc.MetaPathFinder):
    """Runs AFTER_LOAD's callback once a module has loaded, wherever the adapter imports it."""

    def find_spec(self, fullname, path, target=None):  # type: ignore[no-untyped-def]
        then = AFTER_LOAD.pop(fullname, None)
        if then is None:
            return None
        spec = PathFinder.find_spec(fullname, path, target)
        run = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            then(module)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, Watch())
runpy.run_module("kubecrew_crewai", run_name="__main__", alter_sys=True)
