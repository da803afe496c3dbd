"""Reading lm_eval results files: ``<output_path>/<model_name_sanitized>/results_<timestamp>.json``, or
``<folder>/<name>_<timestamp>.json`` of the file form of ``--output_path`` (:mod:`lm_eval_stereo.results.files`,
which also guards every file before it is parsed: too large, nested too deep).

A :class:`Run` is one file; it knows the evaluated model (``config.model`` and ``config.model_args``), when it ran,
and per task its metrics, stderrs, group members, documents scored (``n-samples``), version and options. It is the
one reader of its run: per task it resolves the declaration once (:meth:`Run.declaration`, groups included) and
reads the logged items and documents once (:meth:`Run.logged`). An unreadable file is an error that names it; next to
readable files it is skipped with a warning. Every value, interval, count and recorded fact is type- and range-checked
where it is read (:mod:`lm_eval_stereo.results.fields`): what cannot be used is :class:`~.fields.Unusable` and a
:class:`~.fields.Problem` of :meth:`Run.problems`. Which run a task of a model comes from is
:mod:`lm_eval_stereo.results.selection`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lm_eval_stereo.core import registry
from lm_eval_stereo.core.registry import RECORDED
from lm_eval_stereo.core.values import parse_model_args
from lm_eval_stereo.results.declarations import resolve
from lm_eval_stereo.results.errors import ReportError
from lm_eval_stereo.results.fields import Problem, Unusable, check_metrics, count, is_number
from lm_eval_stereo.results.files import RefusedJson, UnreadableJson, parse, read_results_text, results_files_below

if TYPE_CHECKING:
    from lm_eval_stereo.core.registry import LmEvalTasks
    from lm_eval_stereo.results.declarations import Declaration
    from lm_eval_stereo.results.samples import Logged, Recomputed

#: ``model_args`` keys that are not part of a task's options when lm_eval copies them into the task metadata
_METADATA_NOISE = ("version", "config_source")

#: what a plugin task records of its declaration in its config metadata, and the kind each must be
RECORDED_KINDS: dict[str, tuple[tuple[type, ...], str]] = {
    "benchmark": ((str,), "text"),
    "metric_set": ((str,), "text"),
    "facts": ((dict,), "an object"),
    "key_field": ((str,), "text"),
    "language": ((str,), "text"),
    "scoring": ((str,), "text"),
}


#: what lm_eval records beside the model arguments that changes the numbers, and the kind each must be: the backend
#: (``hf-prefix`` shares ``hf``'s identity, :data:`SAME_NUMBERS`), the dtype the weights were loaded in, their revision
#: and hash, the chat template and system instruction (their hashes) and multi-turn few-shot
NUMBER_FACTS: tuple[tuple[tuple[str, ...], type], ...] = (
    (("config", "model"), str),
    (("config", "model_dtype"), str),
    (("config", "model_revision"), str),
    (("config", "model_sha"), str),
    (("chat_template_sha",), str),
    (("system_instruction_sha",), str),
    (("fewshot_as_multiturn",), bool),
)

#: backends that compute another backend's numbers: ``hf-prefix`` gives ``hf``'s log-likelihoods (tested within 1e-4),
#: so its scoring runs and ``hf``'s generative runs of the same model are one row of the report
SAME_NUMBERS = {"hf-prefix": "hf"}


@dataclass(frozen=True)
class Finding:
    """A warning: ``model`` and ``task`` it concerns (empty for file-level ones), its ``kind`` and message; ``caveat``
    says it in a few words next to the headlines it qualifies (``metrics``; empty: every headline of the task)."""

    model: str
    task: str
    kind: str
    message: str
    caveat: str = ""
    metrics: tuple[str, ...] = ()

    def qualifies(self, task: str, model: str, metric: str) -> bool:
        """Whether this warning qualifies ``metric`` of ``task`` for the model labelled ``model``."""
        return bool(self.caveat) and (self.task, self.model) == (task, model) and metric in (self.metrics or (metric,))


def is_nan(value: Any) -> bool:
    """Whether ``value`` is a float NaN."""
    return isinstance(value, float) and math.isnan(value)


@dataclass(frozen=True)
class Run:
    """One lm_eval results file, and what was read from it (each fact once, see the module docstring)."""

    path: Path
    data: dict[str, Any]
    _cache: dict[tuple[str, str], Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    _problems: list[Problem] = field(default_factory=list, init=False, repr=False, compare=False)

    def _once(self, what: str, task: str, read: Callable[[], Any]) -> Any:
        key = (what, task)
        if key not in self._cache:
            self._cache[key] = read()
        return self._cache[key]

    def note(self, problem: Problem) -> None:
        """Record a field the reader could not use (read once, so noted once)."""
        self._problems.append(problem)

    def problems(self, task: str) -> list[Problem]:
        """The fields of ``task`` (and of the file) the reader could not use, each read once
        (:mod:`lm_eval_stereo.results.fields`)."""
        self.metadata(task)
        self.metrics(task)
        self.document_counts(task)
        self.version(task), self.n_shot(task), self.higher_is_better(task)
        _ = self.date, self.model, self.model_args, self.limit, self.lm_eval_version, self.number_facts
        self._once("configs", "", self._configs)
        return [problem for problem in self._problems if problem.task in (task, "")]

    def _configs(self) -> dict[str, Any]:
        configs = self.data.get("configs")
        if configs is None or isinstance(configs, dict):
            return configs or {}
        self.note(Problem("", "configs", configs, "not an object: what the tasks recorded is unknown"))
        return {}

    def task_config(self, task: str) -> dict[str, Any]:
        """The config lm_eval kept of ``task`` (``configs.<task>``), empty when there is none or it is no object (a
        :class:`Problem`)."""

        def read() -> dict[str, Any]:
            config = self._once("configs", "", self._configs).get(task)
            if config is not None and not isinstance(config, dict):
                self.note(Problem(task, f"configs.{task}", config, "not an object: what lm_eval kept of the task"))
            return config if isinstance(config, dict) else {}

        return self._once("config", task, read)

    def metadata(self, task: str) -> dict[str, Any]:
        """The config metadata of ``task`` as lm_eval kept it (what the task recorded; empty for a group, and for
        metadata that is no object: a :class:`Problem`). A recorded field of the wrong kind (``facts`` no object,
        ``metric_set`` no text, :data:`RECORDED_KINDS`) is a :class:`Problem` and :class:`Unusable`, and the task
        then has no declaration (:func:`lm_eval_stereo.results.declarations.resolve`)."""

        def read() -> dict[str, Any]:
            metadata = self.task_config(task).get("metadata")
            if metadata is not None and not isinstance(metadata, dict):
                self.note(Problem(task, f"configs.{task}.metadata", metadata, "not an object: what the task recorded"))
                return {}
            checked = dict(metadata or {})
            for key, (kinds, what) in RECORDED_KINDS.items():
                if key in checked and not isinstance(checked[key], kinds):
                    why = f"not {what}: the task's metric set cannot be built; read as a task no benchmark declares"
                    self.note(Problem(task, f"configs.{task}.metadata.{key}", checked[key], why))
                    checked[key] = Unusable(checked[key])
            return checked

        return dict(self._once("metadata", task, read))

    def malformed_record(self, task: str) -> bool:
        """Whether a field ``task`` recorded of its declaration is of the wrong kind (:meth:`metadata`)."""
        return any(isinstance(value, Unusable) for value in self.metadata(task).values())

    def declaration(self, task: str) -> Declaration | None:
        """The declaration of ``task`` (a task or group), resolved once (:func:`lm_eval_stereo.results.declarations.
        resolve`); None for lm_eval's own tasks and groups."""
        return self._once("declaration", task, lambda: resolve(self, task))

    def language(self, task: str) -> tuple[str, str] | None:
        """The language of plugin task ``task`` and the family of its translations: tasks of one family in different
        languages score the same items (parallel ids), so the report compares them. The family is the task's metric
        set and scoring (:data:`~lm_eval_stereo.core.registry.RECORDED`), whatever the tasks are called. None for a
        task that records no single language, a group and lm_eval's own tasks; a task written before tasks recorded
        this goes through :func:`lm_eval_stereo.results.legacy.language`."""
        from lm_eval_stereo.results import legacy

        declaration = self.declaration(task)
        if declaration is None or declaration.metric_set is None or self.members(task):
            return None
        native = self.lm_eval_declared(task)
        if native is not None:
            return native.language(task)
        metadata = self.metadata(task)
        if legacy.written_before(metadata):
            found = legacy.language(task)
            return (found[0], f"{declaration.metric_set.id}/{found[1]}") if found else None
        language = metadata.get("language")
        return (str(language), f"{declaration.metric_set.id}/{metadata.get('scoring', '')}") if language else None

    def logged(self, task: str) -> Logged:
        """The logged items and documents of ``task`` (``--log_samples``), read once, keyed by the field the task
        recorded (:mod:`lm_eval_stereo.results.samples`)."""
        from lm_eval_stereo.results import legacy
        from lm_eval_stereo.results.samples import read_lm_eval_logged, read_logged, samples_path

        def read() -> Logged:
            key_field = self.metadata(task).get("key_field")
            path = samples_path(self.path, task)
            if isinstance(key_field, str):
                return read_logged(path, lambda item: item.get(key_field), repr(key_field), expected=True)
            native = self.lm_eval_declared(task)
            if native is not None:
                return read_lm_eval_logged(path, lambda samples: native.items(task, samples))
            # a plugin benchmark's task written before tasks recorded their key: its lines must carry items too, so
            # that a file whose every item is malformed (a number) is named, not read as lm_eval's own task's
            expected = self.declaration(task) is not None
            return read_logged(path, legacy.item_key, legacy.ITEM_KEY_NAME, expected=expected)

        return self._once("logged", task, read)

    def lm_eval_declared(self, task: str) -> LmEvalTasks | None:
        """Where ``task`` is one of lm_eval's own tasks or groups that a benchmark declares
        (:class:`~lm_eval_stereo.core.registry.LmEvalTasks`, found by its lm_eval name), that declaration; else None."""
        if "metric_set" in self.metadata(task):
            return None
        found = registry.lm_eval_task(task)
        return found[0].lm_eval_tasks if found is not None else None

    def recomputed(self, task: str) -> Recomputed | None:
        """For one of lm_eval's own tasks that a benchmark declares: what the logged samples add to lm_eval's numbers
        (intervals, the declared figures lm_eval does not report) or why they add nothing, computed once
        (:mod:`lm_eval_stereo.results.recomputed`); None for every other task."""
        from lm_eval_stereo.results.recomputed import recompute

        if self.lm_eval_declared(task) is None:
            return None
        return self._once("recomputed", task, lambda: recompute(self, task))

    @property
    def config(self) -> dict[str, Any]:
        return self.data.get("config") or {}

    def _field(self, where: tuple[str, ...], kinds: tuple[type, ...], what: str, instead: str) -> Any:
        """The value at ``where`` (``("config", "model")``), checked once: None when absent or null; of another kind
        than ``kinds``, a :class:`Problem` naming the field (``what`` it must be, what is read ``instead``) and
        None."""

        def read() -> Any:
            value: Any = self.data
            for key in where:
                value = value.get(key) if isinstance(value, dict) else None
            if value is None or (isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool))):
                return value
            self.note(Problem("", ".".join(where), value, f"not {what}: {instead}"))
            return None

        return self._once("field", ".".join(where), read)

    def task_table(self, name: str, task: str) -> Any:
        """``<name>.<task>`` of a top-level object of the file keyed by task (``n-shot``, ``versions``,
        ``higher_is_better``), None where it is absent; a table that is no object is a :class:`Problem` of the
        file."""
        table = self._field((name,), (dict,), "an object", "its entries are not read (shown as unknown)")
        return table.get(task) if table is not None else None

    @property
    def limit(self) -> str | None:
        """The run's ``--limit`` as given (lm_eval stores ``6`` as ``6.0``), None when the run had none."""
        limit = self._field(("config", "limit"), (int, float), "a number", "the run is read as having no --limit")
        if limit is None:
            return None
        return str(int(limit)) if float(limit).is_integer() else str(limit)

    @property
    def model(self) -> str:
        """The backend (``config.model``), ``?`` where the file records none (or no text: a :class:`Problem`)."""
        return self._field(("config", "model"), (str,), "text", "the backend is unknown (?)") or "?"

    @property
    def model_args(self) -> dict[str, str]:
        """``config.model_args``; a served model's ``model=`` (lm_eval's API backends: the id the server knows the
        weights by, their alias of ``pretrained=``) also as ``pretrained``, so that it names the model everywhere."""
        why = "the model's arguments are unknown (none are read)"
        args = parse_model_args(self._field(("config", "model_args"), (str, dict), "text or an object", why))
        if "model" in args and "pretrained" not in args:
            args["pretrained"] = args["model"]
        return args

    @property
    def number_facts(self) -> dict[str, str]:
        """The recorded facts of :data:`NUMBER_FACTS` the file holds (by lm_eval's key: ``model_dtype``, ...), as text;
        one of another kind is a :class:`Problem` and left out."""
        found = {}
        for where, kind in NUMBER_FACTS:
            value = self._field(where, (kind,), kind.__name__, "runs of the model are not told apart by it")
            if value not in (None, "", False):
                found[where[-1]] = str(value)
        return found

    @property
    def identity(self) -> str:
        """The model that was evaluated: ``config.model`` (a backend that computes another's numbers, see
        :data:`SAME_NUMBERS`, under that one's name) and every ``config.model_args`` entry, sorted. It puts runs on
        one row; :attr:`scored_by` names the backend that computed each run's numbers."""
        return f"{SAME_NUMBERS.get(self.model, self.model)} {self._arguments_text()}".strip()

    @property
    def scored_by(self) -> str:
        """The backend that computed the run's numbers, as the run recorded it (``hf-prefix``, ``vllm-prefix``,
        ``local-completions``), and every ``config.model_args`` entry, sorted (a served model's endpoint among them,
        ``base_url``): what the provenance names, where :attr:`identity` may name another backend that gives the same
        numbers."""
        return f"{self.model} {self._arguments_text()}".strip()

    @property
    def backend(self) -> str:
        """The backend that computed the run's numbers (``config.model``), with the endpoint a served model answered
        from (``base_url``): ``local-completions at http://127.0.0.1:8000/v1/completions``."""
        endpoint = self.model_args.get("base_url")
        return f"{self.model} at {endpoint}" if endpoint else self.model

    def _arguments_text(self) -> str:
        return ",".join(f"{key}={value}" for key, value in sorted(self.model_args.items()))

    @property
    def date(self) -> float:
        """When the run started (lm_eval's ``date``), else the file's modification time."""

        def read() -> float:
            date = self.data.get("date")
            if is_number(date):
                return float(date)
            if date is not None:
                self.note(Problem("", "date", date, "not a number: the file's modification time is taken instead"))
            return self.path.stat().st_mtime

        return self._once("date", "", read)

    @property
    def lm_eval_version(self) -> str | None:
        """The lm_eval version that wrote the file (``lm_eval_version``), None where it records none."""
        return self._field(("lm_eval_version",), (str,), "text", "the lm_eval version is unknown")

    def higher_is_better(self, task: str) -> dict[str, Any]:
        """lm_eval's ``higher_is_better.<task>`` (metric: flag), empty where absent or no object (a :class:`Problem`)."""

        def read() -> dict[str, Any]:
            flags = self.task_table("higher_is_better", task)
            if flags is not None and not isinstance(flags, dict):
                why = "not an object: its metrics are shown without a direction"
                self.note(Problem(task, f"higher_is_better.{task}", flags, why))
            return flags if isinstance(flags, dict) else {}

        return self._once("higher_is_better", task, read)

    def n_shot(self, task: str) -> str:
        """The few-shot examples of ``task`` as lm_eval recorded them (``n-shot``), empty where it did not."""

        def read() -> str:
            shots = self.task_table("n-shot", task)
            if shots is None or is_number(shots):
                return "" if shots is None else str(shots)
            self.note(Problem(task, f"n-shot.{task}", shots, "not a number: shown as unknown"))
            return ""

        return self._once("n-shot", task, read)

    @property
    def tasks(self) -> list[str]:
        return list(self.data["results"])

    def metrics(self, task: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """``({metric: value}, {metric: stderr})`` of a task, checked once (:func:`lm_eval_stereo.results.fields.
        check_metrics`: what cannot be used is ``Unusable``); a metric of a second filter is named ``name[filter]``.
        One of lm_eval's own tasks that a benchmark declares gains what its logged samples add (:meth:`recomputed`:
        interval bounds, counts of undefined resamples, declared figures lm_eval does not report); lm_eval's own
        numbers stay as they are, and :func:`lm_eval_stereo.results.provenance.provenance` says which is which."""

        def read() -> tuple[dict[str, Any], dict[str, Any]]:
            values, stderrs, problems = check_metrics(task, *self.raw_metrics(task), self.declaration(task))
            self._problems.extend(problems)
            return values, stderrs

        values, stderrs = self._once("metrics", task, read)
        values, stderrs = dict(values), dict(stderrs)
        added = self.recomputed(task)
        if added is not None:
            values.update((name, value) for name, value in added.values.items() if name not in values)
        return values, stderrs

    def raw_metrics(self, task: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """``({metric: value}, {metric: stderr})`` of a task as lm_eval wrote them in the results file, unchecked:
        for finding the declaration that checks them and for recomputing lm_eval's own figures."""
        filters: list[str] = []
        values: dict[str, Any] = {}
        stderrs: dict[str, Any] = {}
        for key, value in self.data["results"].get(task, {}).items():
            name, comma, filter_key = key.partition(",")
            if not comma:
                continue  # alias, name, sample_len
            if filter_key not in filters:
                filters.append(filter_key)
            suffix = "" if filter_key == filters[0] else f"[{filter_key}]"
            if name.endswith("_stderr"):
                stderrs[name.removesuffix("_stderr") + suffix] = value
            else:
                values[name + suffix] = value
        return values, stderrs

    def values(self, task: str) -> dict[str, Any]:
        """``{metric: value}`` of a task (see :meth:`metrics`)."""
        return self.metrics(task)[0]

    def stderr(self, task: str, name: str) -> float | None:
        """lm_eval's ``<name>_stderr`` of a task when it is a number (lm_eval writes ``"N/A"`` when it has none)."""
        value = self.metrics(task)[1].get(name)
        return float(value) if is_number(value) else None

    def members(self, task: str) -> tuple[str, ...]:
        """The leaf tasks of a group (nested groups expanded), () for a task."""

        def read() -> tuple[str, ...]:
            groups = self.data.get("group_subtasks") or {}
            listed = groups.get(task)
            if listed is None:
                return ()
            leaves = self._leaves(groups, task, ())
            if leaves is None:
                why = "not a list of task names, or a group that holds itself"
                self.note(Problem(task, f"group_subtasks.{task}", listed, f"{why}: read as a task without members"))
                return ()
            return leaves

        return self._once("members", task, read)

    def direct_members(self, task: str) -> tuple[str, ...]:
        """The tasks and groups ``group_subtasks`` lists under group ``task`` (one level), () for a task and for a
        malformed entry (a :class:`Problem`, :meth:`members`)."""
        return tuple(self.data["group_subtasks"][task]) if self.members(task) else ()

    def _leaves(self, groups: dict[str, Any], task: str, within: tuple[str, ...]) -> tuple[str, ...] | None:
        """The leaf tasks below group ``task``, None when a group below is no list of names or holds itself."""
        listed = groups[task]
        if task in within or not isinstance(listed, list) or not all(isinstance(name, str) for name in listed):
            return None
        leaves: list[str] = []
        for member in listed:
            below = self._leaves(groups, member, (*within, task)) if member in groups else (member,)
            if below is None:
                return None
            leaves += below
        return tuple(dict.fromkeys(leaves))

    def document_counts(self, task: str) -> tuple[int, int] | None:
        """(effective, original) documents of a task from lm_eval's ``n-samples``, totals for a group."""

        def read() -> tuple[int, int] | None:
            n_samples = self.data.get("n-samples") or {}
            counts = []
            for name in self.members(task) or (task,):
                if name not in n_samples:
                    continue
                found = count(n_samples[name], "effective"), count(n_samples[name], "original")
                if None in found:
                    why = "not an object of non-negative integer counts effective and original"
                    self.note(Problem(name, f"n-samples.{name}", n_samples[name], why))
                    continue
                counts.append(found)
            return (sum(c[0] for c in counts), sum(c[1] for c in counts)) if counts else None

        return self._once("document_counts", task, read)

    def version(self, task: str) -> str:
        """The task's version: lm_eval's ``versions`` entry, else the task config's ``metadata.version``."""
        version = self.task_table("versions", task)
        if version is None:
            version = self.metadata(task).get("version")
        return "?" if version is None else str(version)

    def options(self, task: str) -> dict[str, Any]:
        """Task settings from ``--metadata`` (e.g. ``gest_version``): the config metadata minus the model args."""
        metadata = self.metadata(task)
        noise = set(self.model_args) | set(_METADATA_NOISE) | set(RECORDED)
        return {key: value for key, value in metadata.items() if key not in noise}


def load_run(path: Path) -> Run:
    """The results file at ``path``; :class:`ReportError` naming the file when it is not lm_eval results JSON, or one
    the guards of :mod:`lm_eval_stereo.results.files` refuse (too large, nested too deep)."""
    try:
        data = parse(read_results_text(path))
    except OSError as exc:
        raise ReportError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except RefusedJson as exc:
        raise ReportError(f"{path}: not read: {exc}") from None
    except UnreadableJson as exc:
        raise ReportError(f"{path}: not a readable lm_eval results file (corrupt or truncated?): {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise ReportError(f"{path}: not an lm_eval results file (no 'results' object)")
    malformed = [task for task, metrics in data["results"].items() if not isinstance(metrics, dict)]
    malformed += [key for key in ("config", "n-samples", "group_subtasks") if not isinstance(data.get(key, {}), dict)]
    if malformed:
        raise ReportError(f"{path}: not an lm_eval results file (malformed {', '.join(malformed)})")
    return Run(path, data)


def results_files(paths: list[str | Path]) -> list[Path]:
    """Every results file below the given folders (``results_*.json``, and ``NAME_<date>.json`` of the file form of
    ``--output_path``: :func:`lm_eval_stereo.results.files.results_files_below`; a file is taken as it is), in path
    order."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found += results_files_below(path)
        else:
            raise ReportError(f"{path}: no such file or folder")
    if not found:
        where = ", ".join(map(str, paths))
        raise ReportError(f"no results_*.json below {where} (nor a NAME_<date>.json of --output_path NAME.json)")
    return list(dict.fromkeys(found))


def load_runs(paths: list[str | Path]) -> tuple[list[Run], list[Finding]]:
    """The readable runs below ``paths`` and a warning for each unreadable file skipped.

    An unreadable file is an error when no readable one is left, so a report never silently drops all input.
    """
    runs: list[Run] = []
    errors: list[ReportError] = []
    for path in results_files(paths):
        try:
            runs.append(load_run(path))
        except ReportError as exc:
            errors.append(exc)
    if not runs:
        raise ReportError("; ".join(map(str, errors)))
    return runs, [Finding("", "", "skipped file", f"{error} (skipped)") for error in errors]
