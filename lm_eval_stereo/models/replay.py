"""``--model replay``: answer generation requests with recorded outputs, to re-score generations without a model.

``--model_args outputs=PATH[,prompt_column=full_prompt][,output_column=output][,prefill=...]``

``PATH`` is a table of recorded generations, or a folder whose ``*.csv``/``*.jsonl`` files are all read:

- ``.jsonl``: one object per line with the prompt and output fields;
- ``.csv``: the delimiter (``;``, ``,`` or tab) is taken from the header line; UTF-8 with or without BOM. The
  upstream ``sample_output/<model>/*_output.csv`` files of Gnadt et al. (``full_prompt`` and ``output`` columns) are
  read as they are.

A request is matched on its prompt: the context itself, or the context without a trailing ``prefill`` (default
``"\\nAntwort:\\n"``, the assistant prefill of the German tasks). With ``--apply_chat_template`` the "template" is the
plain concatenation of the messages, so the same prompts match. A prompt recorded k times answers its first k
requests with its k outputs in file order (``repeats`` use them all); a request for an unknown prompt, or one more
than recorded, is an error. Log-likelihood requests are not supported.

Every recording is accounted for in the results (``config.replay``, :meth:`ReplayLM.get_model_info`) and in one
warning: how many were recorded and used, the recordings left unused (with ``--limit``, or a file with more outputs
than the run's prompts; the first few by file and row), the prompts recorded more than once, ``null`` outputs, and
the answers lm_eval's request cache served (``--use_cache``). A ``null`` output is a request the recorded model did
not answer: it is answered as an empty generation (which the tasks count as ``empty``) and counted per task as
``unanswered`` in the results, as a served model's failed requests are (:mod:`lm_eval_stereo.models.served_mixin`), so that
the report shows it in the task's table. A prompt or output that is neither text nor ``null``, or a line without the
output field, is an error naming the file, row and column.

With ``--use_cache`` the database records the recordings it was written from (their digest,
:meth:`ReplayLM.answers_depend_on`; another backend's or other recordings' database stops the run,
:mod:`lm_eval_stereo.hooks.answer_cache`), each answer carries the place of its recording (:class:`RecordedOutput`),
and an answer the cache serves is booked to that recording (:meth:`ReplayLM.served_from_cache`): used, not unused.
"""

from __future__ import annotations

import hashlib
import logging
from collections import defaultdict, deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lm_eval.api.model import LM

from lm_eval_stereo.core.errors import MalformedDataError
from lm_eval_stereo.core.readers import read_csv, read_jsonl
from lm_eval_stereo.core.unanswered import Unanswered, count_unanswered

logger = logging.getLogger(__name__)

DEFAULT_PREFILL = "\nAntwort:\n"
DELIMITERS = (";", ",", "\t")


def _csv_delimiter(path: Path) -> str:
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            header = handle.readline()
    except UnicodeDecodeError as exc:
        raise MalformedDataError(
            str(path), f"not valid utf-8 text ({exc.reason} at byte {exc.start}); save the recordings as UTF-8"
        ) from None
    counts = {delimiter: header.count(delimiter) for delimiter in DELIMITERS}
    best = max(counts, key=counts.get)
    if counts[best] == 0:
        raise MalformedDataError(str(path), f"header has none of the delimiters {DELIMITERS!r}", row=1)
    return best


@dataclass(frozen=True)
class Recording:
    """One recorded output (None: recorded as ``null``) and where it is: file and row (CSV: the header is row 1;
    JSON lines: line)."""

    prompt: str
    output: str | None
    file: Path
    row: int

    @property
    def place(self) -> str:
        return f"{self.file}:{self.row}"


#: how many recordings a warning names before it counts the rest
NAMED = 5


class RecordedOutput(str):
    """A recorded output: the text itself, with the place (file:row) of its recording, which lm_eval's request cache
    keeps with it, so that an answer the cache serves is traced to its recording (``""``: none, as when lm_eval builds
    one from other text, e.g. ``type(result)(gold)``)."""

    place: str

    def __new__(cls, text: str, place: str = "") -> RecordedOutput:
        output = super().__new__(cls, text)
        output.place = place
        return output

    def __reduce__(self) -> tuple[Any, ...]:
        return (RecordedOutput, (str(self), self.place))


