"""docs/ARCHITECTURE.md's "Every module" section is what ``scripts/architecture_modules.py`` generates from the modules'
own docstrings: a module added, moved or gone, or a first sentence changed, fails here until the section is written
again. No model, no lm_eval."""

from __future__ import annotations

import re
from pathlib import Path

import architecture_modules as generator
import pytest

#: a row of the generated table: `path` | its job |
ROW = re.compile(r"^\| `(?P<path>[^`]+\.py)` \| (?P<job>.*\S) \|$")


def rows(section: str) -> dict[str, str]:
    return {found["path"]: found["job"] for line in section.splitlines() if (found := ROW.match(line))}


def test_the_page_lists_every_module_with_its_docstring_s_first_sentence() -> None:
    page = generator.page_section(generator.PAGE.read_text(encoding="utf-8"))
    assert page == generator.section(), (
        "docs/ARCHITECTURE.md is stale: run python scripts/architecture_modules.py --write"
    )
    modules = {
        path.relative_to(generator.PACKAGE).as_posix()
        for path in generator.PACKAGE.rglob("*.py")
        if "__pycache__" not in path.parts
    }
    listed = rows(page)
    assert set(listed) == modules and len(modules) > 200
    assert all(len(job.split()) >= 3 for job in listed.values()), "every docstring's first sentence says a job"
    assert listed["core/window.py"].startswith("A backend's log-likelihood requests scored within the model's window")


def test_a_new_module_a_gone_one_and_a_first_sentence_are_read_from_the_package(tmp_path: Path) -> None:
    package = tmp_path / "lm_eval_stereo"
    modules = {
        "__init__.py": '"""The package (e.g. its version)."""',
        "core/registry.py": '"""The registry of benchmarks: each declared once (see ``Benchmark``). More text."""',
        "core/window.py": '"""Requests within the window (:mod:`lm_eval_stereo.core.truncation` counts them).\n\nMore."""',
        "tasks/toy/metrics.py": '"""Metrics of a toy | with a pipe."""',
    }
    for relative, text in modules.items():
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        (package / relative).write_text(text + "\n", encoding="utf-8")
    assert rows(generator.section(package)) == {
        "__init__.py": "The package (e.g. its version).",
        "core/registry.py": "The registry of benchmarks: each declared once (see `Benchmark`).",
        "core/window.py": "Requests within the window (`truncation` counts them).",
        "tasks/toy/metrics.py": "Metrics of a toy \\| with a pipe.",
    }
    (package / "core" / "new.py").write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="core/new.py: no module docstring"):
        generator.section(package)
