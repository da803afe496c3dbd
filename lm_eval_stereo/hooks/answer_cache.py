"""``lm_eval.api.model``'s ``CachingLM`` (lm_eval's request cache, ``--use_cache PATH``) as the plugin's backends need
it: one backend per database, read as data, and every answer it serves seen by the backend.

lm_eval 0.4.13's ``CachingLM`` keys an answer by its request's strings only (``hash_args(request type, args)``), so a
database written by one backend answers another backend's run with the first one's numbers: ``hf`` and ``hf-prefix``
differ wherever ``hf-prefix`` scores a reference's own tokens (:mod:`lm_eval_stereo.core.token_split`), two models or
two dtypes of one model differ everywhere; and it opens any file it is given and unpickles what it reads there. This
module wraps ``CachingLM.__init__`` (:func:`caching_init_wrapper`), for every run with ``--use_cache`` (a cache never
reused across backends: one of the changes the plugin makes to lm_eval's own tasks too):

- the file is read as data before lm_eval opens it (:mod:`lm_eval_stereo.core.answer_record`, with ``sqlite3`` and
  JSON, no pickle): one that is no SQLite database, is damaged or truncated, holds other tables, or has a record of
  the wrong shape stops the run in one line naming the file and what to do;
- the database records whose answers it holds (:func:`answers_of`: the backend; every model argument passed but
  credentials and :data:`SAME_ANSWERS`, so ``add_bos_token`` and ``max_length`` too; the model's name, hub commit
  and revision, a fingerprint of a local model folder's files, dtype, ``add_bos_token`` and ``max_length`` as the
  backend uses them; or what the backend itself names, e.g. ``replay``'s recordings and their digest), as JSON in a
  table of its own; a run that differs stops before its first request with one line naming each difference and
  what to do (another ``--use_cache`` path). A database that holds answers but no record (written without the
  plugin, or by an older one) is refused to the plugin's own backends, whose answers differ from lm_eval's, and left
  to lm_eval's backends as lm_eval leaves it, with a warning that its answers are pickles (code);
- a file that cannot be opened or written (a read-only folder, a full disk) stops the run in one line naming it,
  before the first request or at the answer that could not be stored, the answers stored before kept for the run
  that resumes (:mod:`lm_eval_stereo.core.answer_cache_faults`);
- the store ``CachingLM`` reads is an :class:`~lm_eval_stereo.core.answer_record.AnswerCache`: it never keeps an
  unanswered request of the plugin's tasks (:class:`lm_eval_stereo.core.unanswered.Unanswered`, so that a resumed run
  asks again; lm_eval's own backends never give one), and it hands every answer it serves to the backend's
  ``served_from_cache`` method where the backend has one (``replay`` accounts for them).
"""

from __future__ import annotations

import functools
import inspect
from pathlib import Path
from typing import Any

from lm_eval_stereo.core import answer_cache_faults, answer_record, model_arguments
from lm_eval_stereo.core.answer_record import AnswerCache
from lm_eval_stereo.core.credentials import is_secret_name, redact_value
from lm_eval_stereo.core.errors import fail
from lm_eval_stereo.models.view import is_plugin_backend


def backend_name(lm: Any) -> str:
    """The ``--model`` name ``lm``'s class is registered under in lm_eval (its first), else its ``module.Class``."""
    cls = type(lm)
    path = f"{cls.__module__}.{cls.__qualname__}"
    try:
        from lm_eval.api.registry import model_registry

        registered = getattr(model_registry, "_objs", {})
    except ImportError:
        return path
    for name, target in registered.items():
        if target is cls or (isinstance(target, str) and target.replace(":", ".") == path):
            return name
    return path


#: model arguments that say how or where a model runs, not what it answers: left out of the record (with every
#: credential, :func:`lm_eval_stereo.core.credentials.is_secret_name`), so that a resumed run may change them
SAME_ANSWERS = frozenset(
    {"batch_size", "max_batch_size", "device", "parallelize", "device_map", "max_memory_per_gpu", "max_cpu_memory",
     "offload_folder", "num_concurrent", "max_retries", "timeout", "base_url", "verify_certificate", "ca_cert_path",
     "cache_dir", "local_files_only", "low_cpu_mem_usage", "gpu_memory_utilization", "swap_space",
     "data_parallel_size", "trust_remote_code"}
)  # fmt: skip


