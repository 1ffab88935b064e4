"""The crew's `llm` as CrewAI's LLM class: its native OpenAI and Anthropic providers, with the key the runner passed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .launch import LlmSettings

if TYPE_CHECKING:
    from crewai.llms.base_llm import BaseLLM


class LlmConfigError(ValueError):
    """An LLM setting this runtime cannot use."""


def llm_kwargs(settings: LlmSettings) -> dict[str, Any]:
    """The keyword arguments of CrewAI's `LLM(...)` for `settings` (kept apart from the call so tests can read them)."""
    common: dict[str, Any] = {"model": settings.model, "stream": False}
    if settings.temperature is not None:
        common["temperature"] = settings.temperature
    if settings.max_output_tokens is not None:
        common["max_tokens"] = settings.max_output_tokens
    if settings.provider == "openai":
        if not settings.api_key:
            raise LlmConfigError("No API key for the openai provider")
        return {**common, "provider": "openai", "api_key": settings.api_key, "base_url": settings.base_url}
    if settings.provider == "anthropic":
        if not settings.api_key:
            raise LlmConfigError("No API key for the anthropic provider")
        return {**common, "provider": "anthropic", "api_key": settings.api_key, "base_url": settings.base_url}
    if settings.provider == "openai-compatible":
        if not settings.base_url:
            raise LlmConfigError("The openai-compatible provider needs a baseURL")
        # CrewAI's OpenAI client always sends a key; local servers (Ollama, vLLM) ignore it.
        return {
            **common,
            "provider": "openai",
            "custom_openai": True,
            "base_url": settings.base_url,
            "api_key": settings.api_key or "unused",
        }
    raise LlmConfigError(
        f"The {settings.provider} provider is not available on the crewai runtime: "
        "use openai, anthropic or openai-compatible (or the kubecrew runtime)"
    )


def build_llm(settings: LlmSettings) -> BaseLLM:
    from crewai import LLM

    return LLM(**llm_kwargs(settings))
