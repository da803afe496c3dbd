"""stereoset_multi end to end through the real ``lm_eval`` command on a tiny seeded causal LM and real data."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import pytest
from lm_eval_runner import LmEvalRun, run_command, run_lm_eval
from markdown_tables import parse_tables

from lm_eval_stereo.tasks.stereoset_multi import intra_scoring
from lm_eval_stereo.tasks.stereoset_multi.data import LANGUAGES, load_rows
from lm_eval_stereo.tasks.stereoset_multi.task import METRICS

PER_CELL = 2  # documents per (test, bias type) and language: every metric gets items


def stratified_indices(lang: str) -> list[int]:
    taken: dict[tuple[str, str], list[int]] = defaultdict(list)
    for index, row in enumerate(load_rows(lang)):
        cell = taken[(row["test"], row["bias_type"])]
        if len(cell) < PER_CELL:
            cell.append(index)
    return sorted(i for cell in taken.values() for i in cell)


def model_args(model: Path) -> list[str]:
    return ["--model", "hf", "--model_args", f"pretrained={model},dtype=float32", "--device", "cpu"]


def samples_arg(langs) -> list[str]:
    return ["--samples", json.dumps({f"stereoset_multi_{lang}": stratified_indices(lang) for lang in langs})]


@pytest.fixture(scope="module")
def suite_run(tiny_causal, tmp_path_factory) -> LmEvalRun:
    out = tmp_path_factory.mktemp("stereoset_suite")
    args = [*model_args(tiny_causal), "--tasks", "stereoset_multi", "--batch_size", "8", "--log_samples"]
    return run_lm_eval([*args, *samples_arg(LANGUAGES)], out)


RANGES = {"count": (1, 10_000), "intra_count": (1, 10_000), "inter_count": (1, 10_000)}
RANGES |= {name: (0, 10_000) for name in ("ties", "intra_ties", "inter_ties", "boundary_mismatches")}


def test_every_metric_is_present_finite_and_in_range(suite_run):
    n_docs = len(stratified_indices("en"))
    for lang in LANGUAGES:
        task = f"stereoset_multi_{lang}"
        for metric in METRICS.names:
            value = suite_run.metric(task, metric)
            if metric in ("normalization", "intrasentence_scoring"):
                assert value.startswith({"normalization": "token (", "intrasentence_scoring": "reference ("}[metric])
                continue
            low, high = RANGES.get(metric, (0.0, 100.0))
            assert math.isfinite(value) and low <= value <= high, (task, metric, value)
        assert suite_run.metric(task, "count") == n_docs
        assert suite_run.metric(task, "intra_count") == suite_run.metric(task, "inter_count") == n_docs / 2
        for name in ("lms", "ss", "icat"):
            assert suite_run.metric(task, f"{name}_ci_low") <= suite_run.metric(task, name)
            assert suite_run.metric(task, name) <= suite_run.metric(task, f"{name}_ci_high")


def test_group_reports_the_mean_over_languages(suite_run):
    assert not any("_ci_" in key for key in suite_run.results["results"]["stereoset_multi"])
    for metric in ("lms", "ss", "icat", "icat_macro", "inter_ss"):
        per_language = [suite_run.metric(f"stereoset_multi_{lang}", metric) for lang in LANGUAGES]
        assert suite_run.metric("stereoset_multi", metric) == pytest.approx(sum(per_language) / len(LANGUAGES))


def test_log_samples_hold_per_candidate_scores(suite_run, tiny_causal):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_causal))

    def tokens(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False))

    samples = suite_run.samples["stereoset_multi_de"]
    assert len(samples) == len(stratified_indices("de"))
    mismatches = 0
    for sample in samples:
        item = sample["lms"]
        doc = sample["doc"]
        logliks = [float(resp[0][0]) for resp in sample["resps"]]
        arguments = [tuple(a.values()) for a in sample["arguments"].values()]
        # intrasentence (reference scoring): ("<|endoftext|>", first token) and (first token, rest) per candidate: the
        # tiny tokenizer encodes "<|endoftext|>" as one token, so the first token is conditioned on it, as the reference
        per_candidate = 2 if doc["test"] == "intrasentence" else 1
        for c, candidate in enumerate(item["candidates"], start=1):
            requests = arguments[per_candidate * (c - 1) : per_candidate * c]
            assert candidate["loglik"] == pytest.approx(sum(logliks[per_candidate * (c - 1) : per_candidate * c]))
            units = [tokens(ctx + cont) - tokens(ctx) if ctx else tokens(cont) for ctx, cont in requests]
            assert candidate["units"] == sum(units) and min(units) > 0
            assert candidate["score"] == pytest.approx(candidate["loglik"] / candidate["units"])
            assert item[doc[f"c{c}_gold_label"]] == candidate["score"]
            if doc["test"] == "intrasentence":
                (start, first), (given, rest) = requests
                assert start == "<|endoftext|>" and given == first and first + rest == doc[f"c{c}_sentence"]
                # a first token that is part of a character (a byte of "Ä") cannot be a request of its own
                assert candidate["boundaries_kept"] == (tokens(first) == 1)
                mismatches += not candidate["boundaries_kept"]
        if doc["test"] == "intersentence":
            assert sample["arguments"]["gen_args_0"]["arg_0"][-1] in ".!?"
            assert sample["arguments"]["gen_args_0"]["arg_1"] == " " + doc["c1_sentence"].strip()
        assert sample["ss"] == item["key"]
    assert suite_run.metric("stereoset_multi_de", "boundary_mismatches") == mismatches


def test_byte_normalization_and_bos_scoring_via_metadata(tiny_causal, tmp_path):
    run = run_lm_eval(
        [*model_args(tiny_causal), "--tasks", "stereoset_multi_fr", "--limit", "4", "--log_samples"]
        + ["--metadata", json.dumps({"normalization": "byte", "intrasentence_scoring": "bos"})],
        tmp_path,
    )
    assert run.metric("stereoset_multi_fr", "normalization") == "byte"
    assert run.metric("stereoset_multi_fr", "intrasentence_scoring").startswith("bos (whole sentence")
    for sample in run.samples["stereoset_multi_fr"]:
        for c, (candidate, arguments) in enumerate(zip(sample["lms"]["candidates"], sample["arguments"].values())):
            assert candidate["units"] == len(arguments["arg_1"].encode("utf-8"))
            if sample["doc"]["test"] == "intrasentence":  # task version 1.0: the sentence after the prefix token
                assert (arguments["arg_0"], arguments["arg_1"]) == ("", sample["doc"][f"c{c + 1}_sentence"])


def test_without_a_tokenizer_falls_back_to_bytes_and_says_so(tmp_path):
    run = run_lm_eval(["--model", "dummy", "--tasks", "stereoset_multi_tr", "--limit", "4"], tmp_path)
    assert run.metric("stereoset_multi_tr", "normalization").startswith("byte (no tokenizer")
    assert "falling back to byte normalisation" in run.stderr + run.stdout
    assert run.metric("stereoset_multi_tr", "intrasentence_scoring").startswith("bos (reference scoring impossible")
    assert "reference intrasentence scoring impossible" in run.stderr + run.stdout
    assert 0 <= run.metric("stereoset_multi_tr", "lms") <= 100


def test_report_lists_headline_metrics_with_their_intervals(suite_run, tiny_causal):
    from test_report import expected_cell, fmt

    proc = run_command("report", suite_run.output_dir, "--details")
    assert proc.returncode == 0, proc.stderr
    report = proc.stdout
    tables, label = parse_tables(report), tiny_causal.name  # a local folder is named by its folder name
    expected = expected_cell(suite_run.results, "stereoset_multi_de", "icat")
    assert tables["stereoset_multi_de"][label]["icat ↑"] == expected
    group = tables["stereoset_multi"][label]["icat ↑"]
    assert group.split(" ± ")[0] == fmt(suite_run.metric("stereoset_multi", "icat")) and "[" not in group
    assert tables["stereoset_multi_tr"][label]["count"] == str(suite_run.metric("stereoset_multi_tr", "count"))
    provenance = next(
        line for line in report.splitlines() if line.startswith(f"| {label} |") and "| stereoset_multi_en |" in line
    )
    assert "| token (" in provenance and str(tiny_causal) in provenance, "the full model_args in the provenance"
    assert "icat_gender" not in report, "metrics without an interval or bookkeeping role stay out"


def test_first_token_split_marks_boundaries_the_harness_cannot_keep(tiny_causal):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_causal))
    kept = intra_scoring.first_token_split(tokenizer, "The woman is kind.")
    assert kept == intra_scoring.Split((("", "The"), ("The", " woman is kind.")), True)
    # "Ω" is two byte-level tokens here: its first byte alone is no text, so the split keeps the whole character;
    # the requests also carry the reference's tokens (the first byte after the prefix token, the rest after it)
    assert len(tokenizer.encode("Ω", add_special_tokens=False)) == 2
    ids = tuple(tokenizer.encode("Ω is a letter.", add_special_tokens=False))
    split = intra_scoring.first_token_split(tokenizer, "Ω is a letter.")
    assert split.requests == (("", "Ω"), ("Ω", " is a letter.")) and not split.boundaries_kept
    assert split.references == (((tokenizer.bos_token_id,), ids[:1]), (ids[:1], ids[1:]))
    start = intra_scoring.first_token_split(tokenizer, "Ω is a letter.", "<|endoftext|>").references[0]
    assert start == ((tokenizer.convert_tokens_to_ids("<|endoftext|>"),), ids[:1])
    # a one-token sentence has no rest to condition on the first token: scored whole, counted
    assert intra_scoring.first_token_split(tokenizer, "The") == intra_scoring.Split((("", "The"),), False)
