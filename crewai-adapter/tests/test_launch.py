import json

import pytest

from kubecrew_crewai.launch import LaunchError, parse_launch

from .conftest import launch_message


def test_reads_the_task_its_agent_context_and_model() -> None:
    launch = parse_launch(json.dumps(launch_message()))
    assert launch.task_name == "write"
    assert launch.task_index == 1
    assert launch.agent_role == "Senior Writer"
    assert launch.max_iter == 20
    assert [(c.task, c.output) for c in launch.context] == [("research", "Agents plan, act and observe.")]
    assert launch.llm is not None and launch.llm.provider == "openai-compatible"
    assert launch.llm.base_url == "http://127.0.0.1:1/v1"
    assert launch.only is None


def test_names_what_is_missing() -> None:
    message = launch_message()
    del message["assignment"]["task"]["expectedOutput"]
    with pytest.raises(LaunchError, match="task.expectedOutput"):
        parse_launch(json.dumps(message))


def test_refuses_text_that_is_not_json() -> None:
    with pytest.raises(LaunchError, match="not JSON"):
        parse_launch("{")


def test_reads_a_revisions_review_and_none_for_a_first_answer() -> None:
    assert parse_launch(json.dumps(launch_message())).review is None
    message = launch_message()
    message["assignment"]["task"]["review"] = {"previousOutput": "A long draft.", "feedback": "Shorter."}
    review = parse_launch(json.dumps(message)).review
    assert review is not None
    assert (review.previous_output, review.feedback) == ("A long draft.", "Shorter.")
    message["assignment"]["task"]["review"] = {"previousOutput": "A long draft."}
    with pytest.raises(LaunchError, match="feedback"):
        parse_launch(json.dumps(message))
