"""A new benchmark of the package is its folder plus one line: in a temporary copy of the package, a folder
``tasks/toybench/`` and its name in ``FOLDERS`` (nothing else of the copy touched) give its tasks to ``lm_eval
--tasks``, its results to the report and the export, its pinned file to ``lm-eval-stereo data``, its tasks to the
leaderboard group its declaration names and its rows to the generated docs tables.

The folder is built from the pieces of ``tests/benchmarks/test_third_party_benchmark.py``'s fixture package (its metric set,
task class, data file and YAMLs, their imports moved into the package), declared as a package benchmark: with a
pinned source for its data file and ``leaderboard={"stereo_leaderboard": ...}``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from lm_eval_runner import REPO, LmEvalRun, run_command, run_lm_eval
from test_third_party_benchmark import FIXTURE, SENTENCES, TASKS

from lm_eval_stereo.core.values import parse_model_args

NAME = "toybench"
#: the copy's folder list after the one added line
FOLDERS_LINE = '    "rubia",\n'


@dataclass
class Copy:
    root: Path  # the copy's repository root: lm_eval_stereo/, scripts/, README.md, docs/REPORT.md
    env: dict[str, str]  # the environment whose lm_eval_stereo is the copy's
    run: LmEvalRun


def _folder(package: Path) -> None:
    """``tasks/toybench/``: the fixture's pieces as a package benchmark's, its declaration with a pinned source and
    its leaderboard group."""
    folder = package / "tasks" / NAME
    shutil.copytree(FIXTURE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    for path in folder.iterdir():
        if path.suffix in (".py", ".yaml"):
            text = re.sub(r"(from |!function )toybench\b", rf"\1lm_eval_stereo.tasks.{NAME}", path.read_text())
            path.write_text(text, encoding="utf-8")
    data = (folder / "sentences.jsonl").read_bytes()
    (folder / "sources.py").write_text(
        "from lm_eval_stereo.core.pins import parse_pins\n"
        "from lm_eval_stereo.core.upstream import Source\n\n"
        f'TOY = Source(name="{NAME}", repo="toy-org/toybench", commit="{"0" * 40}", licence="CC0-1.0",\n'
        '             citation="Toy, Author (2026). Toy pronouns. Nowhere.",\n'
        f'             files=parse_pins("{hashlib.sha256(data).hexdigest()} {len(data)} sentences.jsonl"))\n',
        encoding="utf-8",
    )
    declaration = folder / "__init__.py"
    text = declaration.read_text(encoding="utf-8")
    assert "    sources=(),\n" in text
    text = text.replace(
        "    sources=(),\n", f"    sources=(TOY,),\n    leaderboard={{'stereo_leaderboard': {TASKS!r}}},\n"
    )
    declaration.write_text(f"from lm_eval_stereo.tasks.{NAME}.sources import TOY\n{text}", encoding="utf-8")
    (folder / "README.md").write_text("# Toy pronouns\n", encoding="utf-8")


def _one_line(package: Path) -> None:
    """The benchmark's one line in ``FOLDERS``."""
    listing = package / "tasks" / "__init__.py"
    text = listing.read_text(encoding="utf-8")
    assert text.count(FOLDERS_LINE) == 1
    listing.write_text(text.replace(FOLDERS_LINE, f'{FOLDERS_LINE}    "{NAME}",\n'), encoding="utf-8")


@pytest.fixture(scope="module")
def copy(tiny_causal: Path, tmp_path_factory: pytest.TempPathFactory) -> Copy:
    """The copy with the new folder and its line, and toybench_en, toybench_de through its lm_eval on a tiny model."""
    root = tmp_path_factory.mktemp("copy")
    shutil.copytree(REPO / "lm_eval_stereo", root / "lm_eval_stereo", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "scripts", root / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "docs").mkdir()
    for page in ("README.md", "docs/REPORT.md"):
        shutil.copy(REPO / page, root / page)
    _folder(root / "lm_eval_stereo")
    _one_line(root / "lm_eval_stereo")
    env = {"PYTHONPATH": str(root)}
    args = ["--model", "hf", "--model_args", f"pretrained={tiny_causal},dtype=float32", "--device", "cpu"]
    run = run_lm_eval([*args, "--tasks", ",".join(TASKS), "--log_samples"], root / "out", env=env)
    return Copy(root, {**os.environ, **env}, run)


def _run(copy: Copy, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, env=copy.env, cwd=copy.root, timeout=600)


def _console(copy: Copy, *args: str) -> subprocess.CompletedProcess:
    """``lm-eval-stereo ARGS...`` of the copy, in the fork server of its ``lm_eval`` run."""
    return run_command(*args, env={"PYTHONPATH": str(copy.root)}, cwd=copy.root)


