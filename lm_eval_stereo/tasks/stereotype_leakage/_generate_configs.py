"""Generate the per-language task files and the group files of the stereotype-leakage tasks.

Languages come from :data:`lm_eval_stereo.tasks.stereotype_leakage.data.LANGUAGES`; each task family names its
template sets (option ``templates``: ``committed`` / ``full``). Run ``python _generate_configs.py`` (``--check`` to
verify that the committed files are current). The groups take no aggregate metric: a leakage regression has one
target language, the languages' figures are reported side by side.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lm_eval_stereo.core.configs import group_config, task_config, write_configs
from lm_eval_stereo.tasks.stereotype_leakage.data import LANGUAGES

#: task family -> its template sets for templates=committed / full
FAMILIES: dict[str, dict[str, str]] = {
    "stereotype_leakage_mlm": {"committed": "mlm", "full": "mlm_full"},
    "stereotype_leakage": {"committed": "mlm", "full": "mlm_full"},
    "stereotype_leakage_seq2seq": {"committed": "seq2seq", "full": "mlm_full"},
}
#: the generative family (no template sets: the notebook's prompts)
GEN = "stereotype_leakage_gen"


def configs() -> dict[str, dict]:
    files: dict[str, dict] = {}
    for family, template_sets in FAMILIES.items():
        for lang in LANGUAGES:
            files[f"{family}_{lang}.yaml"] = task_config(
                f"_{family}_template_yaml",
                f"{family}_{lang}",
                dataset_kwargs={"language": lang, "template_sets": template_sets},
            )
        files[f"_{family}.yaml"] = group_config(family, [f"{family}_tasks"], None)
    for lang in LANGUAGES:
        files[f"{GEN}_{lang}.yaml"] = task_config(
            f"_{GEN}_template_yaml", f"{GEN}_{lang}", dataset_kwargs={"language": lang}
        )
    files[f"_{GEN}.yaml"] = group_config(GEN, [f"{GEN}_tasks"], None)
    return files


if __name__ == "__main__":
    sys.exit(write_configs(Path(__file__).resolve().parent, configs()))
