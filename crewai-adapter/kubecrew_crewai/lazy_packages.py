"""Packages whose `__init__` runs only when something asks the package itself for a name.

Some packages CrewAI imports re-export hundreds of modules from their `__init__` that a task never touches, while CrewAI
only imports a few of their submodules or names: `openai.resources` (every endpoint of the OpenAI API, loaded at a
task's first model request), `openai.types` (every request and response type), `chromadb` (its clients, when no
knowledge source is used). Importing a submodule needs only the package's `__path__`, so a deferred package is a module
with its `__path__` and no names until the first lookup of a name it does not have (`pkg.X`, `from pkg import X`).

What the lookup runs depends on the `__init__`. One that only re-exports its own submodules' names (`from .mod import
X as X`, as the OpenAI client's generated packages do) answers `X` by importing `.mod` alone: the statement the
`__init__` would have run for that name, and the same object. Any other `__init__`, and any name the re-exports do not
name (`__all__`, `import *`), runs the `__init__` in full, once. The subpackages of a deferred package are deferred too
when their `__init__` only re-exports. Nothing is left out: the same code runs, later or not at all.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence
import importlib
import importlib.abc
from importlib.machinery import ModuleSpec, PathFinder
import sys
import threading
import types
from typing import Any

_LOADER = "__kubecrew_deferred_init__"

#: A re-exported name: the submodule it comes from (relative to the package, "" for the package) and its name there.
_Source = tuple[str, str]


def reexports(source: str) -> dict[str, _Source] | None:
    """The names an `__init__` re-exports from its own submodules, when that is all it does (a docstring and
    `from __future__` aside); None when it does anything else."""
    names: dict[str, _Source] = {}
    for statement in ast.parse(source).body:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue
        if not isinstance(statement, ast.ImportFrom):
            return None
        if statement.module == "__future__" and statement.level == 0:
            continue
        if statement.level != 1 or any(alias.name == "*" for alias in statement.names):
            return None
        for alias in statement.names:
            names[alias.asname or alias.name] = (statement.module or "", alias.name)
    return names


def _submodules(names: dict[str, _Source]) -> set[str]:
    """The package's submodules that its re-exports import (and so set on it)."""
    return {part.split(".")[0] for part, _attr in names.values() if part}


class _DeferredPackage(types.ModuleType):
    """A package whose `__init__` has not run yet (or only some of its re-exports); a missing name runs what gives it."""

    def __getattr__(self, name: str) -> Any:
        loader = self.__dict__.get(_LOADER)
        if loader is None:  # running its __init__ now, or it ran: the name is not there
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        return loader.lookup(self, name)


class _DeferringLoader(importlib.abc.Loader):
    """Wraps the package's own loader: makes the module, leaves the running of its `__init__` for later."""

    def __init__(self, real: importlib.abc.Loader, names: dict[str, _Source] | None) -> None:
        self._real = real
        self._names = names
        self._parts = _submodules(names) if names is not None else set()
        self._lock = threading.RLock()

    def __getattr__(self, name: str) -> Any:
        # Resource readers, get_filename and the like are the real loader's.
        return getattr(self._real, name)

    def create_module(self, spec: ModuleSpec) -> types.ModuleType | None:
        return self._real.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__class__ = _DeferredPackage
        module.__dict__[_LOADER] = self

    def lookup(self, module: types.ModuleType, name: str) -> Any:
        source = None if self._names is None else self._names.get(name)
        if source is None and name in self._parts:
            source = ("", name)  # `pkg.part` itself, which the __init__'s `from .part import …` would have set
        if source is None:
            self.initialise(module)
            return getattr(module, name)
        # `from .part import attr as name`: what the __init__ would have run for this name, and nothing else. The
        # import system makes threads asking for the same module wait for it; no lock of ours is held meanwhile.
        part, attr = source
        origin = importlib.import_module(f"{module.__name__}.{part}") if part else module
        if part == "" or not hasattr(origin, attr):  # `from . import sub`, or a submodule of `.part`
            value = importlib.import_module(f"{origin.__name__}.{attr}")
        else:
            value = getattr(origin, attr)
        return module.__dict__.setdefault(name, value)

    def initialise(self, module: types.ModuleType) -> None:
        # Another thread asking meanwhile waits here, as it would for a module being imported.
        with self._lock:
            if module.__dict__.pop(_LOADER, None) is None:
                return
            try:
                self._real.exec_module(module)
            finally:
                module.__class__ = types.ModuleType


def _init_source(spec: ModuleSpec) -> str | None:
    if spec.origin is None or not spec.origin.endswith(".py"):
        return None
    with open(spec.origin, encoding="utf-8") as init:
        return init.read()


class _DeferringFinder(importlib.abc.MetaPathFinder):
    def __init__(self, packages: Iterable[str]) -> None:
        self.packages = frozenset(packages)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> ModuleSpec | None:
        listed = fullname in self.packages
        if not listed and not any(fullname.startswith(f"{package}.") for package in self.packages):
            return None
        spec = PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            return spec  # not a package found on the path: imported as usual
        source = _init_source(spec)
        names = None if source is None else reexports(source)
        if not listed and names is None:
            return spec  # a subpackage whose __init__ does more than re-export: imported as usual
        spec.loader = _DeferringLoader(spec.loader, names)
        return spec


def defer_package_inits(packages: Iterable[str]) -> importlib.abc.MetaPathFinder:
    """From now on, importing any of `packages` defers its `__init__`, and importing any of their subpackages whose
    `__init__` only re-exports (packages imported already are left as they are). Answers the finder that does it (in
    sys.meta_path)."""
    finder = _DeferringFinder(packages)
    sys.meta_path.insert(0, finder)
    return finder
