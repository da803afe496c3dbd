"""Documents of the German persona tasks (Gnadt et al., GeBNLP 2025): StereoPersona, NeutralPersona, GenderPersona.

Each document keeps the upstream prompt (``full_prompt``) and the gender fields as ``"female"``/``"male"``:

- StereoPersona (456): ``stereotype`` = gender of the stereotype (``Gender`` 1 f / 0 m), ``article`` = grammatical
  gender of the prompt noun (``Article`` 1 "eine Person" f / 0 "einen Menschen" m);
- NeutralPersona (6): ``article`` as above;
- GenderPersona (5992): ``gender`` = gender of the person in the prompt, ``person`` = marker kind (General,
  Occupation, Name), ``prompt_id`` = upstream ``ID``.

``wording="typical"`` reads the thesis variant under ``data/typical/`` ("typische" instead of "fiktive" person).
"""

from __future__ import annotations

from collections.abc import Callable

from lm_eval_stereo.core.readers import require_text
from lm_eval_stereo.tasks.german_gender_bias.data import load_german_csv, parse_flag

DATASETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "stereo": ("StereoPersona.csv", ("Gender", "Article", "full_prompt")),
    "neutral": ("NeutralPersona.csv", ("Article", "full_prompt")),
    "gender": ("GenderPersona.csv", ("Gender", "Person", "ID", "full_prompt")),
}
WORDINGS: dict[str, str] = {"fictional": "data/", "typical": "data/typical/"}
GENDER_NAMES = {1: "female", 0: "male"}


def upstream_path(dataset: str, wording: str = "fictional") -> str:
    """The upstream path of ``dataset`` (``stereo``, ``neutral``, ``gender``) in the given ``wording``."""
    if dataset not in DATASETS:
        raise ValueError(f"unknown persona dataset {dataset!r}; expected one of {', '.join(DATASETS)}")
    if wording not in WORDINGS:
        raise ValueError(f"unknown persona wording {wording!r}; expected one of {', '.join(WORDINGS)}")
    return WORDINGS[wording] + DATASETS[dataset][0]


def _gender(file: str, number: int, row: dict[str, str], field: str) -> str:
    return GENDER_NAMES[parse_flag(file, number, row, field, (0, 1))]


def _stereo_doc(file: str, number: int, row: dict[str, str]) -> dict:
    return {"stereotype": _gender(file, number, row, "Gender"), "article": _gender(file, number, row, "Article")}


def _neutral_doc(file: str, number: int, row: dict[str, str]) -> dict:
    return {"article": _gender(file, number, row, "Article")}


def _gender_doc(file: str, number: int, row: dict[str, str]) -> dict:
    require_text(file, number, row, ("Person", "ID"))
    return {"gender": _gender(file, number, row, "Gender"), "person": row["Person"], "prompt_id": row["ID"]}


_CONVERTERS: dict[str, Callable[[str, int, dict[str, str]], dict]] = {
    "stereo": _stereo_doc,
    "neutral": _neutral_doc,
    "gender": _gender_doc,
}


def persona_docs(dataset: str, rows: list[dict[str, str]], file: str) -> list[dict]:
    """Rows of a persona CSV as documents (row numbers in errors count the header as row 1)."""
    docs = []
    for number, row in enumerate(rows, start=2):
        require_text(file, number, row, ("full_prompt",))
        docs.append({"id": number - 2, "full_prompt": row["full_prompt"], **_CONVERTERS[dataset](file, number, row)})
    return docs


def load_persona(dataset: str, wording: str = "fictional") -> list[dict]:
    """The published rows of ``dataset`` as documents, fetched and checksum-verified."""
    path = upstream_path(dataset, wording)
    return persona_docs(dataset, load_german_csv(path, DATASETS[dataset][1]), path)
