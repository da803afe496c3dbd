"""``lm-eval-stereo`` with no arguments or ``--help`` lists the plugin's own commands, one line each, then says that
anything else goes to lm_eval (it used to print lm_eval's help, where the plugin's commands appear nowhere)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from lm_eval_runner import run_command

from lm_eval_stereo.cli import COMMANDS
from lm_eval_stereo.tasks import FOLDERS

OWN = ("report", "export", "data", "inventory", "real-model", "build-tiny-model", "tasks-path")


@pytest.mark.parametrize("arguments", [[], ["--help"], ["-h"]], ids=["none", "--help", "-h"])
def test_help_lists_the_plugins_commands_then_lm_eval(arguments: list[str]) -> None:
    proc = run_command(*arguments)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("usage: lm-eval-stereo COMMAND")
    first = lines.index("commands:") + 1
    listed = lines[first : lines.index("", first)]
    names = [line.split()[0] for line in listed]
    # every command the script dispatches, the benchmarks' own (leakage) included, each on one line with its summary
    assert sorted(names) == sorted([*OWN, "leakage"])
    assert set(COMMANDS) == set(OWN)
    for line in listed:
        assert line.startswith("  ") and len(line.split()) > 3, line
    assert any(line.split()[0] == "leakage" and "Eq. 1" in line for line in listed)
    tail = "\n".join(lines[first + len(listed) :])
    assert "Anything else goes to lm_eval" in tail and "lm_eval --help" in tail
    # not lm_eval's help: none of its own options is listed
    assert "--num_fewshot" not in proc.stdout and "--batch_size" not in proc.stdout


def test_each_listed_command_runs_its_own_parser() -> None:
    """A listed command's ``--help`` is its own parser's (not lm_eval's), which names the command."""
    for name in ("tasks-path", "data", "report"):
        proc = run_command(name, "--help")
        assert proc.returncode == 0, proc.stderr
        assert f"lm-eval-stereo {name}" in proc.stdout.splitlines()[0]


#: what a command that reads results or lists commands has no use for, and what each costs a fresh process to import
#: (CPU-seconds on the 2-core test machine): torch 1.6, lm_eval's task classes 1.5 (datasets with them), scipy.stats
#: 1.1, pandas 0.5
HEAVY = ("torch", "lm_eval.api.task", "datasets", "scipy.stats", "pandas")


def test_the_benchmarks_declarations_and_the_reading_commands_import_no_heavy_package() -> None:
    """The registry (every benchmark's declaration), the command line and the report import none of :data:`HEAVY`:
    ``lm-eval-stereo --help``, ``report`` and ``export`` start in a fraction of a second, not the four seconds those
    imports took; the metric code imports them where it computes."""
    probe = (
        "import sys, lm_eval_stereo.cli, lm_eval_stereo.tasks, lm_eval_stereo.report, lm_eval_stereo.export.command;"
        "from lm_eval_stereo.core.registry import benchmarks;"
        f"print(len(benchmarks()), *(name for name in {HEAVY!r} if name in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(len(FOLDERS))]  # every declaration read, no heavy package imported
