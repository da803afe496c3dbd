"""Run the real ``lm_eval`` console script in a subprocess and read back its results and samples."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lm_eval_stereo._autoload import ONLY_PLUGIN_TASKS_ENV

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A TCP port no process listens on now (``accelerate launch`` runs of parallel test workers must not share one)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def shared_data_dir() -> Path:
    """The offline mirror: ``$LM_EVAL_STEREO_DATA_DIR`` if set, else ``../shared/data`` beside the repository."""
    configured = os.environ.get("LM_EVAL_STEREO_DATA_DIR")
    return Path(configured) if configured else REPO.parent / "shared" / "data"


@dataclass
class LmEvalRun:
    returncode: int
    stdout: str
    stderr: str
    results: dict
    samples: dict[str, list[dict]]
    output_dir: Path

    def metric(self, task: str, name: str, filter_key: str = "none"):
        return self.results["results"][task][f"{name},{filter_key}"]


def lm_eval_command(
    args: list[str],
    output_dir: Path,
    *,
    executable: str = "lm_eval",
    launcher: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of ``executable args... --output_path output_dir`` (``launcher`` instead of
    the executable when given, e.g. a Python script that wraps lm_eval's command line).

    lm_eval indexes only the plugin's tasks and ``--include_path`` (``LM_EVAL_STEREO_ONLY_PLUGIN_TASKS=1``, about 10 s
    less start-up per run) unless ``env`` sets that variable: the discovery tests run the full index."""
    program = list(launcher) or [str(Path(sys.executable).parent / executable)]
    output_dir.mkdir(parents=True, exist_ok=True)
    return [*program, *args, "--output_path", str(output_dir)], {
        **os.environ,
        ONLY_PLUGIN_TASKS_ENV: "1",
        **(env or {}),
    }


def read_outputs(output_dir: Path) -> tuple[dict, dict[str, list[dict]]]:
    """The newest results file below ``output_dir`` and the samples beside it ({} when there is none)."""
    results: dict = {}
    samples: dict[str, list[dict]] = {}
    result_files = sorted(output_dir.rglob("results_*.json"), key=lambda p: p.stat().st_mtime)
    if result_files:
        results = json.loads(result_files[-1].read_text())
        for sample_file in result_files[-1].parent.glob("samples_*.jsonl"):
            task = sample_file.name[len("samples_") :].rsplit("_", 1)[0]
            samples[task] = [json.loads(line) for line in sample_file.read_text().splitlines() if line.strip()]
    return results, samples


def run_lm_eval(
    args: list[str],
    output_dir: Path,
    *,
    executable: str = "lm_eval",
    launcher: Sequence[str] = (),
    env: dict[str, str] | None = None,
    check: bool = True,
    timeout: int = 900,
) -> LmEvalRun:
    """Run lm_eval (see :func:`lm_eval_command`) and parse the newest results/samples files."""
    command, full_env = lm_eval_command(args, output_dir, executable=executable, launcher=launcher, env=env)
    proc = subprocess.run(command, capture_output=True, text=True, env=full_env, timeout=timeout, cwd=output_dir)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(command)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
        )
    results, samples = read_outputs(output_dir)
    return LmEvalRun(proc.returncode, proc.stdout, proc.stderr, results, samples, output_dir)


def assert_same_metrics(one: dict, two: dict, *, tolerance: float = 1e-6) -> int:
    """Two results' metrics of one task agree: the same keys, finite floats within ``tolerance``, NaN where NaN, every
    other value equal (the alias aside). Returns how many finite floats were compared."""
    assert one.keys() == two.keys()
    compared = 0
    for key, value in one.items():
        if isinstance(value, float) and math.isfinite(value):
            assert two[key] == value or abs(two[key] - value) <= tolerance, (key, value, two[key])
            compared += 1
        elif key != "alias":
            assert two[key] == value or (value != value and two[key] != two[key]), (key, value, two[key])
    return compared
