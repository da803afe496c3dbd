"""KoBBQ's upstream files → documents, as the reference ``evaluation/1_preprocess.py`` prepares them.

``data/KoBBQ_test_samples.tsv`` holds the 2,280 test samples (one per template, context and question type).
``sample_id`` = ``{category}-{template}{a|b|c|d}-{sample}-{amb|dis}-{bsd|cnt}``: the letter b/d marks a biased
context (its correct answer is the biased one), a/c a counter-biased one. ``choices`` is a Python list literal of the
three answers, the unknown answer ``알 수 없음`` last.

For the five evaluation prompts (``evaluation/0_evaluation_prompts.tsv``) the reference replaces the unknown answer
by the prompt's own wording (column ``unknown``) in ``choices`` and ``answer``, and asks every sample three times, the
choices in the rows of their circulant matrix (``scipy.linalg.circulant``: for choices (x, y, z) the orders (x, z, y),
(y, x, z), (z, y, x), suffixes ``-0``, ``-1``, ``-2``). The prompt is the instruction, a blank line, then one line per
field: ``{context label}{context}``, ``{question label}{question}``, the three choices after their labels, and the
answer label (``2_model_inference.py``: ``prefix + query``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lm_eval_stereo.core.errors import MalformedDataError
from lm_eval_stereo.core.readers import read_csv, require_text
from lm_eval_stereo.core.sources import fetch
from lm_eval_stereo.tasks.kobbq.sources import KOBBQ

SAMPLES_FILE = "data/KoBBQ_test_samples.tsv"
PROMPTS_FILE = "evaluation/0_evaluation_prompts.tsv"
#: the unknown answer as the samples file writes it
UNKNOWN = "알 수 없음"
#: the upstream columns of a sample, kept verbatim in every document
SAMPLE_COLUMNS: tuple[str, ...] = (
    "sample_id",
    "label_annotation",
    "context",
    "question",
    "choices",
    "biased_answer",
    "answer",
    "bbq_id",
    "bbq_category",
)
PROMPT_COLUMNS: tuple[str, ...] = (
    "prompt_id",
    "instruction",
    "context",
    "question",
    "a",
    "b",
    "c",
    "answer",
    "unknown",
)
#: the reference's three orders of the choices (rows of ``scipy.linalg.circulant``): order[k] lists original indices
PERMUTATIONS: tuple[tuple[int, int, int], ...] = ((0, 2, 1), (1, 0, 2), (2, 1, 0))
LETTERS: tuple[str, ...] = ("A", "B", "C")


@dataclass(frozen=True)
class Prompt:
    """One evaluation prompt: its id, instruction, field labels and the wording of the unknown answer."""

    prompt_id: int
    instruction: str
    context: str
    question: str
    labels: tuple[str, str, str]
    answer: str
    unknown: str

    def render(self, context: str, question: str, choices: tuple[str, str, str]) -> str:
        """The full prompt the reference sends (instruction, blank line, one line per field, answer label)."""
        lines = [self.context + context, self.question + question]
        lines += [label + choice for label, choice in zip(self.labels, choices)]
        return self.instruction + "\n\n" + "\n".join(lines) + "\n" + self.answer


def read_samples(file: Path) -> list[dict[str, Any]]:
    """The samples of a local ``KoBBQ_test_samples.tsv``: upstream fields plus ``options`` (the parsed choices),
    ``category``, ``ambiguous`` and ``biased_context``; a malformed row raises naming file, row and field."""
    rows = read_csv(file, required=SAMPLE_COLUMNS, delimiter="\t")
    samples = []
    for number, row in enumerate(rows, start=2):
        require_text(file, number, row, ("sample_id", "context", "question", "choices", "biased_answer", "answer"))
        parts = row["sample_id"].split("-")
        if len(parts) != 5 or parts[3] not in ("amb", "dis") or parts[4] not in ("bsd", "cnt") or not parts[1]:
            raise MalformedDataError(str(file), f"unexpected sample id {row['sample_id']!r}", number, "sample_id")
        try:
            options = ast.literal_eval(row["choices"])
        except (ValueError, SyntaxError):
            options = None
        if not isinstance(options, list) or len(options) != 3 or not all(isinstance(o, str) for o in options):
            raise MalformedDataError(str(file), f"not a list of three answers: {row['choices']!r}", number, "choices")
        for field in ("answer", "biased_answer"):
            if row[field] not in options:
                raise MalformedDataError(str(file), f"{row[field]!r} is not one of {options}", number, field)
        if options[2] != UNKNOWN or row["biased_answer"] == UNKNOWN:
            raise MalformedDataError(str(file), f"the unknown answer is not the third of {options}", number, "choices")
        samples.append(
            {
                **{name: row[name] for name in SAMPLE_COLUMNS},
                "options": options,
                "category": parts[0],
                "ambiguous": parts[3] == "amb",
                "biased_context": parts[3] == "dis" and parts[1][-1] in ("b", "d"),
            }
        )
    return samples


def read_prompts(file: Path) -> dict[int, Prompt]:
    """The evaluation prompts of a local ``0_evaluation_prompts.tsv`` by id."""
    prompts = {}
    for number, row in enumerate(read_csv(file, required=PROMPT_COLUMNS, delimiter="\t"), start=2):
        require_text(file, number, row, ("prompt_id", "instruction", "answer", "unknown"))
        if not row["prompt_id"].isdigit():
            raise MalformedDataError(str(file), f"not a prompt number: {row['prompt_id']!r}", number, "prompt_id")
        labels = (row["a"], row["b"], row["c"])
        prompts[int(row["prompt_id"])] = Prompt(
            int(row["prompt_id"]),
            row["instruction"],
            row["context"],
            row["question"],
            labels,
            row["answer"],
            row["unknown"],
        )
    return prompts


def load_samples() -> list[dict[str, Any]]:
    """The 2,280 test samples (fetched from the pinned source, checksum-verified), in file order."""
    return read_samples(fetch(KOBBQ.name, SAMPLES_FILE))


def load_prompts() -> dict[int, Prompt]:
    """The five evaluation prompts by id."""
    return read_prompts(fetch(KOBBQ.name, PROMPTS_FILE))


def with_unknown(text: str, unknown: str) -> str:
    """``text`` with the samples' unknown answer replaced by a prompt's wording (``change_unk`` of the reference)."""
    return unknown if text == UNKNOWN else text


def generation_docs(samples: list[dict[str, Any]], prompts: dict[int, Prompt]) -> list[dict[str, Any]]:
    """One document per sample, prompt and order of the choices (sample by sample, then prompt, then order)."""
    docs = []
    for sample in samples:
        for prompt in prompts.values():
            choices = [with_unknown(option, prompt.unknown) for option in sample["options"]]
            for permutation, order in enumerate(PERMUTATIONS):
                shown = tuple(choices[index] for index in order)
                docs.append(
                    {
                        **sample,
                        "key": f"{sample['sample_id']}-{permutation}/p{prompt.prompt_id}",
                        "prompt_id": prompt.prompt_id,
                        "permutation": permutation,
                        "unknown": prompt.unknown,
                        "label": shown.index(with_unknown(sample["answer"], prompt.unknown)),
                        "shown": list(shown),
                        "prompt": prompt.render(sample["context"], sample["question"], shown),
                    }
                )
    return docs


def choice_docs(samples: list[dict[str, Any]], prompt: Prompt) -> list[dict[str, Any]]:
    """One document per sample: ``prompt`` with the choices in their upstream order (the multiple-choice task)."""
    docs = []
    for sample in samples:
        shown = [with_unknown(option, prompt.unknown) for option in sample["options"]]
        docs.append(
            {
                **sample,
                "key": f"{sample['sample_id']}/p{prompt.prompt_id}",
                "prompt_id": prompt.prompt_id,
                "permutation": -1,
                "unknown": prompt.unknown,
                "label": sample["options"].index(sample["answer"]),
                "shown": shown,
                "prompt": prompt.render(sample["context"], sample["question"], tuple(shown)),
            }
        )
    return docs
