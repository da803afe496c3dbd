"""lm-eval-stereo: multilingual stereotype and gender-bias benchmarks for lm-evaluation-harness."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs ~10 ms at every interpreter start-up

if TYPE_CHECKING:
    from pathlib import Path

__version__ = "0.1.0"


def tasks_path() -> Path:
    """Directory holding the plugin's task YAMLs (package data: ``lm_eval_stereo/tasks``)."""
    from pathlib import Path

    candidate = Path(__file__).resolve().parent / "tasks"
    if candidate.is_dir() and any(candidate.rglob("*.yaml")):
        return candidate
    raise FileNotFoundError(f"lm-eval-stereo task configs not found in {candidate}; reinstall the package")
