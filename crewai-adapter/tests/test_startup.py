"""Pydantic models defined during CrewAI's import build their validators at first use (startup.py)."""

from __future__ import annotations

import pydantic
import pytest

from kubecrew_crewai.startup import deferred_model_builds


def is_built(model: type[pydantic.BaseModel]) -> bool:
    return bool(model.__dict__.get("__pydantic_complete__"))


def test_a_model_defined_meanwhile_is_built_at_its_first_use_and_validates_as_before() -> None:
    with deferred_model_builds():

        class Deferred(pydantic.BaseModel):
            name: str
            count: int = 1
            tags: list[str] | None = None

    class Built(pydantic.BaseModel):
        name: str
        count: int = 1
        tags: list[str] | None = None

    assert not is_built(Deferred) and is_built(Built)
    assert list(Deferred.model_fields) == ["name", "count", "tags"]
    assert Deferred(name="a", count="2").model_dump() == Built(name="a", count="2").model_dump()  # type: ignore[arg-type]
    assert is_built(Deferred)
    with pytest.raises(pydantic.ValidationError) as deferred_error:
        Deferred(name="a", count="many")  # type: ignore[arg-type]
    with pytest.raises(pydantic.ValidationError) as built_error:
        Built(name="a", count="many")  # type: ignore[arg-type]
    assert deferred_error.value.errors() == built_error.value.errors()
    assert Deferred.model_json_schema()["properties"] == Built.model_json_schema()["properties"]


def test_models_defined_after_and_their_subclasses_are_built_at_once() -> None:
    with deferred_model_builds():

        class Base(pydantic.BaseModel):
            name: str

        class Configured(pydantic.BaseModel):
            model_config = pydantic.ConfigDict(defer_build=False)
            name: str

    class Sub(Base):
        extra: int = 0

    assert not is_built(Base) and is_built(Configured) and is_built(Sub)
    assert Sub(name="x").extra == 0


def test_the_default_is_restored_when_the_import_fails() -> None:
    with pytest.raises(ImportError), deferred_model_builds():
        raise ImportError("no such module")

    class After(pydantic.BaseModel):
        name: str

    assert is_built(After)
