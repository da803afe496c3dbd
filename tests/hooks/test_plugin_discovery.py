"""Discovery: plain ``lm_eval`` (import hook), ``lm-eval-stereo``, ``--include_path``, a non-editable wheel, fail-soft."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import warnings
from pathlib import Path

from lm_eval_runner import REPO, run_command, run_lm_eval

from lm_eval_stereo import _autoload, tasks_path
from lm_eval_stereo.cli_lm_eval import listing_argv
from lm_eval_stereo.hooks.tasks import ONLY_PLUGIN_TASKS_ENV

BIN = Path(sys.executable).parent


def run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env={**os.environ, **env}, timeout=600)


def run_installed(command: list[str], cwd: Path, **extra: str) -> subprocess.CompletedProcess:
    """:func:`run` in an environment with no ``PYTHONPATH`` (a checkout on it would shadow the installed wheel),
    ``extra`` added."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"} | extra
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


def eval_args(model: Path) -> list[str]:
    return ["--model", "hf", "--model_args", f"pretrained={model},dtype=float32", "--device", "cpu", "--limit", "2"]


def test_task_listings_show_plugin_and_builtin_tasks(tmp_path):
    """Plain ``lm_eval`` keeps lm_eval's own command line: ``lm_eval ls groups`` lists the plugin's groups beside
    lm_eval's, in one table. ``lm-eval-stereo --tasks list`` (the listing flag lm_eval 0.4.13 removed) runs
    ``lm_eval ls tasks`` (:func:`listing_argv`); the console script without the hook and with the plugin-only index
    (the ``LM_EVAL_STEREO_ONLY_PLUGIN_TASKS=1`` every other lm_eval test of this suite runs with) lists the plugin's
    tasks only. (One full listing, of the groups: a listing indexes every YAML of lm_eval's and reads them again;
    ``ls tasks`` took about 20 CPU-seconds in a fresh process here, ``ls groups`` 15.)"""
    listing = run_command(
        "ls", "groups", executable="lm_eval", env={ONLY_PLUGIN_TASKS_ENV: ""}, cwd=tmp_path, timeout=600
    )
    assert listing.returncode == 0, listing.stderr[-2000:]
    groups = {line.split("|")[1].strip() for line in listing.stdout.splitlines() if line.startswith("|")}
    assert {"stereoset_multi", "gest", "mmlu", "AraDiCE"} <= groups
    env = {_autoload.AUTOLOAD_ENV: "0", ONLY_PLUGIN_TASKS_ENV: "1"}
    via_plugin = run([str(BIN / "lm-eval-stereo"), "--tasks", "list"], tmp_path, **env)
    assert via_plugin.returncode == 0, via_plugin.stderr[-2000:]
    assert "stereoset_multi_tr" in via_plugin.stdout and "gest_en" in via_plugin.stdout
    assert "hellaswag" not in via_plugin.stdout and "arc_easy" not in via_plugin.stdout


def test_legacy_listing_flags_are_translated_and_nothing_else():
    assert listing_argv(["--tasks", "list"]) == ["ls", "tasks"]
    assert listing_argv(["run", "--tasks=list_groups", "--include_path", "x"]) == [
        "ls",
        "groups",
        "--include_path",
        "x",
    ]
    assert listing_argv(["--tasks", "list", "--model", "hf"]) is None
    assert listing_argv(["--tasks", "stereoset_multi"]) is None
    assert listing_argv(["ls", "tasks"]) is None


def test_console_script_works_without_the_hook(tiny_causal, tmp_path):
    run_ = run_lm_eval(
        [*eval_args(tiny_causal), "--tasks", "stereoset_multi_es"],
        tmp_path,
        executable="lm-eval-stereo",
        env={_autoload.AUTOLOAD_ENV: "0"},
    )
    assert run_.metric("stereoset_multi_es", "count") == 2


