"""Generate the per-domain task files ``rubia_<domain>.yaml`` and the group file of RuBia.

Domains come from :data:`lm_eval_stereo.tasks.rubia.data.TASK_TYPES`. Run ``python _generate_configs.py`` (``--check``
to verify that the committed files are current). The group takes no aggregate metric: each domain's share is reported
on its own, as in the paper.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lm_eval_stereo.core.configs import group_config, task_config, write_configs
from lm_eval_stereo.tasks.rubia.data import DOMAINS


def configs() -> dict[str, dict]:
    files: dict[str, dict] = {"_rubia.yaml": group_config("rubia", ["rubia_tasks"], None)}
    for domain in DOMAINS:
        files[f"rubia_{domain}.yaml"] = task_config(
            "_rubia_template_yaml", f"rubia_{domain}", dataset_kwargs={"domain": domain}
        )
    return files


if __name__ == "__main__":
    sys.exit(write_configs(Path(__file__).resolve().parent, configs()))
