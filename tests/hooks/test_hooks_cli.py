"""``hooks/cli.py``: ``lm_eval``'s command line keeps the run's credentials out of its log records and its summary
line, and ends in one line for the plugin's own errors and for lm_eval's missing API packages; everything else as
lm_eval has it."""

from __future__ import annotations

import argparse
import logging

import pytest

from lm_eval_stereo.core.credentials import REDACTED, hidden
from lm_eval_stereo.core.errors import OptionError
from lm_eval_stereo.hooks.cli import execute_wrapper, print_wrapper
from lm_eval_stereo.models import served_checks

KEY = "sk-cli-4d2a"


class HarnessCLI:
    """lm_eval 0.4.13's ``HarnessCLI.execute`` parameters; the run it executes is the test's."""

    def __init__(self, run):
        self.run = run

    def execute(self, args):
        return self.run(args)


HarnessCLI.execute = execute_wrapper(HarnessCLI.execute)


def parsed(model: str = "hf", model_args: str = f"pretrained=x,api_key={KEY}") -> argparse.Namespace:
    return argparse.Namespace(model=model, model_args=model_args)


def test_the_run_s_credentials_are_replaced_in_every_log_record_while_it_runs(caplog):
    def run(args):
        logging.getLogger("lm_eval.test").warning(f"Initializing with {args.model_args}")
        return "done"

    with caplog.at_level(logging.WARNING):
        assert HarnessCLI(run).execute(args=parsed()) == "done"  # bound by name
    assert caplog.messages == [f"Initializing with pretrained=x,api_key={REDACTED}"]


def test_the_plugin_s_errors_end_in_one_line(capsys):
    def run(args):
        raise OptionError("stereoset_multi_en: unknown option 'normalisation' (did you mean 'normalization'?)")

    with pytest.raises(SystemExit) as ended:
        HarnessCLI(run).execute(parsed())
    assert ended.value.code == 2
    assert capsys.readouterr().err == (
        "lm-eval-stereo: stereoset_multi_en: unknown option 'normalisation' (did you mean 'normalization'?)\n"
    )


def test_lm_eval_s_missing_api_packages_end_in_one_line_other_import_errors_are_lm_eval_s(monkeypatch, capsys):
    def run(args):
        raise ImportError("No module named 'tenacity'")

    monkeypatch.setattr(served_checks, "find_spec", lambda name: None if name == "tenacity" else object())
    with pytest.raises(SystemExit):
        HarnessCLI(run).execute(parsed("local-chat-completions"))
    assert capsys.readouterr().err == (
        'lm-eval-stereo: --model local-chat-completions needs tenacity: pip install "lm-eval-stereo[api]"\n'
    )
    with pytest.raises(ImportError, match="tenacity"):  # not an API model: lm_eval's error as it is
        HarnessCLI(run).execute(parsed("hf"))


def test_the_summary_line_is_printed_without_the_run_s_credentials(capsys):
    printing = print_wrapper(print)
    line = f"local-completions ({{'base_url': 'http://h/v1', 'api_key': '{KEY}'}}), gen_kwargs: (None)"
    printing(line)
    with hidden({KEY}):
        printing(line, end="!\n")
    assert capsys.readouterr().out == f"{line}\n{line.replace(KEY, REDACTED)}!\n"
