import pytest

from kubecrew_crewai.launch import LlmSettings
from kubecrew_crewai.llm import LlmConfigError, llm_kwargs


def test_openai_compatible_goes_to_crewais_openai_provider_at_the_base_url() -> None:
    kwargs = llm_kwargs(LlmSettings("openai-compatible", "llama3", base_url="http://h/v1", temperature=0.2))
    assert kwargs == {
        "model": "llama3",
        "stream": False,
        "temperature": 0.2,
        "provider": "openai",
        "custom_openai": True,
        "base_url": "http://h/v1",
        "api_key": "unused",
    }


def test_openai_and_anthropic_need_a_key() -> None:
    with pytest.raises(LlmConfigError, match="No API key for the anthropic provider"):
        llm_kwargs(LlmSettings("anthropic", "claude-x"))
    assert llm_kwargs(LlmSettings("openai", "gpt-x", api_key="k", max_output_tokens=50))["max_tokens"] == 50


def test_the_mock_provider_is_refused_with_what_to_use_instead() -> None:
    with pytest.raises(LlmConfigError, match="mock provider is not available on the crewai runtime"):
        llm_kwargs(LlmSettings("mock", "mock"))


def test_builds_crewais_llm() -> None:
    from crewai.llms.base_llm import BaseLLM

    from kubecrew_crewai.llm import build_llm

    llm = build_llm(LlmSettings("openai-compatible", "llama3", base_url="http://127.0.0.1:1/v1", api_key="sk-x"))
    assert isinstance(llm, BaseLLM)
    assert llm.model == "llama3"