def _effective(lm: Any) -> dict[str, Any]:
    """What a backend of lm_eval's says of itself that changes its answers: the model (its name, hub commit and
    revision, the weights' fingerprint where it is a local folder), the dtype, autocast, ``add_bos_token`` and the
    ``max_length`` it cuts requests to."""
    network = getattr(lm, "_model", None)
    config = getattr(network, "config", None) or getattr(lm, "_config", None)
    engine = getattr(lm, "model_args", None)
    engine = engine if isinstance(engine, dict) else {}
    names = (getattr(config, "_name_or_path", None), getattr(lm, "pretrained", None), getattr(lm, "model", None))
    pretrained = next((name for name in names if isinstance(name, str) and name), None)
    try:
        max_length = getattr(lm, "max_length", None)
    except Exception:  # noqa: BLE001 - a backend's property that cannot answer before its first request
        max_length = None
    local = Path(pretrained) if pretrained else None
    return {
        "pretrained": pretrained,
        "revision": getattr(lm, "revision", None) or engine.get("revision"),
        "commit": getattr(config, "_commit_hash", None),
        "weights": answer_record.folder_fingerprint(local) if local is not None and local.is_dir() else None,
        "dtype": getattr(network, "dtype", None) or engine.get("dtype"),
        "autocast": getattr(lm, "mixed_precision_dtype", None),
        "add_bos_token": getattr(lm, "add_bos_token", None),
        "max_length": max_length if isinstance(max_length, int) else None,
    }


def answers_of(lm: Any) -> dict[str, str]:
    """What the answers of ``lm`` depend on, as texts: its backend; every model argument the user passed
    (:func:`lm_eval_stereo.core.model_arguments.given`) but credentials and :data:`SAME_ANSWERS`; and the backend's
    own ``answers_depend_on()`` where it names them (``replay``), else what it says of itself (:func:`_effective`: the
    model, its weights, dtype, ``add_bos_token``, ``max_length``)."""
    passed = {
        key: redact_value(key, value)
        for key, value in (model_arguments.given() or {}).items()
        if key not in SAME_ANSWERS and not is_secret_name(key)
    }
    own = getattr(lm, "answers_depend_on", None)
    found = own() if callable(own) else _effective(lm)
    facts = {answer_record.BACKEND: backend_name(lm), **passed}
    for fact, value in found.items():
        if value is not None and (not isinstance(value, str) or value):
            facts[fact] = str(value).removeprefix("torch.")
    return facts


def claim(path: str, lm: Any) -> bool:
    """Check the ``--use_cache`` file at ``path`` before lm_eval opens it (:func:`answer_record.inspect`, no pickle
    read): one line (exit status 2) where it is no whole answer cache, has a malformed or pickled record, or holds
    answers of another backend, model or setting (each difference named), or unrecorded answers and the backend is
    the plugin's. True when the file holds no answers yet, so that the run's record is written
    (:func:`answer_record.write`)."""
    ours = answers_of(lm)
    try:
        found = answer_record.inspect(path)
    except answer_record.CacheFileError as exc:
        fail(str(exc))
    if found.old_record:
        fail(
            f"--use_cache: {path} was written by an older lm-eval-stereo, which kept its record of whose answers it "
            f"holds as a pickle: not read (a pickle runs code): {answer_record.ADVICE}"
        )
    if found.record is not None:
        differ = answer_record.differences(found.record, ours)
        if differ:
            fail(
                f"--use_cache: {path} holds answers given with {'; '.join(differ)}, which change the answers: "
                f"{answer_record.ADVICE}"
            )
        return False
    if not found.answers:
        return True
    if is_plugin_backend(lm):
        fail(
            f"--use_cache: {path} holds answers that do not say which backend and model gave them (written without "
            f"lm-eval-stereo, or by an older one); this run is {describe(ours)}, whose answers may differ from "
            f"theirs: {answer_record.ADVICE}"
        )
    from lm_eval.api.model import eval_logger

    eval_logger.warning(
        f"lm-eval-stereo: --use_cache: {path} holds answers that do not say which backend and model gave them "
        "(written without lm-eval-stereo): used as lm_eval uses them. lm_eval's cache stores pickles, which run code "
        "when read: use only a cache file you wrote yourself"
    )
    return False


def describe(facts: dict[str, str]) -> str:
    """``--model hf (pretrained=..., dtype=...)``."""
    details = ", ".join(f"{key}={value}" for key, value in facts.items() if key != answer_record.BACKEND)
    return f"--model {facts.get(answer_record.BACKEND, '?')}" + (f" ({details})" if details else "")


def caching_init_wrapper(original: Any) -> Any:
    """``CachingLM.__init__`` that :func:`claim`\\ s its database for the run's backend and reads it through an
    :class:`~lm_eval_stereo.core.answer_record.AnswerCache`."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def __init__(*args: Any, **kwargs: Any) -> None:
        bound = signature.bind(*args, **kwargs)
        self, lm, cache_db = bound.arguments["self"], bound.arguments["lm"], str(bound.arguments["cache_db"])
        new = claim(cache_db, lm)
        unwritable = answer_cache_faults.check_writable(cache_db, answer_record.LOCK_TIMEOUT)
        if unwritable is not None:
            fail(answer_cache_faults.unwritable_line(cache_db, unwritable))
        answer_cache_faults.quiet_sqlitedict()
        original(*bound.args, **bound.kwargs)
        if new:
            answer_record.write(cache_db, answers_of(lm))
        self.dbdict = AnswerCache(self.dbdict, served=getattr(self.lm, "served_from_cache", None))
        hook = getattr(self.lm, "cache_hook", None)
        if hook is not None and getattr(hook, "dbdict", None) is not None:
            hook.dbdict = self.dbdict

    return __init__
