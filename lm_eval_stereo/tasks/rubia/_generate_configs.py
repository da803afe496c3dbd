"""Generate the per-domain task files and the group files of RuBia (causal ``rubia_<domain>``, masked
``rubia_mlm_<domain>``).

Domains come from :data:`lm_eval_stereo.tasks.rubia.data.TASK_TYPES`. Run ``python _generate_configs.py`` (``--check``
to verify that the committed files are current). The groups take no aggregate metric: each domain's share is reported
on its own, as in the paper.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lm_eval_stereo.core.configs import group_config, task_config, write_configs
from lm_eval_stereo.tasks.rubia.data import DOMAINS

VARIANTS = {"rubia": "_rubia_template_yaml", "rubia_mlm": "_rubia_mlm_template_yaml"}


def configs() -> dict[str, dict]:
    files: dict[str, dict] = {}
    for prefix, template in VARIANTS.items():
        files[f"_{prefix}.yaml"] = group_config(prefix, [f"{prefix}_tasks"], None)
        for domain in DOMAINS:
            files[f"{prefix}_{domain}.yaml"] = task_config(template, f"{prefix}_{domain}",
                                                           dataset_kwargs={"domain": domain})  # fmt: skip
    return files


if __name__ == "__main__":
    sys.exit(write_configs(Path(__file__).resolve().parent, configs()))