def _script(copy: Copy, script: Path, *args: str) -> subprocess.CompletedProcess:
    """``python SCRIPT ARGS...`` of the copy, in the fork server of its ``lm_eval`` run."""
    return run_command(*args, env={"PYTHONPATH": str(copy.root)}, cwd=copy.root, script=script)


def test_the_copy_is_the_package_read(copy: Copy) -> None:
    proc = _run(copy, sys.executable, "-c", "import lm_eval_stereo.tasks as t; print(t.__file__, t.FOLDERS[-2])")
    assert proc.stdout.split() == [str(copy.root / "lm_eval_stereo" / "tasks" / "__init__.py"), NAME]


def test_lm_eval_runs_its_tasks_by_name(copy: Copy) -> None:
    for task in TASKS:
        metadata = copy.run.results["configs"][task]["metadata"]
        assert metadata["benchmark"] == NAME and metadata["metric_set"] == "toybench.scores"
        assert copy.run.metric(task, "count") == len(copy.run.samples[task]) == SENTENCES
        assert copy.run.results["configs"][task]["metadata"]["data"]  # its pinned source recorded


def test_the_report_and_the_export_read_it(copy: Copy, tmp_path: Path) -> None:
    proc = _console(copy, "report", str(copy.root / "out"), "--json", str(tmp_path / "r.json"))
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    for task in TASKS:
        (cell,) = report["tasks"][task].values()
        share = cell["metrics"]["masculine_share"]
        assert share["value"] == copy.run.metric(task, "masculine_share") and share["ideal"] == 0.5
    folder = parse_model_args(copy.run.results["config"]["model_args"])["pretrained"]
    proc = _console(
        copy, "export", str(copy.root / "out"), "--format", "eee", "--output", str(tmp_path / "eee"),
        f"--model-id={folder}=toy-org/tiny",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (record,) = [json.loads(path.read_text(encoding="utf-8")) for path in (tmp_path / "eee").rglob("*.json")]
    published = {result["evaluation_result_id"] for result in record["evaluation_results"]}
    assert {f"{task}/masculine_share" for task in TASKS} <= published


def test_the_data_command_lists_its_pinned_file(copy: Copy) -> None:
    proc = _console(copy, "data", "list", "--json", "--benchmarks", NAME)
    assert proc.returncode == 0, proc.stderr
    (record,) = json.loads(proc.stdout)
    assert (record["source"], record["path"], record["repository"]) == (NAME, "sentences.jsonl", "toy-org/toybench")


def test_the_leaderboard_group_its_declaration_names_holds_its_tasks(copy: Copy) -> None:
    generator = copy.root / "lm_eval_stereo" / "tasks" / "leaderboard" / "_generate_configs.py"
    stale = _script(copy, generator, "--check")
    assert stale.returncode == 1 and "stereo_leaderboard.yaml" in stale.stdout
    assert "stereo_leaderboard_chat.yaml" not in stale.stdout  # it declares no generative task
    assert _script(copy, generator).returncode == 0
    group = (generator.parent / "stereo_leaderboard.yaml").read_text(encoding="utf-8")
    members = re.findall(r"^- (\S+)$", group, re.M)
    assert members[-3:] == ["rubia", *TASKS]  # in registration order: its line follows RuBia's
    index = _run(copy, sys.executable, "-c", "from lm_eval.tasks import TaskManager; print(' '.join(sorted(TaskManager("
                 "include_defaults=False).all_tasks)))")  # fmt: skip
    assert {"stereo_leaderboard", *TASKS} <= set(index.stdout.split()), index.stderr[-2000:]


def test_the_generated_docs_tables_and_the_real_model_tasks_name_it(copy: Copy) -> None:
    script = copy.root / "scripts" / "readme_tables.py"
    stale = _script(copy, script, "--check")
    assert stale.returncode == 1
    assert "README.md: stale generated table(s): benchmarks, citations" in stale.stdout
    assert "docs/REPORT.md: stale generated table(s): benchmarks" in stale.stdout
    assert _script(copy, script).returncode == 0
    readme = (copy.root / "README.md").read_text(encoding="utf-8")
    assert "| [Toy pronouns](lm_eval_stereo/tasks/toybench/README.md) | Toy and Author 2026 | 2: en, de |" in readme
    assert "- Toy, Author (2026). Toy pronouns. Nowhere." in readme
    page = (copy.root / "docs" / "REPORT.md").read_text(encoding="utf-8")
    assert "| [Toy pronouns](../lm_eval_stereo/tasks/toybench/README.md) (Toy and Author 2026) |" in page
    assert "`toybench.scores`: **`masculine_share`** (0.5) |" in page
    tasks = "import sys; sys.path.insert(0, 'scripts'); import run_real_models as r; print(*r.loglikelihood_tasks())"
    listed = _run(copy, sys.executable, "-c", tasks)  # scripts/run_real_models.py's tasks, RuBia's last file first
    assert listed.stdout.split()[-3:] == ["rubia_nationality", *sorted(TASKS)], listed.stderr[-2000:]
