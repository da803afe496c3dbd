"""``lm_eval._cli.harness`` (the ``lm_eval`` command line): lm_eval 0.4.13 removed the listing flags (``--tasks list``,
``list_groups``, ``list_subtasks``, ``list_tags``) that the plugin's documentation and older scripts use, checks its
arguments only once the model has loaded (an ``--output_path`` that cannot be written is logged after the whole run,
exit status 0, the results lost; a local ``pretrained=`` folder that does not exist is taken for a hub name), and shows
any error of a task as a traceback. ``HarnessCLI.parse_args`` translates the old flags to ``lm_eval ls ...`` and checks
``--output_path``, a local ``pretrained=`` folder and, for a served model, lm_eval's API packages and the server's
``base_url`` before anything loads; ``HarnessCLI.execute`` ends a run whose task needs a missing optional extra, is
given an unknown or invalid option (a misspelt ``--metadata`` key), or meets a data problem, in one line saying it (exit status 2); while it runs, the credentials of
``--model_args`` are replaced in every log record (:func:`lm_eval_stereo.core.credentials.hidden`). ``lm_eval._cli.run``
prints a summary line with the model arguments as given: its ``print`` replaces them too (:func:`install_run`).
"""

from __future__ import annotations

import functools
import sys
from types import ModuleType
from typing import Any

from lm_eval_stereo.core.credentials import hidden, hidden_secrets, redact_text, secrets_of
from lm_eval_stereo.hooks import fail

LISTINGS = {"list": "tasks", "list_groups": "groups", "list_subtasks": "subtasks", "list_tags": "tags"}


def listing_argv(argv: list[str]) -> list[str] | None:
    """``ls`` arguments for a legacy ``--tasks list...`` command line (keeping ``--include_path``), else None."""
    options: dict[str, str] = {}
    words = list(argv[1:] if argv[:1] == ["run"] else argv)
    while words:
        word = words.pop(0)
        if not word.startswith("--"):
            return None
        name, _, value = word.partition("=")
        options[name] = value if value else (words.pop(0) if words else "")
    what = LISTINGS.get(options.pop("--tasks", ""))
    if what is None or set(options) - {"--include_path"}:
        return None
    return ["ls", what] + (["--include_path", options["--include_path"]] if "--include_path" in options else [])


def check_output_path(path: str | None) -> None:
    """Stop before any model is loaded when ``--output_path`` cannot be written (lm_eval itself only logs a warning
    after the whole run and exits 0, losing the results)."""
    if not path:
        return
    import tempfile
    from pathlib import Path

    folder = Path(path).expanduser()
    folder = folder.parent if folder.suffix == ".json" else folder
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError as exc:
        raise SystemExit(
            f"lm-eval-stereo: --output_path {path} is not a writable folder ({exc.strerror or exc})"
        ) from None


def check_pretrained(model_args: Any) -> None:
    """Stop in one line (exit status 2) when ``--model_args pretrained=`` names a local folder that does not exist or
    holds no model (no ``config.json``, no adapter, no ``gguf_file``), before lm_eval takes it for a hub name."""
    from pathlib import Path

    from lm_eval_stereo.core.values import parse_model_args

    model_args = parse_model_args(model_args)
    pretrained = model_args.get("pretrained")
    if pretrained is None:
        return
    path = Path(pretrained)
    local = path.exists() or pretrained.startswith((".", "/", "~")) or pretrained.count("/") > 1
    if not local or "gguf_file" in model_args:
        return
    if not path.is_dir():
        problem = "a file, not a model folder" if path.exists() else "no such folder"
    elif not ((path / "config.json").is_file() or (path / "adapter_config.json").is_file()):
        problem = "not a model folder (no config.json in it)"
    else:
        return
    fail(f"--model_args pretrained={pretrained}: {problem}")


def install(module: ModuleType) -> None:
    """Translate ``lm_eval --tasks list`` (removed in 0.4.13) to ``lm_eval ls tasks``; check ``--output_path``, a
    local ``pretrained=`` folder and, for a served model, lm_eval's API packages and the server's ``base_url``; a task
    whose optional extra is missing ends the run in one line naming the extra (:mod:`lm_eval_stereo.core.extras`), a
    task option that is unknown or invalid (:class:`lm_eval_stereo.core.errors.OptionError`), and a data problem (:class:`lm_eval_stereo.core.errors.DataError`: a malformed file named by file, row and field, data
    that cannot be had) in one line saying it, not in a traceback."""
    cls = module.HarnessCLI
    original = cls.parse_args
    if getattr(original, "_lm_eval_stereo", False):
        return
    execute = cls.execute

    @functools.wraps(execute)
    def execute_or_name_the_extra(self: Any, *args: Any, **kwargs: Any) -> Any:
        from lm_eval_stereo.core.errors import DataError, OptionError
        from lm_eval_stereo.core.extras import MissingExtraError

        parsed = args[0] if args else kwargs.get("args")
        try:
            with hidden(secrets_of(getattr(parsed, "model_args", None))):
                return execute(self, *args, **kwargs)
        except (MissingExtraError, DataError, OptionError) as exc:
            fail(str(exc))

    @functools.wraps(original)
    def parse_args(self: Any, *args: Any, **kwargs: Any) -> Any:
        translated = listing_argv(sys.argv[1:])
        if translated is not None and "ls" in self._subparsers.choices:
            sys.argv[1:] = translated
        parsed = original(self, *args, **kwargs)
        check_output_path(getattr(parsed, "output_path", None))
        check_pretrained(getattr(parsed, "model_args", None))
        from lm_eval_stereo.hooks import api_models

        api_models.check_api_packages(getattr(parsed, "model", None))
        api_models.check_server(getattr(parsed, "model", None), getattr(parsed, "model_args", None))
        return parsed

    parse_args._lm_eval_stereo = True  # type: ignore[attr-defined]
    cls.parse_args = parse_args
    cls.execute = execute_or_name_the_extra


def redacting_print(*values: Any, **kwargs: Any) -> None:
    """``print`` with the credentials of the run in progress replaced (:func:`lm_eval_stereo.core.credentials.hidden`):
    lm_eval's summary line, ``local-completions ({'base_url': ..., 'auth_token': ...}), gen_kwargs: ...``."""
    import builtins

    secrets = hidden_secrets()
    builtins.print(*(redact_text(str(value), secrets) if secrets else value for value in values), **kwargs)


redacting_print._lm_eval_stereo = True  # type: ignore[attr-defined]


def install_run(module: ModuleType) -> None:
    """``lm_eval run`` prints its summary line (the model arguments as given) and the results: through
    :func:`redacting_print`, with no credential in it."""
    if not getattr(getattr(module, "print", None), "_lm_eval_stereo", False):
        module.print = redacting_print
