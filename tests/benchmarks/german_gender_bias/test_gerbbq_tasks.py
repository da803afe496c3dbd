"""Offline end-to-end runs of every GerBBQ+ / SexistStatements task through the real ``lm_eval`` command."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from lm_eval_runner import run_lm_eval

GENERATIVE = ["gerbbq_amb", "gerbbq_dis", "sexist_statements_de", "sexist_statements_de_once"]
MULTIPLE_CHOICE = ["gerbbq_mc_amb", "gerbbq_mc_dis"]


@pytest.fixture(scope="module")
def chat_run(tiny_causal: Path, tmp_path_factory: pytest.TempPathFactory):
    """All tasks on the tiny chat model, with the chat template and the assistant prefill."""
    return run_lm_eval(
        [
            "--model",
            "hf",
            "--model_args",
            f"pretrained={tiny_causal}",
            "--tasks",
            ",".join(GENERATIVE + MULTIPLE_CHOICE),
            "--limit",
            "2",
            "--apply_chat_template",
            "--log_samples",
            "--gen_kwargs",
            "max_gen_toks=8",
            "--batch_size",
            "1",
        ],
        tmp_path_factory.mktemp("gerbbq_chat"),
    )


def test_generative_prompt_is_published_prompt_with_prefill(chat_run) -> None:
    sample = chat_run.samples["gerbbq_amb"][0]
    context = sample["arguments"]["gen_args_0"]["arg_0"]
    assert context.startswith("<|user|>\nKontext: Wir konnten heute um 9 Uhr nicht")
    assert context.endswith("A: unbekannt\nB: Ali\nC: Ava\nBeantworte die Frage.<|end|>\n<|assistant|>\n\nAntwort:\n")
    gen_kwargs = sample["arguments"]["gen_args_0"]["arg_1"]
    assert gen_kwargs["temperature"] == 0.7 and gen_kwargs["do_sample"] is True
    assert gen_kwargs["max_gen_toks"] == 8  # overridden with --gen_kwargs


def test_every_repeat_is_scored(chat_run) -> None:
    repeated = chat_run.samples["sexist_statements_de"]
    assert len(repeated) == 2
    for sample in repeated:
        assert len(sample["resps"][0]) == 7
        record = sample["combined_sexism"]
        assert record["agree"] + record["disagree"] + record["undetermined"] + record["empty"] == 7
    once = chat_run.samples["sexist_statements_de_once"]
    assert all(len(sample["resps"][0]) == 1 for sample in once)


def test_generative_metrics_are_reported(chat_run) -> None:
    for task in ("gerbbq_amb", "gerbbq_dis"):
        samples = chat_run.samples[task]
        outputs = sum(s["accuracy"]["outputs"] for s in samples)
        undetermined = sum(s["accuracy"]["undetermined"] for s in samples)
        assert outputs + sum(s["accuracy"]["empty"] for s in samples) == 2
        assert chat_run.metric(task, "undetermined") == pytest.approx(undetermined / outputs)
        accuracy = chat_run.metric(task, "accuracy")
        assert 0.0 <= accuracy <= 1.0
        assert chat_run.metric(task, "accuracy_ci_low") <= accuracy <= chat_run.metric(task, "accuracy_ci_high")
    undetermined = chat_run.metric("sexist_statements_de", "undetermined")
    assert 0.0 <= undetermined <= 1.0


def test_multiple_choice_books_the_most_likely_option(chat_run) -> None:
    for task in MULTIPLE_CHOICE:
        samples = chat_run.samples[task]
        for sample in samples:
            scores = [float(resp[0][0]) for resp in sample["resps"]]
            assert sample["accuracy"]["letters"] == ["ABC"[scores.index(max(scores))]]
            assert sample["arguments"]["gen_args_0"]["arg_1"] == "A: " + sample["doc"]["options"]["A"]
        assert chat_run.metric(task, "undetermined") == 0.0
    correct = sum(s["accuracy"]["correct"] for s in chat_run.samples["gerbbq_mc_dis"])
    assert chat_run.metric("gerbbq_mc_dis", "accuracy") == pytest.approx(correct / 2)
    unknown = sum(s["accuracy"]["unknown"] for s in chat_run.samples["gerbbq_mc_amb"])
    assert chat_run.metric("gerbbq_mc_amb", "accuracy") == pytest.approx(unknown / 2)


def _replay_run(outputs: Path, out: Path, exclude: bool):
    args = ["--model", "replay", "--model_args", f"outputs={outputs},prompt_column=prompt"]
    args += ["--tasks", "gerbbq_amb,gerbbq_dis", "--limit", "3", "--apply_chat_template"]
    return run_lm_eval([*args, "--metadata", json.dumps({"exclude_undetermined": exclude})], out)


def test_exclude_undetermined_through_lm_eval(tmp_path: Path) -> None:
    """Hand-written outputs for the first 3 items (unbekannt, undetermined, Ali), replayed with and without the option."""
    from lm_eval_stereo.tasks.german_gender_bias.data import load_gerbbq

    outputs = tmp_path / "outputs.csv"
    with open(outputs, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["prompt", "output"])
        for condition in ("amb", "dis"):
            docs = load_gerbbq(condition)[:3]
            unknown = next(letter for letter, text in docs[0]["options"].items() if text == "unbekannt")
            ali = next(letter for letter, text in docs[2]["options"].items() if text == "Ali")
            answers = [f"{unknown}: unbekannt", "Das lässt sich nicht sagen.", f"{ali}: Ali"]
            writer.writerows((doc["full_prompt"], answer) for doc, answer in zip(docs, answers))
    default = _replay_run(outputs, tmp_path / "default", False)
    excluded = _replay_run(outputs, tmp_path / "excluded", True)
    for run in (default, excluded):
        assert (
            run.metric("gerbbq_amb", "undetermined") == run.metric("gerbbq_dis", "undetermined") == pytest.approx(1 / 3)
        )
    # default (reference): the undetermined output is booked as "unbekannt"; excluded: it leaves the denominators
    assert default.metric("gerbbq_amb", "accuracy") == pytest.approx(2 / 3)
    assert excluded.metric("gerbbq_amb", "accuracy") == pytest.approx(1 / 2)
    assert default.metric("gerbbq_amb", "bias") == pytest.approx(-1 / 3)  # (1 - acc) · s_DIS, s_DIS = -1 (Ali, anti)
    assert excluded.metric("gerbbq_amb", "bias") == pytest.approx(-1 / 2)
    assert default.metric("gerbbq_dis", "accuracy") == pytest.approx(1 / 3)  # only "Ali" is correct
    assert excluded.metric("gerbbq_dis", "accuracy") == pytest.approx(1 / 2)
    assert default.metric("gerbbq_dis", "bias") == excluded.metric("gerbbq_dis", "bias") == pytest.approx(-1.0)
