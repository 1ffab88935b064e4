"""Python references (`module.attribute`) into the user's code in the runner image: a task's tools, its
output_pydantic model and its guardrail function (core/python-references.ts checks their syntax). A reference that
cannot be used fails the task with a message naming it."""

from __future__ import annotations

from dataclasses import dataclass
import importlib
import inspect
from typing import TYPE_CHECKING, Any, Callable, cast

if TYPE_CHECKING:
    from crewai.tools import BaseTool
    from pydantic import BaseModel


class ReferenceUnusable(Exception):
    """A reference that does not import or is not what its field needs; the message names the reference."""


@dataclass(frozen=True)
class PythonReferences:
    tools: list[str]
    output_pydantic: str | None = None
    guardrail: str | None = None


def import_reference(reference: str, field: str) -> Any:
    """The object `reference` names: the longest importable module prefix, then attributes."""
    parts = reference.split(".")
    module = None
    error: BaseException | None = None
    for cut in range(len(parts) - 1, 0, -1):
        name = ".".join(parts[:cut])
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as missing:
            # Only a missing module of the reference's own path means "try a shorter one"; any other is the code's.
            if missing.name is not None and name.startswith(missing.name):
                error = error or missing
                continue
            raise ReferenceUnusable(_failed(field, reference, missing)) from missing
        except Exception as broken:  # the user's module raised while being imported
            raise ReferenceUnusable(_failed(field, reference, broken)) from broken
        value: Any = module
        for attribute in parts[cut:]:
            if not hasattr(value, attribute):
                if error is not None:  # a longer module path was missing: that is what the user has to fix
                    raise ReferenceUnusable(_failed(field, reference, error))
                raise ReferenceUnusable(
                    f"python.{field} {reference}: {'.'.join(parts[:cut])} has no attribute {attribute}"
                )
            value = getattr(value, attribute)
        return value
    raise ReferenceUnusable(_failed(field, reference, error))


def _failed(field: str, reference: str, error: BaseException | None) -> str:
    why = f"{type(error).__name__}: {error}" if error else "no module"
    return f"python.{field} {reference} cannot be imported ({why}); is the project installed in the runner image?"


def tool(reference: str) -> BaseTool:
    """A CrewAI tool: a @tool function or BaseTool instance as it is, a BaseTool class made with no arguments."""
    from crewai.tools import BaseTool

    value = import_reference(reference, "tools")
    if inspect.isclass(value) and issubclass(value, BaseTool):
        try:
            # A BaseTool subclass declares its own name and description; mypy sees BaseTool's required fields.
            value = cast("type[Any]", value)()
        except Exception as error:
            raise ReferenceUnusable(f"python.tools {reference}: {type(error).__name__}: {error}") from error
    if not isinstance(value, BaseTool):
        raise ReferenceUnusable(
            f"python.tools {reference} is a {type(value).__name__}, not a CrewAI tool (a @tool function or a BaseTool)"
        )
    return value


def model(reference: str) -> type[BaseModel]:
    from pydantic import BaseModel

    value = import_reference(reference, "outputPydantic")
    if not (inspect.isclass(value) and issubclass(value, BaseModel)):
        raise ReferenceUnusable(f"python.outputPydantic {reference} is not a pydantic model (a BaseModel class)")
    return value


def function(reference: str) -> Callable[..., Any]:
    value = import_reference(reference, "guardrail")
    if not callable(value):
        raise ReferenceUnusable(f"python.guardrail {reference} is a {type(value).__name__}, not a function")
    return value  # type: ignore[no-any-return]
