"""Generate the KoBBQ task files (``kobbq``, ``kobbq_gen``) from the task registry below and the shared templates.

KoBBQ has one language (Korean); each task names it in ``dataset_kwargs``. Run ``python _generate_configs.py``
(``--check`` to verify that the committed files are current).
"""

from __future__ import annotations

import sys
from pathlib import Path

from lm_eval_stereo.core.configs import task_config, write_configs

LANGUAGE = "ko"
#: task name → its template
TASKS = {"kobbq": "_kobbq_choice_template_yaml", "kobbq_gen": "_kobbq_gen_template_yaml"}


def configs() -> dict[str, dict]:
    return {
        f"{task}.yaml": task_config(template, task, dataset_kwargs={"language": LANGUAGE})
        for task, template in TASKS.items()
    }


if __name__ == "__main__":
    sys.exit(write_configs(Path(__file__).resolve().parent, configs()))
