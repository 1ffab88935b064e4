"""Deferred package inits (lazy_packages.py) against packages written here, and CrewAI loaded with them."""

from __future__ import annotations

from collections.abc import Iterator
import os
from pathlib import Path
import subprocess
import sys
import textwrap

import pytest

from kubecrew_crewai.lazy_packages import defer_package_inits

from .conftest import ChatServer


@pytest.fixture
def package(tmp_path: Path) -> Iterator[Path]:
    """`lazypkg`: its __init__ counts its runs in runs.txt and exports NAME; `lazypkg.part` is a submodule."""
    root = tmp_path / "lazypkg"
    root.mkdir()
    (root / "__init__.py").write_text(
        textwrap.dedent(
            f"""
            from pathlib import Path
            runs = Path({str(tmp_path / "runs.txt")!r})
            runs.write_text(str(int(runs.read_text() or 0) + 1) if runs.exists() else "1")
            NAME = "from init"
            """
        )
    )
    (root / "part.py").write_text("VALUE = 42\n")
    sys.path.insert(0, str(tmp_path))
    finder = defer_package_inits(["lazypkg"])
    try:
        yield tmp_path / "runs.txt"
    finally:
        sys.meta_path.remove(finder)
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n == "lazypkg" or n.startswith("lazypkg.")]:
            del sys.modules[name]


def test_a_submodule_imports_without_the_packages_init(package: Path) -> None:
    import lazypkg.part

    assert lazypkg.part.VALUE == 42
    assert not package.exists()


def test_the_first_name_asked_of_the_package_runs_its_init_once(package: Path) -> None:
    import lazypkg
    import lazypkg.part

    assert lazypkg.NAME == "from init"
    assert lazypkg.part.VALUE == 42
    from lazypkg import NAME

    assert NAME == "from init"
    assert package.read_text() == "1"
    with pytest.raises(AttributeError):
        _ = lazypkg.MISSING
    assert package.read_text() == "1"


def test_crewai_runs_a_task_without_loading_what_it_does_not_use(chat_server: ChatServer) -> None:
    # CrewAI loaded as the adapter loads it, then its OpenAI client's first request: the API's other endpoints and
    # the vector store's clients stay unloaded (all of them were loaded before), and the request is answered.
    script = f"""
import sys
from kubecrew_crewai.startup import load_crewai
load_crewai()
from crewai import LLM
llm = LLM(model="llama3", provider="openai", custom_openai=True, base_url={chat_server.base_url!r}, api_key="unused")
print(llm.call("Say hi"))
print(sorted(m for m in ("openai.resources.fine_tuning", "openai.resources.beta", "openai.types.eval_create_params",
    "chromadb.api.client") if m in sys.modules))
"""
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["PYTHONPATH"] = str(Path(__file__).parents[1])
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2:] == ["Fixture answer.", "[]"]
    assert len(chat_server.requests) == 1
