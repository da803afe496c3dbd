"""Generate the per-language task files and the group files of GEST's Slavic tasks (MT and minimal pairs).

Languages and their English names come from :data:`lm_eval_stereo.tasks.gest.data.LANGUAGES`. Run
``python _generate_configs.py`` (``--check`` to verify that the committed files are current). The groups take no
aggregate metric: the languages' figures are reported side by side.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lm_eval_stereo.core.configs import group_config, task_config, write_configs
from lm_eval_stereo.tasks.gest.data import LANGUAGES


def configs() -> dict[str, dict]:
    files: dict[str, dict] = {"_gest.yaml": group_config("gest", ["gest_en"], None)}
    for lang, name in LANGUAGES.items():
        files[f"gest_mt_{lang}.yaml"] = task_config(
            "_gest_mt_template_yaml", f"gest_mt_{lang}", dataset_kwargs={"language": lang, "language_name": name}
        )
        files[f"gest_pairs_{lang}.yaml"] = task_config(
            "_gest_pairs_template_yaml", f"gest_pairs_{lang}", dataset_kwargs={"language": lang}
        )
        files[f"gest_pairs_mlm_{lang}.yaml"] = task_config(
            "_gest_pairs_mlm_template_yaml", f"gest_pairs_mlm_{lang}", dataset_kwargs={"language": lang, "masked": True}
        )
    for group in ("gest_mt", "gest_pairs", "gest_pairs_mlm"):
        files[f"_{group}.yaml"] = group_config(group, [f"{group}_tasks"], None)
    return files


if __name__ == "__main__":
    sys.exit(write_configs(Path(__file__).resolve().parent, configs()))
