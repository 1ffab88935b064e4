"""What a task loads before its launch message is read, so that loading overlaps the runner's own start.

`import crewai` is most of a task's start (thousands of modules, most of them pydantic models). It does not depend on
the task, so it is done first: a runner that starts the adapter early hands the launch message over when it has it,
and by then CrewAI is loaded. What a task does not need is not loaded (lazy_packages.py), and the import's objects
are kept out of the garbage collector's passes.
"""

from __future__ import annotations

import gc

from .lazy_packages import defer_package_inits

#: Packages whose `__init__` re-exports far more than CrewAI imports from them (see lazy_packages.py).
DEFERRED_PACKAGE_INITS = ("openai.resources", "openai.types", "chromadb")


def load_crewai() -> None:
    defer_package_inits(DEFERRED_PACKAGE_INITS)
    # The import makes ~360,000 objects the collector tracks, 1-2 % of them garbage: its passes over them (hundreds
    # during the import) are lost time, and so would every later full pass be (frozen, they are left out of it).
    gc.disable()
    try:
        import crewai  # noqa: F401
    finally:
        gc.freeze()
        gc.enable()
