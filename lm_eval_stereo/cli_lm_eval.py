"""What ``lm-eval-stereo`` adds to lm_eval's own command line, which it runs for every argument list that is not one of
the plugin's commands (``lm-eval-stereo --model hf --tasks gest_en ...``); plain ``lm_eval`` stays lm_eval's.

- lm_eval 0.4.13 removed the listing flags (``--tasks list``, ``list_groups``, ``list_subtasks``, ``list_tags``) that
  the plugin's documentation and older scripts use: they are translated to ``lm_eval ls ...`` (:func:`listing_argv`).
- lm_eval checks its arguments only once the model has loaded: an ``--output_path`` that cannot be written is logged
  after the whole run, exit status 0, the results lost; a local ``pretrained=`` folder that does not exist is taken
  for a hub name. Both are checked before anything loads (:func:`check_output_path`, :func:`check_pretrained`), and
  for a served model lm_eval's API packages and the server at its ``base_url``
  (:mod:`lm_eval_stereo.models.served_checks`): one line, exit status 2.
"""

from __future__ import annotations

import sys
from typing import Any

from lm_eval_stereo.core.errors import fail

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
        fail(f"--output_path {path} is not a writable folder ({exc.strerror or exc})")


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


def check_before_loading(args: Any) -> None:
    """The checks of a parsed ``lm_eval run`` command line (see the module docstring); nothing for ``ls`` and the
    other subcommands."""
    from lm_eval_stereo.models.served_checks import check_api_packages, check_server_of

    check_output_path(getattr(args, "output_path", None))
    check_pretrained(getattr(args, "model_args", None))
    check_api_packages(getattr(args, "model", None))
    check_server_of(getattr(args, "model", None), getattr(args, "model_args", None))


def run(argv: list[str]) -> int:
    """lm_eval's command line on ``argv`` (its listing flags translated), checked before anything loads."""
    from lm_eval._cli import HarnessCLI
    from lm_eval.utils import setup_logging

    setup_logging()
    sys.argv = ["lm-eval-stereo", *(listing_argv(argv) or argv)]
    cli = HarnessCLI()
    args = cli.parse_args()
    check_before_loading(args)
    cli.execute(args)
    return 0
