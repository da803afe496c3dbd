"""Every path of this repository that a page or a docstring names exists, and every test a page names in backticks
(a test function or a test file's module name) is one: a file moved or gone (a test file renamed into the layout, a
module folded into another) or a test renamed fails here until the sentence that names it follows. A path is one that
starts at the repository's root (``tests/...``, ``lm_eval_stereo/...``, ``docs/...``, ``bench/...``,
``scripts/...``) and ends in a file name; a pattern (``tasks/<name>/``, ``{a,b}``, ``*``) or another project's path
(``every-eval-ever/docs/...``) is no such path. The pages' links: ``test_markdown_links.py``."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest
from lm_eval_runner import REPO

#: a test named in a page's code: a test function, or a test file by its module name
TEST_NAME = re.compile(r"`(test_\w+)`")
#: a test function's definition
TEST_DEFINED = re.compile(r"^\s*(?:async\s+)?def (test_\w+)", re.MULTILINE)
#: a repository path: not inside another path or word, rooted at one of the repository's top folders, a file's name
NAMED = re.compile(
    r"(?<![\w/.-])((?:tests|scripts|bench|docs|lm_eval_stereo)/[\w./-]*\w\.(?:py|md|json|yaml|yml|html|txt|csv|toml))"
    r"(?![\w<{*])"
)


def tracked(*patterns: str) -> list[Path]:
    """The repository's files that match ``patterns`` (a file not yet added counts too)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", *patterns],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    return sorted(REPO / name for name in listed if (REPO / name).is_file())


def docstrings(source: str) -> list[tuple[int, str]]:
    """The module's, its classes' and its functions' docstrings, each with the line it starts on."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node, clean=False)
            if text is not None:
                found.append((node.body[0].lineno, text))
    return found


def ignored(path: str) -> bool:
    """Whether git ignores ``path`` (a run's output, such as ``bench/out/...``: no file of the repository)."""
    return subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO).returncode == 0


def missing_paths(texts: list[tuple[str, str]], root: Path) -> list[str]:
    """Each path ``texts`` (``where``, ``text``) name that is not below ``root`` and is no ignored output, as
    ``where: path``."""
    return [
        f"{where}: {path}"
        for where, text in texts
        for path in NAMED.findall(text)
        if not (root / path.rstrip(".")).exists() and not ignored(path.rstrip("."))
    ]


def test_every_path_a_page_or_a_docstring_names_exists() -> None:
    texts = [(str(page.relative_to(REPO)), page.read_text(encoding="utf-8")) for page in tracked("*.md")]
    for module in tracked("*.py"):
        for line, text in docstrings(module.read_text(encoding="utf-8")):
            texts.append((f"{module.relative_to(REPO)}:{line}", text))
    assert len(texts) > 1000
    assert missing_paths(texts, REPO) == []


def test_every_test_a_page_names_is_a_test_of_the_suite() -> None:
    suite = [path for path in tracked("tests/*.py") if "fixtures" not in path.parts]
    known = {name for path in suite for name in TEST_DEFINED.findall(path.read_text(encoding="utf-8"))}
    known |= {path.stem for path in suite}
    named = {
        f"{page.relative_to(REPO)}: {name}"
        for page in tracked("*.md")
        for name in TEST_NAME.findall(page.read_text(encoding="utf-8"))
    }
    assert len(named) > 100 and "test_every_path_a_page_or_a_docstring_names_exists" in known
    assert sorted(entry for entry in named if entry.split(": ")[1] not in known) == []


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("see `tests/test_trust.py` and tests/suite/test_named_paths.py.", ["page.md: tests/test_trust.py"]),
        (
            "the page docs/GONE.md, the module lm_eval_stereo/hooks/vllm.py",
            ["page.md: docs/GONE.md", "page.md: lm_eval_stereo/hooks/vllm.py"],
        ),
        ("`every-eval-ever/docs/fields.md`, tasks/<name>/README.md, tests/test_{a,b}.py, tests/*.py", []),
        ("lm_eval_stereo/tasks/<name>/task.py, https://example.org/docs/x.md, docs/RUNNING.md#set-up", []),
    ],
)
def test_a_path_that_is_not_there_is_named_and_patterns_are_no_paths(text: str, missing: list[str]) -> None:
    assert missing_paths([("page.md", text)], REPO) == missing


def test_docstrings_are_read_from_modules_classes_and_functions() -> None:
    source = '"""Module: docs/A.md."""\n\nclass C:\n    """Class."""\n\n    def f(self):\n        """Method."""\n'
    assert docstrings(source) == [(1, "Module: docs/A.md."), (4, "Class."), (7, "Method.")]
