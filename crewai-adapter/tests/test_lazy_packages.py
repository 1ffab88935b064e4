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
    # the types of its assistants' and responses' APIs and the vector store's clients stay unloaded (all of them were
    # loaded before), and the request is answered.
    script = f"""
import sys
from kubecrew_crewai.startup import load_crewai
load_crewai()
from crewai import LLM
llm = LLM(model="llama3", provider="openai", custom_openai=True, base_url={chat_server.base_url!r}, api_key="unused")
print(llm.call("Say hi"))
print(sorted(m for m in ("openai.resources.fine_tuning", "openai.resources.beta", "openai.types.eval_create_params",
    "openai.types.beta.assistant", "openai.types.responses.compacted_response", "chromadb.api.client")
    if m in sys.modules))
"""
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["PYTHONPATH"] = str(Path(__file__).parents[1])
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2:] == ["Fixture answer.", "[]"]
    assert len(chat_server.requests) == 1


@pytest.fixture
def reexporting(tmp_path: Path) -> Iterator[Path]:
    """`repkg`: its __init__ only re-exports (`from .a import A as A`, `from .b import B`, `from .sub import C`);
    `repkg.b` imports `from . import a` while the package is still deferred; `repkg.sub` is a subpackage that only
    re-exports, `repkg.other` one whose __init__ does more. Every module notes its run in runs.txt."""
    root = tmp_path / "repkg"
    (root / "sub").mkdir(parents=True)
    (root / "other").mkdir()
    runs = str(tmp_path / "runs.txt")
    note = f"open({runs!r}, 'a').write(__name__ + '\\n')\n"
    (root / "__init__.py").write_text(
        '"""Re-exports only."""\nfrom __future__ import annotations\n'
        "from .a import A as A\nfrom .b import B\nfrom .sub import C\n"
    )
    (root / "a.py").write_text(note + "class A: pass\n")
    (root / "b.py").write_text(note + "from . import a\nclass B(a.A): pass\n")
    (root / "sub" / "__init__.py").write_text("from .c import C as C\n")
    (root / "sub" / "c.py").write_text(note + "class C: pass\n")
    (root / "other" / "__init__.py").write_text(note + "from .d import D as D\n")
    (root / "other" / "d.py").write_text(note + "class D: pass\n")
    sys.path.insert(0, str(tmp_path))
    finder = defer_package_inits(["repkg"])
    try:
        yield tmp_path / "runs.txt"
    finally:
        sys.meta_path.remove(finder)
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n == "repkg" or n.startswith("repkg.")]:
            del sys.modules[name]


def runs_of(runs: Path) -> list[str]:
    return runs.read_text().split() if runs.exists() else []


def test_a_name_a_package_only_re_exports_loads_only_its_submodule(reexporting: Path) -> None:
    from repkg import B

    assert runs_of(reexporting) == ["repkg.b", "repkg.a"]
    import repkg
    import repkg.a
    import repkg.b

    assert B is repkg.b.B and issubclass(B, repkg.a.A) and repkg.A is repkg.a.A
    assert runs_of(reexporting) == ["repkg.b", "repkg.a"]


def test_a_subpackage_that_only_re_exports_is_deferred_too_and_another_is_not(reexporting: Path) -> None:
    import repkg.sub
    import repkg.other

    # repkg.other's __init__ ran as usual; repkg.sub's (and so repkg.sub.c) has not.
    assert runs_of(reexporting) == ["repkg.other", "repkg.other.d"]
    from repkg import C

    assert C is repkg.sub.c.C
    assert runs_of(reexporting) == ["repkg.other", "repkg.other.d", "repkg.sub.c"]


def test_a_name_the_re_exports_do_not_name_runs_the_whole_init(reexporting: Path) -> None:
    import repkg

    assert repkg.annotations.compiler_flag  # from `from __future__ import annotations`: only the whole __init__ has it
    assert sorted(runs_of(reexporting)) == ["repkg.a", "repkg.b", "repkg.sub.c"]
    with pytest.raises(AttributeError):
        _ = repkg.MISSING
