"""Packages whose `__init__` runs only when something asks the package itself for a name.

Some packages CrewAI imports re-export hundreds of modules from their `__init__` that a task never touches, while CrewAI
only imports a few of their submodules: `openai.resources` (every endpoint of the OpenAI API, loaded at a task's first
model request), `openai.types` (every request and response type), `chromadb` (its clients, when no knowledge source is
used). Importing a submodule needs only the package's `__path__`, so a deferred package is a module with its
`__path__` and no names until the first lookup of a name it does not have (`pkg.X`, `from pkg import X`): its
`__init__` then runs in full, once, and the lookup is answered. Nothing is left out: the same code runs, later or not
at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
import importlib.abc
from importlib.machinery import ModuleSpec, PathFinder
import sys
import threading
import types
from typing import Any

_LOADER = "__kubecrew_deferred_init__"


class _DeferredPackage(types.ModuleType):
    """A package whose `__init__` has not run yet; a missing name runs it."""

    def __getattr__(self, name: str) -> Any:
        loader = self.__dict__.get(_LOADER)
        if loader is None:  # running its __init__ now, or it ran: the name is not there
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        loader.initialise(self)
        return getattr(self, name)


class _DeferringLoader(importlib.abc.Loader):
    """Wraps the package's own loader: makes the module, leaves the running of its `__init__` for later."""

    def __init__(self, real: importlib.abc.Loader) -> None:
        self._real = real
        self._lock = threading.RLock()

    def __getattr__(self, name: str) -> Any:
        # Resource readers, get_filename and the like are the real loader's.
        return getattr(self._real, name)

    def create_module(self, spec: ModuleSpec) -> types.ModuleType | None:
        return self._real.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__class__ = _DeferredPackage
        module.__dict__[_LOADER] = self

    def initialise(self, module: types.ModuleType) -> None:
        # Another thread asking meanwhile waits here, as it would for a module being imported.
        with self._lock:
            if module.__dict__.pop(_LOADER, None) is None:
                return
            try:
                self._real.exec_module(module)
            finally:
                module.__class__ = types.ModuleType


class _DeferringFinder(importlib.abc.MetaPathFinder):
    def __init__(self, packages: Iterable[str]) -> None:
        self.packages = frozenset(packages)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in self.packages:
            return None
        spec = PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            return spec  # not a package found on the path: imported as usual
        spec.loader = _DeferringLoader(spec.loader)
        return spec


def defer_package_inits(packages: Iterable[str]) -> importlib.abc.MetaPathFinder:
    """From now on, importing any of `packages` defers its `__init__` (packages imported already are left as they are).
    Answers the finder that does it (in sys.meta_path)."""
    finder = _DeferringFinder(packages)
    sys.meta_path.insert(0, finder)
    return finder
