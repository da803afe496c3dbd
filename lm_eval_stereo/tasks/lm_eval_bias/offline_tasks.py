"""lm_eval's own EsBBQ, CaBBQ, BBQ and CrowS-Pairs English tasks, unchanged but for where their rows come from: a
folder of YAMLs for ``--include_path`` (``lm-eval-stereo``'s tests and the real-model runs, which have no hub).

Each YAML ``include``s the installed lm_eval's own (its prompt, choices, ``process_docs``, ``process_results``, metrics
and group stay lm_eval's) and sets only ``custom_dataset`` (:func:`.mirror_rows.custom_dataset`, the pinned upstream
files in the hub's row shape) and the ``dataset_kwargs`` naming its rows. BBQ's tasks read the hub's ``All`` config;
offline they read the categories the pinned source holds (six of eleven, :func:`.mirror_rows.offline_bbq_categories`),
so their overall figures are over those six and the other five categories' figures are lm_eval's NaN (no row). A task keeps its lm_eval name, so the folder's tasks
override lm_eval's of the same name; a group file only ``include``s lm_eval's group.

Run ``python -m lm_eval_stereo.tasks.lm_eval_bias.offline_tasks FOLDER`` to write the folder.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from lm_eval_stereo.core.whole_files import write_whole
from lm_eval_stereo.tasks.lm_eval_bias.mirror_rows import offline_bbq_categories

#: the lm_eval task folders written, and the mirror their rows come from
FOLDERS = {"esbbq": "esbbq-cabbq", "cabbq": "esbbq-cabbq", "bbq": "bbq", "crows_pairs": "crows-pairs"}
_LANGUAGES = {"esbbq": "es", "cabbq": "ca"}
_DATASET = "!function lm_eval_stereo.tasks.lm_eval_bias.mirror_rows.custom_dataset"


class _Reader(yaml.SafeLoader):
    """Reads lm_eval's YAMLs without resolving their ``!function`` tags."""


_Reader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def lm_eval_tasks_dir() -> Path:
    """The installed lm_eval's ``tasks`` folder."""
    import lm_eval

    return Path(lm_eval.__file__).parent / "tasks"


def _config(path: Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_Reader) or {}


def _override(folder: str, path: Path, config: dict[str, Any]) -> str:
    """The override YAML of one of lm_eval's task or group files."""
    lines = [f"include: {path}"]
    if "group" in config or "task" not in config or isinstance(config.get("task"), list):
        return "\n".join(lines) + "\n"
    if folder == "crows_pairs":
        kwargs = "{mirror: crows-pairs}"
    elif folder == "bbq":
        kwargs = f"{{mirror: bbq, categories: [{', '.join(offline_bbq_categories())}]}}"
    else:
        included = _config(path.parent / config["include"]) if "include" in config else {}
        category = config.get("dataset_name") or included.get("dataset_name")
        kwargs = f"{{mirror: esbbq-cabbq, language: {_LANGUAGES[folder]}, category: {category}}}"
    lines += [f"custom_dataset: {_DATASET}", f"dataset_kwargs: {kwargs}"]
    return "\n".join(lines) + "\n"


def write_offline_tasks(target: Path) -> list[str]:
    """Write the override YAMLs into ``target`` (one subfolder per lm_eval task folder); the task and group names."""
    names = []
    for folder in FOLDERS:
        source = lm_eval_tasks_dir() / folder
        for path in sorted(source.glob("*.yaml")):
            if folder == "crows_pairs" and not path.name.startswith("crows_pairs_english"):
                continue  # the mirror holds the English pairs only
            config = _config(path)
            write_whole(target / folder / path.name, _override(folder, path, config), within=target)
            names.append(str(config.get("group") or config.get("task")))
    return names


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m lm_eval_stereo.tasks.lm_eval_bias.offline_tasks FOLDER")
    print("\n".join(write_offline_tasks(Path(sys.argv[1]))))
