"""Generate the per-language task files and the group files of multilingual StereoSet (causal and masked).

Languages come from :data:`lm_eval_stereo.tasks.stereoset_multi.data.LANGUAGES`; group metrics from
:data:`lm_eval_stereo.tasks.stereoset_multi.metrics.METRICS`. Run ``python _generate_configs.py`` (``--check`` to
verify that the committed files are current).
"""

from __future__ import annotations

import sys
from pathlib import Path

from lm_eval_stereo.core.configs import group_config, task_config, write_configs
from lm_eval_stereo.tasks.stereoset_multi.data import LANGUAGES
from lm_eval_stereo.tasks.stereoset_multi.metrics import METRICS

#: the groups' versions follow their tasks' ``metadata.version`` (see the README's changelog)
VERSIONS = {"stereoset_multi": 2.1, "stereoset_multi_mlm": 2.0}
VARIANTS = {
    "stereoset_multi": "_stereoset_multi_template_yaml",
    "stereoset_multi_mlm": "_stereoset_multi_mlm_template_yaml",
}


def configs() -> dict[str, dict]:
    files: dict[str, dict] = {}
    for prefix, template in VARIANTS.items():
        for lang in LANGUAGES:
            files[f"{prefix}_{lang}.yaml"] = task_config(template, f"{prefix}_{lang}", dataset_kwargs={"lang": lang})
        files[f"_{prefix}.yaml"] = group_config(prefix, [f"{prefix}_tasks"], METRICS, version=VERSIONS[prefix])
    return files


if __name__ == "__main__":
    sys.exit(write_configs(Path(__file__).resolve().parent, configs()))
