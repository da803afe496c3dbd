"""Generate the per-language task files and the group files of S_JSD (masked and causal).

Languages come from :data:`lm_eval_stereo.tasks.s_jsd.data.LANGUAGES` (the paper's five in
:data:`~lm_eval_stereo.tasks.s_jsd.data.PAPER_LANGUAGES`); group metrics from the Python declarations in
:mod:`lm_eval_stereo.tasks.s_jsd.metrics`. Groups: ``s_jsd_mlm`` / ``s_jsd`` (the paper's languages) and
``s_jsd_mlm_ext`` / ``s_jsd_ext`` (all ten). Run ``python _generate_configs.py`` (``--check`` to verify that the
committed files are current).
"""

from __future__ import annotations

import sys
from pathlib import Path

from lm_eval_stereo.core.configs import group_config, task_config, write_configs
from lm_eval_stereo.tasks.s_jsd.data import LANGUAGES, PAPER_LANGUAGES
from lm_eval_stereo.tasks.s_jsd.task import SJSDCausalTask, SJSDMaskedTask

VARIANTS = {
    "s_jsd_mlm": ("_s_jsd_mlm_template_yaml", SJSDMaskedTask.METRICS),
    "s_jsd": ("_s_jsd_template_yaml", SJSDCausalTask.METRICS),
}


def configs() -> dict[str, dict]:
    files: dict[str, dict] = {}
    for prefix, (template, metrics) in VARIANTS.items():
        for lang in LANGUAGES:
            tags = [f"{prefix}_tasks", f"{prefix}_ext_tasks"] if lang in PAPER_LANGUAGES else [f"{prefix}_ext_tasks"]
            files[f"{prefix}_{lang}.yaml"] = task_config(
                template, f"{prefix}_{lang}", tag=tags, dataset_kwargs={"lang": lang}
            )
        files[f"_{prefix}.yaml"] = group_config(prefix, [f"{prefix}_tasks"], metrics)
        files[f"_{prefix}_ext.yaml"] = group_config(f"{prefix}_ext", [f"{prefix}_ext_tasks"], metrics)
    files["s_jsd_crows_mlm.yaml"] = task_config(
        "_s_jsd_mlm_template_yaml", "s_jsd_crows_mlm", dataset_kwargs={"lang": "crows"}
    )
    return files


if __name__ == "__main__":
    sys.exit(write_configs(Path(__file__).resolve().parent, configs()))
