"""Dependencies by need: the core install runs every task whose scoring needs no language tool; the tools of GEST-MT,
the German personas and the leakage regression are extras, and a task whose extra is missing stops before any request
with one line naming ``pip install "lm-eval-stereo[<extra>]"``. A module is made missing by ``sys.modules[name] =
None`` (what ``import`` and ``importlib.util.find_spec`` then see), in this process or through a ``sitecustomize``
in a subprocess."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import defaultdict
from importlib.metadata import requires
from pathlib import Path

import pytest

from lm_eval_stereo.core.extras import MissingExtraError
from lm_eval_stereo.tasks.german_gender_bias.german_text import LEMMATIZER
from lm_eval_stereo.tasks.gest.detector.slavic_gender import MORPHOLOGY
from lm_eval_stereo.tasks.stereotype_leakage.metrics import REGRESSION

EXTRAS = {extra.name: extra for extra in (MORPHOLOGY, LEMMATIZER, REGRESSION)}
TOOLS = {"pymorphy3", "pymorphy3-dicts-ru", "pymorphy3-dicts-uk", "hanta", "stop-words", "statsmodels"}


def _requirements() -> dict[str, set[str]]:
    """The installed distribution's requirements by extra (``""``: the core install), as lower-case names."""
    found: dict[str, set[str]] = defaultdict(set)
    for requirement in requires("lm-eval-stereo") or []:
        name = re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower()
        extra = re.search(r"extra == ['\"]([\w-]+)['\"]", requirement)
        found[extra.group(1) if extra else ""].add(name)
    return found


def test_the_core_install_holds_no_language_tool_and_each_extra_holds_its_own() -> None:
    found = _requirements()
    assert not found[""] & TOOLS and {"lm-eval", "torch", "scipy"} <= found[""]
    for name, extra in EXTRAS.items():
        # the modules a task checks are those the extra installs (a distribution's module: dashes as underscores)
        assert {module.lower() for module in extra.modules} <= {n.replace("-", "_") for n in found[name]}
    assert found["gest-mt"] | found["german-personas"] | found["leakage"] == TOOLS
    assert found["all"] >= TOOLS | found["report"] and "matplotlib" in found["report"]


def test_a_missing_extra_is_named_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "statsmodels", None)
    with pytest.raises(MissingExtraError) as error:
        REGRESSION.require("stereotype_leakage_en")
    assert str(error.value) == (
        "stereotype_leakage_en needs statsmodels for the leakage regression (Eq. 1) (statsmodels not installed): "
        'pip install "lm-eval-stereo[leakage]"'
    )
    monkeypatch.setitem(sys.modules, "pymorphy3_dicts_uk", None)
    MORPHOLOGY.require("gest_mt_cs", "cs")  # the West and South Slavic detectors need no dictionary
    with pytest.raises(MissingExtraError, match=r"^gest_mt_uk needs pymorphy3 .*\(pymorphy3_dicts_uk not installed\)"):
        MORPHOLOGY.require("gest_mt_uk", "uk")


def test_lm_eval_builds_the_task_only_when_its_extra_is_there(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through lm_eval's own task manager: GEST-MT in Czech builds without pymorphy3, in Russian it stops naming the
    extra; the German persona task stops without HanTa."""
    from lm_eval.tasks import TaskManager

    monkeypatch.setitem(sys.modules, "pymorphy3", None)
    monkeypatch.setitem(sys.modules, "HanTa", None)
    manager = TaskManager(include_defaults=False)
    built = manager.load(["gest_mt_cs"])
    assert [str(task.config.task) for task in built["tasks"].values()] == ["gest_mt_cs"]
    with pytest.raises(MissingExtraError, match=re.escape('pip install "lm-eval-stereo[gest-mt]"')):
        manager.load(["gest_mt_ru"])
    with pytest.raises(MissingExtraError, match=re.escape('pip install "lm-eval-stereo[german-personas]"')):
        manager.load(["gender_persona_de"])


def _blocking(tmp_path: Path, modules: list[str]) -> dict[str, str]:
    """An environment whose Python starts with ``modules`` missing."""
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in modules), encoding="utf-8"
    )
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(tmp_path), os.environ.get("PYTHONPATH"))))}


def test_lm_eval_stops_before_any_request_with_one_line(tiny_causal: Path, tmp_path: Path) -> None:
    env = _blocking(tmp_path, ["statsmodels"])
    env["LM_EVAL_STEREO_ONLY_PLUGIN_TASKS"] = "1"
    command = [str(Path(sys.executable).parent / "lm_eval"), "--model", "hf", "--model_args",
               f"pretrained={tiny_causal},dtype=float32", "--device", "cpu", "--tasks", "stereotype_leakage_en",
               "--limit", "2", "--output_path", str(tmp_path / "out")]  # fmt: skip
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.splitlines()[-1] == (
        "lm-eval-stereo: stereotype_leakage_en needs statsmodels for the leakage regression (Eq. 1) (statsmodels not "
        'installed): pip install "lm-eval-stereo[leakage]"'
    )
    assert "Traceback" not in proc.stderr and "requests" not in proc.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").rglob("results_*.json"))


def test_the_core_install_imports_every_benchmark_without_the_tools(tmp_path: Path) -> None:
    """Without any extra's module, the plugin imports, registers every benchmark and lists its commands."""
    env = _blocking(tmp_path, [module for extra in EXTRAS.values() for module in extra.modules] + ["matplotlib"])
    script = (
        "import lm_eval_stereo.tasks\n"
        "from lm_eval_stereo.core import registry\n"
        "from lm_eval_stereo.cli import usage\n"
        "print(len(registry.benchmarks()), 'leakage' in usage())\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    from lm_eval_stereo.core import registry

    assert proc.stdout.split() == [str(len(registry.benchmarks())), "True"]
