"""Generate the per-language task files and the group files of MBBQ.

Languages come from :data:`lm_eval_stereo.tasks.mbbq.data.LANGUAGES`; group metrics from the Python declarations in
:mod:`lm_eval_stereo.tasks.mbbq.metrics`. Tasks: ``mbbq_<lang>``, ``mbbq_control_<lang>`` (log-likelihood),
``mbbq_gen_<lang>``, ``mbbq_gen_control_<lang>`` (generation); groups ``mbbq``, ``mbbq_control``, ``mbbq_gen``,
``mbbq_gen_control`` over the four languages. Run ``python _generate_configs.py`` (``--check`` to verify that the
committed files are current).
"""

from __future__ import annotations

import sys
from pathlib import Path

from lm_eval_stereo.core.configs import group_config, task_config, write_configs
from lm_eval_stereo.tasks.mbbq.data import LANGUAGES
from lm_eval_stereo.tasks.mbbq.metrics import BIAS_METRICS, CONTROL_METRICS

#: prefix -> (template, control set?, metric set)
VARIANTS = {
    "mbbq": ("_mbbq_template_yaml", False, BIAS_METRICS),
    "mbbq_control": ("_mbbq_template_yaml", True, CONTROL_METRICS),
    "mbbq_gen": ("_mbbq_gen_template_yaml", False, BIAS_METRICS),
    "mbbq_gen_control": ("_mbbq_gen_template_yaml", True, CONTROL_METRICS),
}


def configs() -> dict[str, dict]:
    files: dict[str, dict] = {}
    for prefix, (template, control, metrics) in VARIANTS.items():
        for lang in LANGUAGES:
            files[f"{prefix}_{lang}.yaml"] = task_config(
                template, f"{prefix}_{lang}", tag=[f"{prefix}_tasks"], dataset_kwargs={"lang": lang, "control": control}
            )
        files[f"_{prefix}.yaml"] = group_config(prefix, [f"{prefix}_tasks"], metrics)
    return files


if __name__ == "__main__":
    sys.exit(write_configs(Path(__file__).resolve().parent, configs()))
