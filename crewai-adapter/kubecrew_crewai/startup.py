"""What a task loads before its launch message is read, so that loading overlaps the runner's own start.

`import crewai` is most of a task's start (thousands of modules, most of them pydantic models). It does not depend on
the task, so it is done first: a runner that starts the adapter early hands the launch message over when it has it,
and by then CrewAI is loaded. What a task does not need is not loaded (lazy_packages.py), the validators of the models
it does not use are not built (deferred_model_builds), and the import's objects are kept out of the garbage
collector's passes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
import gc

from .lazy_packages import defer_package_inits

#: Packages whose `__init__` re-exports far more than CrewAI imports from them (see lazy_packages.py).
DEFERRED_PACKAGE_INITS = ("openai.resources", "openai.types", "chromadb")


@contextmanager
def deferred_model_builds() -> Iterator[None]:
    """Pydantic models defined meanwhile build their validator and serializer at their first use, not at their
    definition: pydantic's own `defer_build`, as the default of every model that does not set it.

    `import crewai` defines ~1,400 models (its own, the OpenAI client's, chromadb's) and building their validators
    was a third of it, while a task uses a few dozen. It is safe because it is pydantic's documented behaviour: a
    deferred model's fields are collected and its annotations evaluated at its definition as before (the same field
    types, `model_fields` at once), and the first validation, serialization or schema asks pydantic to build what it
    would have built then, from the same fields. A model whose definition sets `defer_build` keeps its own, and
    CrewAI's explicit `model_rebuild` calls still build at once. The default is restored after the import, so nothing
    defined later (the user's models, CrewAI's models made at run time, subclasses of CrewAI's) is deferred: models
    inherit configuration a class sets, never the default."""
    from pydantic._internal import _config

    defaults = _config.config_defaults
    before = defaults["defer_build"]
    defaults["defer_build"] = True
    try:
        yield
    finally:
        defaults["defer_build"] = before


def load_crewai() -> None:
    defer_package_inits(DEFERRED_PACKAGE_INITS)
    # The import makes ~360,000 objects the collector tracks, 1-2 % of them garbage: its passes over them (hundreds
    # during the import) are lost time, and so would every later full pass be (frozen, they are left out of it).
    gc.disable()
    try:
        with deferred_model_builds():
            import crewai  # noqa: F401
    finally:
        gc.freeze()
        gc.enable()
