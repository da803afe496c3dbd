"""docs/ARCHITECTURE.md names every module of the package with its job: a new module without its row, or a row whose
module is gone, fails here. No model, no lm_eval."""

from __future__ import annotations

import re
from pathlib import Path

from lm_eval_runner import REPO

PAGE = REPO / "docs" / "ARCHITECTURE.md"
PACKAGE = REPO / "lm_eval_stereo"
#: the one pattern the page may name instead of one row per benchmark: every benchmark's YAML generator
GENERATOR = "tasks/<benchmark>/_generate_configs.py"
#: a row of the page's module tables: `path` | its job |
ROW = re.compile(r"^\| `(?P<path>[^`]+\.py)` \| (?P<job>[^|]*\S[^|]*) \|$")


def _section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def named_modules(text: str) -> dict[str, str]:
    """The module rows of the page's "Every module" section: path (relative to ``lm_eval_stereo/``) -> job."""
    rows: dict[str, str] = {}
    for line in _section(text, "Every module").splitlines():
        if found := ROW.match(line):
            assert found["path"] not in rows, f"{found['path']} is named twice"
            rows[found["path"]] = found["job"].strip()
    return rows


def package_modules(package: Path = PACKAGE) -> set[str]:
    """Every module of the package by its path below it, except a benchmark folder's ``__init__.py`` (its
    declaration) and the benchmarks' generators, which the page names by :data:`GENERATOR`."""
    benchmark_inits = {path for path in (package / "tasks").glob("*/__init__.py")}
    generators = set((package / "tasks").glob("*/_generate_configs.py"))
    return {
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if path not in benchmark_inits and path not in generators and "__pycache__" not in path.parts
    }


def test_the_architecture_page_names_every_module_and_no_other() -> None:
    rows = named_modules(PAGE.read_text(encoding="utf-8"))
    assert GENERATOR in rows, "the page names the benchmarks' generators by their pattern"
    assert list((PACKAGE / "tasks").glob("*/_generate_configs.py")), "the pattern stands for real files"
    named = set(rows) - {GENERATOR}
    modules = package_modules()
    assert sorted(modules - named) == [], "modules missing from docs/ARCHITECTURE.md (add a row with its job)"
    assert sorted(named - modules) == [], "docs/ARCHITECTURE.md names modules that do not exist"
    assert all(len(job.split()) >= 2 for job in rows.values()), "every row says the module's job"


def test_the_check_sees_a_missing_and_a_stale_row(tmp_path: Path) -> None:
    """The check above fails both ways: a module without a row, and a row without a module."""
    package = tmp_path / "lm_eval_stereo"
    for relative in ("__init__.py", "core/registry.py", "tasks/__init__.py", "tasks/toy/__init__.py",
                     "tasks/toy/metrics.py", "tasks/toy/_generate_configs.py"):  # fmt: skip
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        (package / relative).write_text("", encoding="utf-8")
    page = "\n".join([
        "# Architecture", "", "## Every module", "", "| module | its job |", "|---|---|",
        "| `__init__.py` | the package |", "| `core/registry.py` | the registry of benchmarks |",
        "| `tasks/__init__.py` | the one list |", f"| `{GENERATOR}` | writes the YAMLs |",
        "| `tasks/toy/old_name.py` | a module since renamed |", "", "## After", "| `report/x.py` | not this section |",
    ])  # fmt: skip
    named = set(named_modules(page)) - {GENERATOR}
    modules = package_modules(package)
    assert modules - named == {"tasks/toy/metrics.py"}  # the benchmark's __init__.py and generator need no row
    assert named - modules == {"tasks/toy/old_name.py"}