def test_include_path_works_without_the_hook_and_nothing_without_either(tiny_causal, tmp_path):
    printed = run([str(BIN / "lm-eval-stereo"), "tasks-path"], tmp_path).stdout.strip()
    assert Path(printed) == tasks_path() and (Path(printed) / "stereoset_multi").is_dir()
    env = {_autoload.AUTOLOAD_ENV: "0"}
    with_path = run_lm_eval(
        [*eval_args(tiny_causal), "--tasks", "stereoset_multi_en", "--include_path", printed], tmp_path, env=env
    )
    assert with_path.metric("stereoset_multi_en", "count") == 2
    without = run_lm_eval(
        [*eval_args(tiny_causal), "--tasks", "stereoset_multi_en"], tmp_path / "none", env=env, check=False
    )
    assert without.returncode != 0 and "stereoset_multi_en" in without.stderr


def run_probe(code: str, folder: Path, **env: str) -> subprocess.CompletedProcess:
    """``python probe.py`` of ``code`` in ``folder``, a child of the fork server of its environment: an interpreter
    started with that environment (the plugin's start-up hook on, or off), less the imports of lm_eval and torch."""
    probe = folder / "probe.py"
    probe.write_text(code, encoding="utf-8")
    return run_command(script=probe, env=env, cwd=folder, timeout=600)


def test_models_are_registered_beside_the_builtin_ones(tmp_path):
    probe = (
        "from lm_eval.api.registry import get_model, model_registry\n"
        "print(get_model('hf').__name__, 'hf-mlm' in model_registry, 'replay' in model_registry)\n"
    )
    assert run_probe(probe, tmp_path).stdout.split() == ["HFLM", "True", "True"]
    disabled = run_probe(probe, tmp_path, **{_autoload.AUTOLOAD_ENV: "0"})
    assert disabled.stdout.split() == ["HFLM", "False", "False"]


def test_hook_adds_the_task_folder_once(tmp_path):
    """Passing the plugin's folder explicitly as well must not index it twice (no override warnings)."""
    probe = (
        f"import lm_eval.tasks as t\nm = t.TaskManager(include_defaults=False, include_path=[{str(tasks_path())!r}])\n"
        "print(' '.join(sorted(n for n in m.all_tasks if n.startswith('stereoset_multi_'))))\n"
    )
    result = run_probe(probe, tmp_path)
    names = result.stdout.split()
    assert {f"stereoset_multi_{lang}" for lang in ("en", "de", "fr", "es", "tr")} <= set(names)
    assert len(names) == len(set(names))
    assert "overrid" not in result.stderr.lower()


def test_non_editable_wheel_install(tiny_causal, tmp_path):
    """Build the wheel, install it into a fresh environment, and run plain ``python -m lm_eval`` there."""
    wheels = tmp_path / "wheels"
    built = run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(REPO)],
        tmp_path,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    wheel = next(wheels.glob("lm_eval_stereo-*.whl"))
    env_dir = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    site = Path(
        subprocess.run(
            [str(env_dir / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # the dependencies come from the development environment, but not its editable install of this package
    (site / "_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    installed = run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-compile", "--target", str(site), str(wheel)],
        tmp_path,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    assert (site / "lm_eval_stereo_autoload.pth").is_file()
    assert (site / "lm_eval_stereo" / "tasks" / "stereoset_multi" / "_stereoset_multi_template_yaml").is_file()
    python = str(env_dir / "bin" / "python")
    where = run_installed([python, "-c", "import lm_eval_stereo; print(lm_eval_stereo.tasks_path())"], tmp_path).stdout
    assert Path(where.strip()) == site / "lm_eval_stereo" / "tasks"
    out = tmp_path / "out"
    out.mkdir()
    result = run_installed(  # the installed hook reads the plugin-only index's variable too
        [python, "-m", "lm_eval", *eval_args(tiny_causal), "--tasks", "stereoset_multi_de", "--output_path", str(out)],
        out,
        **{ONLY_PLUGIN_TASKS_ENV: "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "stereoset_multi_de" in result.stdout and "icat" in result.stdout
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not any("PluginHookWarning" in line for line in result.stderr.splitlines())
