"""The README's generated tables: the benchmarks and the citations, from the registry (each benchmark's declaration,
its task YAMLs, its pinned sources). ``python scripts/readme_tables.py`` rewrites them between their markers in
README.md; ``--check`` exits 1, naming the table, when one is stale (``tests/test_readme_tables.py``).

The protocol of a task is read from its YAML and class: ``generate_until`` is generation, a masked-LM task class
(:class:`~lm_eval_stereo.core.masked_requests.MaskedLMTask`) is masked-LM scoring, any other output type is
log-likelihood.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

import lm_eval_stereo.tasks  # noqa: F401  (registers the benchmarks)
from lm_eval_stereo import tasks_path
from lm_eval_stereo.core import registry
from lm_eval_stereo.core.masked_requests import MaskedLMTask
from lm_eval_stereo.core.upstream import Source

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
GENERATION, LOGLIKELIHOOD, MASKED = "generation", "log-likelihood", "masked LM (`hf-mlm`)"
#: most language codes written out in the table; a longer list is cut with its count
MAX_LANGUAGES = 10


class _Loader(yaml.SafeLoader):
    """Reads task YAMLs without resolving ``!function`` tags (kept as their dotted path)."""


_Loader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def _config(path: Path) -> dict[str, Any]:
    """A task YAML with the files it ``include`` s merged under it."""
    config = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader) or {}
    include = config.pop("include", None)
    return {**_config(path.parent / include), **config} if include else config


@dataclass
class Catalogue:
    """The tasks, groups and tags of one benchmark folder, as lm_eval reads its YAMLs."""

    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    groups: dict[str, list[str]] = field(default_factory=dict)
    tags: dict[str, list[str]] = field(default_factory=dict)

    def leaves(self, name: str) -> list[str]:
        """The tasks a task, group or tag name stands for."""
        if name in self.tasks:
            return [name]
        members = self.groups.get(name) or self.tags.get(name, [])
        return [leaf for member in members for leaf in self.leaves(member)]

    def top_level(self) -> list[str]:
        """The groups that no other group holds, then the tasks that no group holds, in name order."""
        held = {member for members in self.groups.values() for member in members}
        reached = {leaf for group in self.groups for leaf in self.leaves(group)}
        groups = sorted(group for group in self.groups if group not in held)
        return groups + sorted(task for task in self.tasks if task not in reached and task not in held)

    def protocol(self, task: str) -> str:
        """How ``task`` scores: generation, masked-LM scoring or log-likelihood."""
        config = self.tasks[task]
        if config.get("output_type") == "generate_until":
            return GENERATION
        module, _, name = str(config.get("class", "")).rpartition(".")
        cls = getattr(importlib.import_module(module), name) if module else None
        return MASKED if isinstance(cls, type) and issubclass(cls, MaskedLMTask) else LOGLIKELIHOOD

    def protocols(self, names: Iterable[str] | None = None) -> list[str]:
        """The protocols of the tasks ``names`` stand for (every task by default), in a fixed order."""
        leaves = {leaf for name in (self.tasks if names is None else names) for leaf in self.leaves(name)}
        found = {self.protocol(task) for task in leaves}
        return [protocol for protocol in (LOGLIKELIHOOD, MASKED, GENERATION) if protocol in found]


def catalogue(folder: Path) -> Catalogue:
    """The tasks, groups and tags of the task YAMLs below ``folder``."""
    found = Catalogue()
    for path in sorted(folder.rglob("*.yaml")):
        config = _config(path)
        if "group" in config:
            found.groups[str(config["group"])] = [str(member) for member in config.get("task") or []]
        elif isinstance(config.get("task"), str):
            found.tasks[config["task"]] = config
            tags = config.get("tag") or []
            for tag in [tags] if isinstance(tags, str) else tags:
                found.tags.setdefault(str(tag), []).append(config["task"])
    return found


def short_reference(citation: str) -> str:
    """``Öztürk et al. 2023`` from ``Öztürk, Nedelchev, ... (2023). Title. Venue.``"""
    authors, _, rest = citation.partition(" (")
    year = rest.partition(")")[0]
    names = [name.strip() for name in authors.split(",")]
    first = names[0] + (" et al." if len(names) > 2 else f" and {names[1]}" if len(names) == 2 else "")
    return f"{first} {year}"


def _repository(source: Source) -> str:
    return f"[{source.repo}](https://github.com/{source.repo}/tree/{source.commit}) @ {source.commit[:7]}"


def _languages(codes: tuple[str, ...]) -> str:
    shown = ", ".join(codes[:MAX_LANGUAGES]) + (", …" if len(codes) > MAX_LANGUAGES else "")
    return f"{len(codes)}: {shown}" if len(codes) > 1 else shown


def benchmark_table() -> str:
    """One row per registered benchmark: its paper, languages, tasks, protocols, licences and pinned data."""
    rows = [
        "| benchmark | paper | languages | tasks and groups | protocol | licence | data (pinned) |",
        "|---|---|---|---|---|---|---|",
    ]
    for bench in registry.benchmarks():
        folder = tasks_path() / bench.name
        tasks = catalogue(folder)
        readme = folder / "README.md"
        title = f"[{bench.title}]({readme.relative_to(REPO).as_posix()})" if readme.is_file() else bench.title
        sources = bench.sources
        papers = "; ".join(dict.fromkeys(short_reference(source.citation) for source in sources)) or "—"
        licences = "; ".join(dict.fromkeys(source.licence for source in sources)) or "—"
        data = "; ".join(_repository(source) for source in sources) or "—"
        if bench.lm_eval_tasks is not None:  # lm_eval's own tasks, declared but run as lm_eval defines them
            names = dict.fromkeys(pattern.rstrip("_*") for pattern in bench.lm_eval_tasks.metric_sets)
            listed, count = ", ".join(f"`{name}`" for name in names), ""
            protocols = "lm_eval's own (its YAMLs); `--log_samples` for the intervals"
        else:
            listed = ", ".join(f"`{name}`" for name in tasks.top_level())
            count = f" ({len(tasks.tasks)} tasks)" if len(tasks.tasks) > 1 else ""
            protocols = ", ".join(tasks.protocols())
        rows.append(
            f"| {title} | {papers} | {_languages(bench.languages)} | {listed}{count} | {protocols} | {licences} | "
            f"{data} |"
        )
    return "\n".join(rows)


def citations() -> str:
    """Every declared source's paper, once each, in registration order."""
    papers = dict.fromkeys(source.citation for source in registry.SOURCES.values())
    return "\n".join(f"- {paper}" for paper in papers)


#: the generated tables by marker name
TABLES = {"benchmarks": benchmark_table, "citations": citations}


def _marked(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"(<!-- {name}: generated by scripts/readme_tables.py, do not edit -->\n)(.*?)(<!-- /{name} -->)", re.S
    )


def render(text: str) -> str:
    """``text`` (the README) with every generated table rewritten between its markers."""
    registry.benchmarks()  # the entry points first
    for name, make in TABLES.items():
        pattern = _marked(name)
        if not pattern.search(text):
            raise SystemExit(f"README.md has no <!-- {name}: ... --> markers")
        table = make()
        text = pattern.sub(lambda match, table=table: match.group(1) + table + "\n" + match.group(3), text)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a generated table is stale")
    args = parser.parse_args(argv)
    text = README.read_text(encoding="utf-8")
    rendered = render(text)
    if args.check:
        stale = [
            name for name in TABLES if _marked(name).search(text).group(2) != _marked(name).search(rendered).group(2)
        ]
        if stale:
            print(f"README.md: stale generated table(s): {', '.join(stale)}; run python scripts/readme_tables.py")
            return 1
        return 0
    README.write_text(rendered, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
