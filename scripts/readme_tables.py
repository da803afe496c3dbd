"""The docs' generated tables: the README's benchmarks and citations, docs/REPORT.md's benchmarks and their headline
metrics and the order of the report's sections (``lm_eval_stereo/report/sections.py``), from the registry (each benchmark's declaration, its metric sets, its task YAMLs, its pinned sources).
``python scripts/readme_tables.py`` rewrites them between their markers; ``--check`` exits 1, naming the page and the
table, when one is stale (``tests/suite/test_readme_tables.py``).

The protocol of a task is read from its YAML and class: ``generate_until`` is generation, a masked-LM task class
(:class:`~lm_eval_stereo.core.masked_requests.MaskedLMTask`) is masked-LM scoring, any other output type is
log-likelihood.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

import lm_eval_stereo.tasks  # noqa: F401  (registers the benchmarks)
from lm_eval_stereo import tasks_path
from lm_eval_stereo.core import registry
from lm_eval_stereo.core.masked_requests import MaskedLMTask
from lm_eval_stereo.core.metrics import Metric
from lm_eval_stereo.core.upstream import Source
from lm_eval_stereo.report.sections import in_order

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
REPORT = REPO / "docs" / "REPORT.md"
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

    def task_class(self, task: str) -> type | None:
        """The class ``task``'s YAML names (None: lm_eval's own ``ConfigurableTask``)."""
        module, _, name = str(self.tasks[task].get("class", "")).rpartition(".")
        cls = getattr(importlib.import_module(module), name) if module else None
        return cls if isinstance(cls, type) else None

    def protocol(self, task: str) -> str:
        """How ``task`` scores: generation, masked-LM scoring or log-likelihood."""
        if self.tasks[task].get("output_type") == "generate_until":
            return GENERATION
        cls = self.task_class(task)
        return MASKED if cls is not None and issubclass(cls, MaskedLMTask) else LOGLIKELIHOOD

    def causal_loglikelihood(self) -> list[str]:
        """The tasks a causal LM scores by log-likelihood (not masked-LM, generative or seq2seq ones), in file order."""
        return [
            task
            for task in self.tasks
            if self.protocol(task) == LOGLIKELIHOOD and not getattr(self.task_class(task), "SEQ2SEQ", False)
        ]

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
        readme = tasks_path() / bench.name / "README.md"
        title = f"[{bench.title}]({readme.relative_to(REPO).as_posix()})" if readme.is_file() else bench.title
        sources = bench.sources
        papers = "; ".join(dict.fromkeys(short_reference(source.citation) for source in sources)) or "—"
        licences = "; ".join(dict.fromkeys(source.licence for source in sources)) or "—"
        data = "; ".join(_repository(source) for source in sources) or "—"
        listed, protocols = _tasks_and_protocols(bench)
        rows.append(
            f"| {title} | {papers} | {_languages(bench.languages)} | {listed} | {protocols} | {licences} | {data} |"
        )
    return "\n".join(rows)


def _tasks_and_protocols(bench: registry.Benchmark) -> tuple[str, str]:
    """A benchmark's tasks and groups (its top-level names and the number of tasks) and protocols, as the tables
    write them."""
    if bench.lm_eval_tasks is not None:  # lm_eval's own tasks, declared but run as lm_eval defines them
        names = dict.fromkeys(pattern.rstrip("_*") for pattern in bench.lm_eval_tasks.metric_sets)
        return ", ".join(f"`{name}`" for name in names), "lm_eval's own (its YAMLs); `--log_samples` for the intervals"
    tasks = catalogue(tasks_path() / bench.name)
    count = f" ({len(tasks.tasks)} tasks)" if len(tasks.tasks) > 1 else ""
    return ", ".join(f"`{name}`" for name in tasks.top_level()) + count, ", ".join(tasks.protocols())


def _headline(metric: Metric, primary: str) -> str:
    """A headline as the report reads it: its ideal in the middle of its range, else its direction."""
    name = f"**`{metric.name}`**" if metric.name == primary else f"`{metric.name}`"
    if metric.ideal is not None:
        return f"{name} ({metric.ideal:g})"
    arrow = {True: " ↑", False: " ↓"}.get(metric.higher_is_better, "")
    return name + arrow


def metric_set_headlines(bench: registry.Benchmark) -> list[str]:
    """Per metric set of ``bench``, its id and headlines (views left out; without an interval, its directed metrics;
    the primary one in bold); a metric set built from what its tasks record (GEST's prompt templates) is named as
    such."""
    said = []
    for id_, factory in bench.metric_sets.items():
        try:
            metric_set = factory(bench.name, {})
        except ValueError:  # its metrics follow the facts its tasks record
            said.append(f"`{id_}`: from what its tasks record")
            continue
        views = [metric for metric in metric_set.metrics if not metric.detail]
        shown = [metric for metric in views if metric.headline] or [  # without an interval: the directed ones
            metric for metric in views if metric.direction in ("higher", "lower", "ideal")
        ]
        said.append(f"`{id_}`: {', '.join(_headline(metric, metric_set.primary_headline) for metric in shown)}")
    return said


def report_benchmark_table() -> str:
    """docs/REPORT.md's table: per registered benchmark its tasks and groups, protocols and, per metric set, the
    headlines the report reads with their ideals or directions."""
    rows = ["| benchmark | tasks and groups | protocol | headline metrics (ideal; ↑/↓ a direction; the primary bold) |",
            "|---|---|---|---|"]  # fmt: skip
    for bench in registry.benchmarks():
        listed, protocols = _tasks_and_protocols(bench)
        papers = "; ".join(dict.fromkeys(short_reference(source.citation) for source in bench.sources))
        readme = tasks_path() / bench.name / "README.md"
        title = f"[{bench.title}](../{readme.relative_to(REPO).as_posix()})" if readme.is_file() else bench.title
        paper = f" ({papers})" if papers else ""
        rows.append(f"| {title}{paper} | {listed} | {protocols} | {'; '.join(metric_set_headlines(bench))} |")
    return "\n".join(rows)


def citations() -> str:
    """Every declared source's paper, once each, in registration order."""
    papers = dict.fromkeys(source.citation for source in registry.SOURCES.values())
    return "\n".join(f"- {paper}" for paper in papers)


#: the README's generated tables by marker name
TABLES = {"benchmarks": benchmark_table, "citations": citations}
#: docs/REPORT.md's generated tables by marker name
REPORT_TABLES = {"sections": in_order, "benchmarks": report_benchmark_table}
#: every page with generated tables, and its tables
PAGES = {README: TABLES, REPORT: REPORT_TABLES}


def _marked(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"(<!-- {name}: generated by scripts/readme_tables.py, do not edit -->\n)(.*?)(<!-- /{name} -->)", re.S
    )


def render(text: str, tables: dict[str, Callable[[], str]] = TABLES, page: str = "README.md") -> str:
    """``text`` (the README, or the ``page`` of ``tables``) with every generated table rewritten between its
    markers."""
    registry.benchmarks()  # the entry points first
    for name, make in tables.items():
        pattern = _marked(name)
        if not pattern.search(text):
            raise SystemExit(f"{page} has no <!-- {name}: ... --> markers")
        table = make()
        text = pattern.sub(lambda match, table=table: match.group(1) + table + "\n" + match.group(3), text)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a generated table is stale")
    args = parser.parse_args(argv)
    status = 0
    for path, tables in PAGES.items():
        page = path.relative_to(REPO).as_posix()
        text = path.read_text(encoding="utf-8")
        rendered = render(text, tables, page)
        if not args.check:
            path.write_text(rendered, encoding="utf-8")
            continue
        stale = [name for name in tables if _marked(name).search(text)[2] != _marked(name).search(rendered)[2]]
        if stale:
            print(f"{page}: stale generated table(s): {', '.join(stale)}; run python scripts/readme_tables.py")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
