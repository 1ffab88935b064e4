"""CrewAI's human-input hook answered by kubecrew's wait instead of the console's stdin.

A `humanInput` task's answer waits for a person in kubecrew (no process held); when the person sends it back, the task
runs again in a new process, given the answer they saw and their feedback (the assignment's `task.review`). This
provider hands both to CrewAI as its own human-feedback path would have them: the conversation continues after the
agent's earlier answer with the person's feedback, in CrewAI's own feedback message. It never reads stdin: when CrewAI
asks for feedback on the new answer, that answer goes back to kubecrew, which waits for the person again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crewai.agents.parser import AgentFinish
    from crewai.core.providers.human_input import AsyncExecutorContext, ExecutorContext


@dataclass(frozen=True)
class Review:
    """The answer a person sent back, and what they asked for."""

    previous_output: str
    feedback: str


class KubecrewReview:
    """A CrewAI HumanInputProvider: the earlier answer and the feedback after the task's messages; no console."""

    def __init__(self, review: Review | None) -> None:
        self._review = review

    def setup_messages(self, context: ExecutorContext) -> bool:
        return False

    def post_setup_messages(self, context: ExecutorContext) -> None:
        if self._review is None:
            return
        from crewai.utilities.message_utils import format_message_for_llm

        context.messages.append(format_message_for_llm(self._review.previous_output, role="assistant"))
        context.messages.append(context._format_feedback_message(self._review.feedback))

    def handle_feedback(self, formatted_answer: AgentFinish, context: ExecutorContext) -> AgentFinish:
        return formatted_answer

    async def handle_feedback_async(
        self, formatted_answer: AgentFinish, context: AsyncExecutorContext
    ) -> AgentFinish:
        return formatted_answer

    @staticmethod
    def _get_output_string(answer: AgentFinish) -> str:
        # Part of CrewAI's provider protocol; the answer's text, structured or not.
        output = answer.output
        return output if isinstance(output, str) else output.model_dump_json()


def install(review: Review | None) -> None:
    """Makes kubecrew's wait CrewAI's human-input provider for this process (one task)."""
    from crewai.core.providers.human_input import set_provider

    set_provider(KubecrewReview(review))
