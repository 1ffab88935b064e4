"""The user's code named by module.attribute: imported, checked for what its field needs, or refused naming it."""

from __future__ import annotations

from collections.abc import Iterator
import json
from pathlib import Path
import sys

import pytest

from kubecrew_crewai import references
from kubecrew_crewai.launch import parse_launch
from kubecrew_crewai.references import PythonReferences, ReferenceUnusable

from .conftest import launch_message

PROJECT = {
    "__init__.py": "",
    "tools.py": """
from crewai.tools import BaseTool, tool

class Lookup(BaseTool):
    name: str = "lookup"
    description: str = "Looks a word up."
    def _run(self, word: str) -> str:
        return word

class NeedsArguments(BaseTool):
    name: str = "needs"
    description: str = "Needs a key."
    key: str
    def _run(self) -> str:
        return self.key

@tool("shout")
def shout(text: str) -> str:
    \"\"\"Shouts the text.\"\"\"
    return text.upper()

def plain(text: str) -> str:
    return text
""",
    "models.py": """
from pydantic import BaseModel

class Report(BaseModel):
    title: str

class Config:
    pass

LIMIT = 3
""",
    "checks.py": "def has_title(output):\n    return (True, output.raw)\n",
    "broken.py": "raise RuntimeError('the module fails on import')\n",
}


@pytest.fixture(autouse=True)
def project(tmp_path: Path) -> Iterator[None]:
    package = tmp_path / "userproj"
    package.mkdir()
    for name, text in PROJECT.items():
        (package / name).write_text(text)
    sys.path.insert(0, str(tmp_path))
    yield
    sys.path.remove(str(tmp_path))
    for name in [m for m in sys.modules if m == "userproj" or m.startswith("userproj.")]:
        del sys.modules[name]


def test_a_tool_class_is_made_and_a_tool_function_taken_as_it_is() -> None:
    assert references.tool("userproj.tools.Lookup").name == "lookup"
    assert references.tool("userproj.tools.shout").run(text="hi") == "HI"


def test_a_model_and_a_guardrail_function() -> None:
    assert references.model("userproj.models.Report").__name__ == "Report"
    assert callable(references.function("userproj.checks.has_title"))


@pytest.mark.parametrize(
    ("call", "reference", "message"),
    [
        (
            references.tool,
            "userproj.nothing.Tool",
            "python.tools userproj.nothing.Tool cannot be imported (ModuleNotFoundError: No module named "
            "'userproj.nothing'); is the project installed in the runner image?",
        ),
        (references.tool, "nowhere.Tool", "python.tools nowhere.Tool cannot be imported (ModuleNotFoundError"),
        (
            references.tool,
            "userproj.tools.Missing",
            "python.tools userproj.tools.Missing: userproj.tools has no attribute Missing",
        ),
        (references.tool, "userproj.tools.plain", "python.tools userproj.tools.plain is a function, not a CrewAI tool"),
        (
            references.tool,
            "userproj.tools.NeedsArguments",
            "python.tools userproj.tools.NeedsArguments: ValidationError",
        ),
        (
            references.model,
            "userproj.models.Config",
            "python.outputPydantic userproj.models.Config is not a pydantic model",
        ),
        (
            references.function,
            "userproj.models.LIMIT",
            "python.guardrail userproj.models.LIMIT is a int, not a function",
        ),
        (
            references.function,
            "userproj.broken.check",
            "python.guardrail userproj.broken.check cannot be imported (RuntimeError: the module fails on import)",
        ),
    ],
)
def test_a_reference_that_cannot_be_used_is_named(call: object, reference: str, message: str) -> None:
    with pytest.raises(ReferenceUnusable) as raised:
        call(reference)  # type: ignore[operator]
    assert str(raised.value).startswith(message)


def test_the_launch_carries_the_tasks_references() -> None:
    message = launch_message()
    message["assignment"]["task"]["python"] = {"tools": ["a.b"], "outputPydantic": "a.M", "guardrail": "a.g"}
    message["assignment"]["task"]["guardrailMaxRetries"] = 2
    launch = parse_launch(json.dumps(message))
    assert launch.python == PythonReferences(tools=["a.b"], output_pydantic="a.M", guardrail="a.g")
    assert launch.guardrail_max_retries == 2
    assert parse_launch(json.dumps(launch_message())).python is None
