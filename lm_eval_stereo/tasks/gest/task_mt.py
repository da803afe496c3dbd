"""Harness glue of ``gest_mt_<lang>``: the model translates each GEST sample into a Slavic language (generation).

The grammatical gender of the first person in the translation is read by
:func:`lm_eval_stereo.tasks.gest.detector.first_person_gender` (masculine / feminine / None = undetected); the metrics
are the reference's p_i (Agresti–Coull), p_f, p_m, f_s and f_m (:data:`lm_eval_stereo.tasks.gest.metrics.MT_METRICS`),
with the detection yield. The prompt (``doc_to_text`` in ``_gest_mt_template_yaml``) is ours: the paper used MT
systems, not prompted LMs. It ends with the language label so that base models continue with the translation, and
chat models (``--apply_chat_template``) get it as the user turn. The language's name comes from the generated
per-language YAML (``dataset_kwargs.language_name``).
"""

from __future__ import annotations

from typing import Any

import datasets

from lm_eval_stereo.tasks.gest.data import DEFAULT_VERSION, load_gest
from lm_eval_stereo.tasks.gest.data import language_name as registry_name
from lm_eval_stereo.tasks.gest.detector import first_person_gender
from lm_eval_stereo.tasks.gest.detector.slavic_gender import MORPHOLOGY
from lm_eval_stereo.tasks.gest.metrics import MT_METRICS
from lm_eval_stereo.tasks.gest.task import GestTask

QUOTES = "\"'„“”«»‚‘’`"


def custom_dataset(
    language: str, language_name: str | None = None, gest_version: str = DEFAULT_VERSION, **_: Any
) -> dict[str, datasets.Dataset]:
    """GEST samples of ``gest_version`` with the target language's code and English name (the prompt template uses
    the name the generated per-language YAML gives; default: the registry's)."""
    name = language_name or registry_name(language)
    registry_name(language)  # unknown codes are refused
    rows = load_gest(str(gest_version))
    for row in rows:
        row["language"], row["language_name"] = language, name
    return {"test": datasets.Dataset.from_list(rows)}


def extract_translation(response: str, language: str) -> str:
    """The translation in a response: its first non-empty line, without a repeated language label and quotes."""
    line = next((line.strip() for line in response.splitlines() if line.strip()), "")
    label = registry_name(language) + ":"
    if line.lower().startswith(label.lower()):
        line = line[len(label) :].strip()
    return line.strip(QUOTES + " ").strip()


def detect_gender(translation: str, language: str) -> str | None:
    """Grammatical gender of the first person (None when the translation is empty or nothing is detected)."""
    return first_person_gender(translation, language) if translation else None


class GestTranslationTask(GestTask):
    """``gest_mt_<lang>``: one greedy generation per sample, its first-person gender, the reference MT metrics."""

    METRICS = MT_METRICS
    EXTRA = MORPHOLOGY

    def item(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        translation = extract_translation(results[0], doc["language"])
        return {
            "id": doc["id"],
            "stereotype": doc["stereotype"],
            "translation": translation,
            "gender": detect_gender(translation, doc["language"]),
        }
