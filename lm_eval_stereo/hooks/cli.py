"""``lm_eval._cli.harness`` and ``lm_eval._cli.run`` (the ``lm_eval`` command line): what it prints and how a run
that cannot go on ends. lm_eval 0.4.13's command line has no extension point; the plugin's own command
(``lm-eval-stereo``, :mod:`lm_eval_stereo.cli_lm_eval`) adds its checks before lm_eval's, and changes here only what
no credential and no trace may cross:

- ``HarnessCLI.parse_args`` (:func:`parse_args_wrapper`): the credentials of the command line are replaced in the log
  records it makes (its warning for an argument given twice prints both values);
- ``HarnessCLI.execute`` (:func:`execute_wrapper`): while it runs, the credentials of ``--model_args``,
  ``--metadata`` and the command line are replaced in every log record (:func:`lm_eval_stereo.core.credentials.hidden`; no credential reaches a console: one of the
  changes the plugin makes to lm_eval's own tasks too); a run that ends in a problem the plugin names (a task's
  missing optional extra, an unknown or invalid task option such as a misspelt ``--metadata`` key, a data problem:
  raised by the plugin's tasks only), for lm_eval's API packages missing (lm_eval: an ``ImportError`` trace) or for a
  problem found while the run works (:class:`~lm_eval_stereo.core.errors.RunStop`: an answer cache that cannot be
  written, a results or samples file lm_eval could not write whole: the run goes on to its table first) ends in one
  line saying it, exit status 2.
- ``lm_eval._cli.run``'s ``print`` (:func:`print_wrapper`): its summary line (the model arguments as given) and the
  results, printed with the credentials of the run in progress replaced.
"""

from __future__ import annotations

import functools
import inspect
import sys
from typing import Any

from lm_eval_stereo.core.credentials import command_line_secrets, hidden, hidden_secrets, redact_text, secrets_of
from lm_eval_stereo.core.errors import RunStop, fail
from lm_eval_stereo.core.lm_eval_files import run_files_checked


def execute_wrapper(original: Any) -> Any:
    """``HarnessCLI.execute`` with credentials hidden from the log records and the plugin's problems, and lm_eval's
    missing API packages, in one line (see the module docstring)."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def execute(*args: Any, **kwargs: Any) -> Any:
        from lm_eval_stereo.core.errors import DataError, OptionError
        from lm_eval_stereo.core.extras import MissingExtraError
        from lm_eval_stereo.models.served_checks import check_api_packages
        from lm_eval_stereo.models.served_mixin import close_progress_bars

        parsed = signature.bind(*args, **kwargs).arguments["args"]
        given = secrets_of(getattr(parsed, "model_args", None)) | secrets_of(getattr(parsed, "metadata", None) or {})
        try:
            with hidden(given | command_line_secrets(sys.argv[1:])), run_files_checked():
                return original(*args, **kwargs)
        except (MissingExtraError, DataError, OptionError) as exc:
            fail(str(exc))
        except RunStop as exc:
            close_progress_bars()
            fail(str(exc))
        except ImportError:
            check_api_packages(getattr(parsed, "model", None))
            raise

    return execute


def parse_args_wrapper(original: Any) -> Any:
    """``HarnessCLI.parse_args`` with the credentials of the command line (:func:`command_line_secrets`) hidden from
    the log records it makes: lm_eval's warning for an argument given twice ("Overwriting ...") prints both values."""

    @functools.wraps(original)
    def parse_args(*args: Any, **kwargs: Any) -> Any:
        with hidden(command_line_secrets(sys.argv[1:])):
            return original(*args, **kwargs)

    return parse_args


def print_wrapper(original: Any) -> Any:
    """``print`` with the credentials of the run in progress replaced (:func:`lm_eval_stereo.core.credentials.hidden`):
    lm_eval's summary line, ``local-completions ({'base_url': ..., 'auth_token': ...}), gen_kwargs: ...``."""

    @functools.wraps(original)
    def print(*values: Any, **kwargs: Any) -> None:  # noqa: A001 - the name lm_eval's module calls
        secrets = hidden_secrets()
        original(*(redact_text(str(value), secrets) if secrets else value for value in values), **kwargs)

    return print
