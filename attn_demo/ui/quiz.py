"""Check your understanding: conceptual questions, then questions about the user's own
translation (attn_demo.classroom.quiz), each checked with a short explanation."""
import gradio as gr

from attn_demo.classroom.quiz import concept_questions, trace_questions
from attn_demo.ui.page import SIDES

TRACE_SLOTS = 5  # questions generated from each translation, at most (quiz.trace_questions: α, the spread,
# a head and its √d_k where a side has heads, c_t)


def gru_sizes(models: list) -> tuple[int, int] | tuple[None, None]:
    """(H, D), the decoder state and annotation sizes of the first model with a GRU decoder state, for the
    conceptual questions; (None, None) where no model has one (Transformers only)."""
    for model in models:
        if not model.kind.heads:  # a GRU encoder–decoder (attention.KINDS)
            return model.translator.config.dec_hidden_size, model.translator.config.annotation_size
    return None, None


class QuizSection:
    def __init__(self, models: list):
        self.models = {model.key: model for model in models}
        self.concepts = concept_questions(*gru_sizes(models))

    def questions_for(self, state) -> list:
        """This session's questions: the conceptual ones, then those about its last translation."""
        if not state:
            return list(self.concepts)
        results = [(self.models[state["picks"][side]].title, state["views"][side]["result"]) for side in SIDES]
        return [*self.concepts, *trace_questions(results)]

    def show_trace_questions(self, state):
        """The questions about the new translation, unanswered, or hidden before any translation."""
        questions = self.questions_for(state)[len(self.concepts):]
        updates = []
        for i in range(TRACE_SLOTS):
            if i < len(questions):
                updates += [gr.update(value=f"**{i + len(self.concepts) + 1}.** {questions[i].prompt}", visible=True),
                            gr.update(choices=list(questions[i].choices), value=None, visible=True), ""]
            else:
                updates += [gr.update(visible=False), gr.update(value=None, visible=False), ""]
        return updates

    def check(self, state, *choices) -> list[str]:
        """Feedback for every answered question, one a slot ("" for a slot this translation asks nothing in); the
        answers come from the translation on the page (the session state)."""
        questions = self.questions_for(state)
        return [questions[i].check(choice)[1] if choice and i < len(questions) else "" for i, choice in enumerate(choices)]

    def render(self, session: gr.State):
        """The section, under the translate section whose session state (session) it asks about."""
        gr.Markdown("## Check your understanding\nThe first questions are about attention itself; translate a "
                    "sentence and the last ones ask about your translation, answered from its trace.")
        choices, feedback = [], []
        for i, question in enumerate(self.concepts, start=1):
            gr.Markdown(f"**{i}.** {question.prompt}")
            choices.append(gr.Radio(list(question.choices), show_label=False, elem_id=f"quiz-{i}"))
            feedback.append(gr.Markdown(elem_id=f"quiz-{i}-feedback"))
        slots = []
        for i in range(len(self.concepts) + 1, len(self.concepts) + TRACE_SLOTS + 1):
            prompt = gr.Markdown(visible=False)
            choices.append(gr.Radio([], show_label=False, visible=False, elem_id=f"quiz-{i}"))
            feedback.append(gr.Markdown(elem_id=f"quiz-{i}-feedback"))
            slots += [prompt, choices[-1], feedback[-1]]
        check_button = gr.Button("Check my answers", elem_id="quiz-check")
        # outside the queue, like the step data: every translation sets it off, it decodes nothing, and a
        # queued event costs the framework more than this work (BENCHMARKS.md)
        session.change(self.show_trace_questions, session, slots, queue=False, api_name="quiz_questions")
        check_button.click(self.check, [session, *choices], feedback, api_name="check_quiz")
