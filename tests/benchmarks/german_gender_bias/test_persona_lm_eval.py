"""End-to-end runs of the persona tasks through the real ``lm_eval`` command with the tiny chat model."""

from __future__ import annotations

import json
import math

import pytest
from lm_eval_runner import run_lm_eval

SAMPLES = {
    "stereo_persona_de": [0, 7],  # 5 repeats each (the paper's replication)
    "neutral_persona_de_once": [0, 1],
    "gender_persona_de": [0, 1, 2, 3, 800, 801, 802, 803],  # female, then male prompts
}


def _run(tiny_causal, out, batch_size: int, metadata: dict | None = None):
    args = [
        "--model", "hf",
        "--model_args", f"pretrained={tiny_causal}",
        "--tasks", ",".join(SAMPLES),
        "--samples", json.dumps(SAMPLES),
        "--apply_chat_template",
        "--gen_kwargs", "do_sample=False,max_gen_toks=24",
        "--batch_size", str(batch_size),
        "--log_samples",
    ]  # fmt: skip
    if metadata:
        args += ["--metadata", json.dumps(metadata)]
    return run_lm_eval(args, out)


def _items(run, task: str, first_metric: str) -> dict:
    return {s["doc_id"]: s[first_metric] for s in run.samples[task]}


@pytest.fixture(scope="module")
def runs(tiny_causal, tmp_path_factory):
    plain = _run(tiny_causal, tmp_path_factory.mktemp("persona_b1"), 1)
    judged = _run(
        tiny_causal,
        tmp_path_factory.mktemp("persona_b4"),
        4,
        {"judge_model": "hf", "judge_model_args": f"pretrained={tiny_causal}", "judge_batch_size": 8},
    )
    return plain, judged


def test_stereo_persona_lexicon_only(runs):
    plain, _ = runs
    assert plain.metric("stereo_persona_de", "n_generations", "persona") == 10
    assert plain.metric("stereo_persona_de", "gender_classifier", "persona") == "lexicon (no judge configured)"
    items = _items(plain, "stereo_persona_de", "stereo_accuracy")
    assert [items[i]["stereotype"] for i in (0, 7)] == ["female", "male"]
    assert all(len(items[i]["outputs"]) == 5 and items[i]["labels"] == items[i]["lexicon"] for i in items)
    hits = sum(label == items[i]["stereotype"] for i in items for label in items[i]["labels"])
    assert plain.metric("stereo_persona_de", "stereo_accuracy", "persona") == pytest.approx(hits / 10)
    low = plain.metric("stereo_persona_de", "stereo_accuracy_ci_low", "persona")
    assert low <= hits / 10 <= plain.metric("stereo_persona_de", "stereo_accuracy_ci_high", "persona")
    assert plain.metric("stereo_persona_de", "unclassified_share", "persona") == 0


def test_results_do_not_depend_on_batch_size(runs):
    plain, judged = runs
    for task, first in (("stereo_persona_de", "stereo_accuracy"), ("neutral_persona_de_once", "female_share")):
        a, b = _items(plain, task, first), _items(judged, task, first)
        assert {k: (v["outputs"], v["lexicon"]) for k, v in a.items()} == {
            k: (v["outputs"], v["lexicon"]) for k, v in b.items()
        }
    for name in ("cooc_inter_mean", "cooc_inter_mean_ci_low", "cooc_intra_female_t", "cooc_n_words", "cooc_top_female"):
        assert plain.metric("gender_persona_de", name, "persona") == judged.metric("gender_persona_de", name, "persona")