def digest(files: list[Path]) -> str:
    """sha256 of the recordings' files (names and contents, in order): what a request cache of their answers holds."""
    hasher = hashlib.sha256()
    for file in files:
        hasher.update(file.name.encode() + b"\0" + file.read_bytes() + b"\0")
    return hasher.hexdigest()


def read_recordings(path: Path, prompt_column: str, output_column: str) -> list[Recording]:
    """The recordings of one recorded-output file, in file order."""
    required = [prompt_column, output_column]
    if path.suffix == ".jsonl":
        rows = read_jsonl(path, required=required)
    elif path.suffix == ".csv":
        rows = read_csv(path, required=required, delimiter=_csv_delimiter(path))
    else:
        raise MalformedDataError(str(path), "recorded outputs must be a .csv or .jsonl file")
    recordings = []
    for number, row in enumerate(rows, start=2 if path.suffix == ".csv" else 1):
        prompt, output = row[prompt_column], row[output_column]
        if not isinstance(prompt, str):
            raise MalformedDataError(
                str(path), f"the prompt must be text, got {_kind(prompt)}", row=number, field=prompt_column
            )
        if output is not None and not isinstance(output, str):
            raise MalformedDataError(
                str(path), f"the output must be text or null, got {_kind(output)}", row=number, field=output_column
            )
        recordings.append(Recording(prompt, output, path, number))
    return recordings


def _kind(value: Any) -> str:
    return "null" if value is None else f"{type(value).__name__} {value!r}"[:80]


