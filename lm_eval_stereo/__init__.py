"""lm-eval-stereo: multilingual stereotype and gender-bias benchmarks for lm-evaluation-harness."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs ~10 ms at every interpreter start-up

if TYPE_CHECKING:
    from pathlib import Path

__version__ = "0.1.0"


def tasks_path() -> Path:
    """Directory holding the plugin's task YAMLs (inside the wheel, or ``tasks/`` of a source checkout)."""
    from pathlib import Path

    package_dir = Path(__file__).resolve().parent
    for candidate in (package_dir / "tasks", package_dir.parent / "tasks"):
        if candidate.is_dir() and any(candidate.rglob("*.yaml")):
            return candidate
    raise FileNotFoundError(f"lm-eval-stereo task configs not found next to {package_dir}; reinstall the package")
