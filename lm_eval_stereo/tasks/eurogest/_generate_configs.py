"""Generate the per-language task files ``eurogest_<lang>.yaml`` and the group file of EuroGEST.

Languages come from :data:`lm_eval_stereo.tasks.eurogest.data.LANGUAGES` (the reference's ``supported_languages.json``).
Run ``python _generate_configs.py`` (``--check`` to verify that the committed files are current). The group takes no
aggregate metric: the languages' figures are reported side by side.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lm_eval_stereo.core.configs import group_config, task_config, write_configs
from lm_eval_stereo.tasks.eurogest.data import LANGUAGES


def configs() -> dict[str, dict]:
    files: dict[str, dict] = {"_eurogest.yaml": group_config("eurogest", ["eurogest_tasks"], None)}
    for lang in LANGUAGES:
        files[f"eurogest_{lang}.yaml"] = task_config(
            "_eurogest_template_yaml", f"eurogest_{lang}", dataset_kwargs={"language": lang}
        )
    return files


if __name__ == "__main__":
    sys.exit(write_configs(Path(__file__).resolve().parent, configs()))