def recording_files(path: Path) -> list[Path]:
    """``path`` itself, or the ``.csv``/``.jsonl`` files of a folder in name order."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in (".csv", ".jsonl"))
        if not files:
            raise MalformedDataError(str(path), "folder holds no .csv or .jsonl file of recorded outputs")
        return files
    if not path.is_file():
        raise FileNotFoundError(f"recorded outputs {path} not found (model argument outputs=...)")
    return [path]


class ReplayLM(LM):
    """A "model" that returns recorded outputs for known prompts (re-scoring, parity checks, offline demos)."""

    #: ``null`` recordings are counted per task as ``unanswered`` (:func:`lm_eval_stereo.core.unanswered.counting_model`)
    COUNTS_UNANSWERED = True

    def __init__(
        self,
        outputs: str,
        prompt_column: str = "full_prompt",
        output_column: str = "output",
        prefill: str = DEFAULT_PREFILL,
        **_: Any,
    ) -> None:
        super().__init__()
        self.source = Path(str(outputs)).expanduser()
        self.prefill = prefill
        self._queues: dict[str, deque[Recording]] = defaultdict(deque)
        self._places: dict[str, Recording] = {}
        files = recording_files(self.source)
        for file in files:
            for recording in read_recordings(file, prompt_column, output_column):
                self._queues[recording.prompt].append(recording)
                self._places[recording.place] = recording
        self._digest = digest(files)
        self._recorded = {prompt: len(queue) for prompt, queue in self._queues.items()}
        self._answered_null: list[Recording] = []
        #: recordings whose answers lm_eval's request cache served, and how often it served an answer again
        self._from_cache: list[Recording] = []
        self._from_cache_again = 0
        logger.info(
            "replay: %d recorded outputs for %d prompts from %s",
            sum(self._recorded.values()),
            len(self._recorded),
            self.source,
        )

    def accounting(self) -> dict[str, Any]:
        """Every recording accounted for: recorded, used (by this run, or earlier: served from the request cache),
        left unused (the first :data:`NAMED` by file and row), prompts recorded more than once, the ``null`` outputs
        answered as empty generations, and the cache's answers (and those it served again: repeated requests share one
        cache entry)."""
        unused = sorted((r for queue in self._queues.values() for r in queue), key=lambda r: (str(r.file), r.row))
        recorded = sum(self._recorded.values())
        return {
            "source": str(self.source),
            "recorded": recorded,
            "used": recorded - len(unused),
            "unused": len(unused),
            "unused_first": [r.place for r in unused[:NAMED]],
            "prompts_recorded_more_than_once": sum(1 for count in self._recorded.values() if count > 1),
            "null_outputs": len(self._answered_null),
            "null_outputs_first": [r.place for r in self._answered_null[:NAMED]],
            "served_from_cache": len(self._from_cache),
            "served_from_cache_again": self._from_cache_again,
        }

    def answers_depend_on(self) -> dict[str, str]:
        """What this run's answers depend on (:func:`lm_eval_stereo.hooks.answer_cache.answers_of`): the recordings'
        digest (not their path: the same files elsewhere give the same answers)."""
        return {"outputs_sha256": self._digest}

    def served_from_cache(self, answer: Any) -> None:
        """Book an answer lm_eval's request cache served (``--use_cache``) to its recording: used, not left unused."""
        recording = self._places.get(getattr(answer, "place", None))
        queue = self._queues[recording.prompt] if recording is not None else None
        if queue is None or recording not in queue:
            self._from_cache_again += 1
            return
        queue.remove(recording)
        self._from_cache.append(recording)

    def get_model_info(self) -> dict[str, Any]:
        """What lm_eval adds to the results' ``config`` after the run: the :meth:`accounting` of the recordings under
        ``replay`` (and its warning)."""
        self._warn_unaccounted()
        return {"replay": self.accounting()}

    def _warn_unaccounted(self) -> None:
        counts = self.accounting()
        problems = []
        if counts["unused"]:
            more = counts["unused"] - len(counts["unused_first"])
            problems.append(
                f"{counts['unused']} of {counts['recorded']} recorded outputs left unused (no request for them: "
                f"--limit, or more outputs than the run's prompts): {', '.join(counts['unused_first'])}"
                + (f" and {more} more" if more > 0 else "")
            )
        if counts["null_outputs"]:
            problems.append(
                f"{counts['null_outputs']} null outputs answered as empty generations (counted by the tasks as "
                f"empty): {', '.join(counts['null_outputs_first'])}"
            )
        if counts["prompts_recorded_more_than_once"]:
            problems.append(f"{counts['prompts_recorded_more_than_once']} prompts recorded more than once")
        if counts["served_from_cache_again"]:
            problems.append(
                f"{counts['served_from_cache_again']} answers served by --use_cache for a recording it had already "
                "served (repeated identical requests share one cache entry): run without --use_cache"
            )
        if problems:
            logger.warning("replay %s: %s (counted in the results' config.replay)", self.source, "; ".join(problems))

    def _key(self, context: str) -> str:
        if context in self._recorded:
            return context
        if self.prefill and context.endswith(self.prefill) and context[: -len(self.prefill)] in self._recorded:
            return context[: -len(self.prefill)]
        raise KeyError(
            f"replay: no recorded output in {self.source} for the prompt {context[:300]!r}"
            f"{'...' if len(context) > 300 else ''} (matched as is and without the prefill {self.prefill!r})"
        )

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        """The next recorded output of each request's prompt."""
        outputs = []
        for request in requests:
            key = self._key(request.args[0])
            queue = self._queues[key]
            if not queue:
                raise ValueError(
                    f"replay: the prompt {key[:120]!r}... was requested more often than the "
                    f"{self._recorded[key]} outputs recorded for it in {self.source}"
                )
            recording = queue.popleft()
            if recording.output is None:
                self._answered_null.append(recording)
                outputs.append(Unanswered(""))
            else:
                outputs.append(RecordedOutput(recording.output, recording.place))
        count_unanswered(self, requests, outputs, empty_too=False)
        return outputs

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[tuple[float, bool]]:
        raise NotImplementedError("the replay model only answers generate_until requests (recorded generations)")

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[float]:
        raise NotImplementedError("the replay model only answers generate_until requests (recorded generations)")

    def apply_chat_template(self, chat_history: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        """Plain concatenation of the message contents, so chat-formatted requests match the recorded prompts."""
        return "".join(message["content"] for message in chat_history)

    @property
    def tokenizer_name(self) -> str:
        return "replay"

    def chat_template(self, chat_template: bool | str = False) -> str | None:
        return ""