def test_neutral_persona_scores_every_repeat(tiny_causal, tmp_path):
    """The default replication (334 repeats) end to end; short greedy generations in large batches keep it cheap."""
    task = "neutral_persona_de"
    args = ["--model", "hf", "--model_args", f"pretrained={tiny_causal}", "--tasks", task, "--limit", "1"]
    args += ["--apply_chat_template", "--gen_kwargs", "do_sample=False,max_gen_toks=4", "--batch_size", "64"]
    plain = run_lm_eval([*args, "--log_samples"], tmp_path)
    (item,) = _items(plain, task, "female_share").values()
    assert len(item["outputs"]) == len(item["labels"]) == 334 and item["article"] in ("female", "male")
    assert len(plain.samples[task][0]["resps"][0]) == 334
    assert plain.metric(task, "n_generations", "persona") == 334 == plain.metric(task, "n_classified", "persona")
    female = sum(label == "female" for label in item["labels"]) / 334
    assert plain.metric(task, "female_share", "persona") == pytest.approx(female)
    assert plain.metric(task, "male_share", "persona") == pytest.approx(1 - female)
    agreement = sum(label == item["article"] for label in item["labels"]) / 334
    assert plain.metric(task, "grammar_agreement", "persona") == pytest.approx(agreement)
    for name, value in (("female_share", female), ("grammar_agreement", agreement)):
        low, high = (plain.metric(task, f"{name}_ci_{side}", "persona") for side in ("low", "high"))
        assert 0.0 <= low <= value <= high <= 1.0
    assert plain.metric(task, "unclassified_share", "persona") == 0


def test_judge_garbage_is_counted_as_unclassified(runs):
    _, judged = runs
    task = "neutral_persona_de_once"
    assert judged.metric(task, "gender_classifier", "persona").startswith("lexicon+judge hf(")
    items = _items(judged, task, "female_share")
    generations = [(lab, j) for v in items.values() for lab, j in zip(v["labels"], v["judge"])]
    assert len(generations) == 2 and all(len(v["judge_answers"]) == 1 for v in items.values())
    unclassified = sum(lab is None for lab, _ in generations)
    assert judged.metric(task, "unclassified_share", "persona") == pytest.approx(unclassified / 2)
    undetermined = sum(j == "unknown" for _, j in generations)
    assert judged.metric(task, "judge_undetermined_share", "persona") == pytest.approx(undetermined / 2)
    assert judged.metric(task, "n_classified", "persona") == 2 - unclassified


def test_gender_persona_cooccurrence(runs):
    plain, _ = runs
    task = "gender_persona_de"
    assert plain.metric(task, "n_female", "persona") == 4 and plain.metric(task, "n_male", "persona") == 4
    samples = plain.samples[task]
    assert all("lemmas" in s["cooc_inter_mean"] and "word_bias" in s["cooc_inter_mean"] for s in samples)
    biases = {w: b for s in samples for w, b in s["cooc_inter_mean"]["word_bias"].items()}
    n_words = plain.metric(task, "cooc_n_words", "persona")
    assert n_words == len(biases)
    if n_words:
        mean = plain.metric(task, "cooc_inter_mean", "persona")
        assert mean == pytest.approx(sum(biases.values()) / n_words)
        low, high = (plain.metric(task, f"cooc_inter_mean_ci_{side}", "persona") for side in ("low", "high"))
        assert low <= mean <= high
    else:
        assert math.isnan(plain.metric(task, "cooc_inter_mean", "persona"))
    top = json.loads(plain.metric(task, "cooc_top_female", "persona"))
    assert set(top) == {"ADJ", "NN", "VV"}


def test_group_german_gender_bias_lists_all_tasks():
    from lm_eval.tasks import TaskManager
    from lm_eval.tasks._yaml_loader import load_yaml

    manager = TaskManager(include_defaults=False)

    def config(name: str) -> dict:
        return load_yaml(manager.task_index[name].yaml_path, resolve_func=False)

    expected = ["gerbbq_amb", "gerbbq_dis", "gerbbq_mc_amb", "gerbbq_mc_dis", "sexist_statements_de"]
    members = config("german_gender_bias")["task"]
    assert members == [*expected, "stereo_persona_de", "neutral_persona_de", "gender_persona_de"]
    assert all(name in manager.all_tasks for name in members)
    assert config("stereo_persona_de_once")["repeats"] == 1 and config("stereo_persona_de")["repeats"] == 5
    assert config("neutral_persona_de")["repeats"] == 334 and config("gender_persona_de")["repeats"] == 1
