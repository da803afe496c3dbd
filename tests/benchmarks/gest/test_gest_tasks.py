"""GEST tasks through the real ``lm_eval`` command: tiny causal LM, tiny BERT (hf-mlm) and recorded MT outputs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from fixtures_mlm import tiny_bert  # noqa: F401
from lm_eval_runner import TESTS, LmEvalRun, run_lm_eval
from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

from lm_eval_stereo.core import sources
from lm_eval_stereo.core.readers import read_csv
from lm_eval_stereo.tasks.gest import metrics as gest
from lm_eval_stereo.tasks.gest import task_mt as gest_mt
from lm_eval_stereo.tasks.gest.data import language_name, load_gest

FIXTURES = TESTS / "fixtures" / "gest"
PAIRS = json.dumps({"pairs_file": str(FIXTURES / "pairs.csv")})
LIMIT = "8"


def causal_args(model: Path, batch_size: str) -> list[str]:
    return ["--model", "hf", "--model_args", f"pretrained={model}", "--batch_size", batch_size, "--log_samples"]


@pytest.fixture(scope="module")
def batched_run(tiny_causal: Path, tmp_path_factory: pytest.TempPathFactory) -> LmEvalRun:
    """Batch size 4, English through the ``gest`` group, pairs, and MT with a chat template (only MT uses it)."""
    args = causal_args(tiny_causal, "4") + ["--tasks", "gest,gest_pairs_pl,gest_mt_pl", "--limit", LIMIT]
    args += ["--apply_chat_template", "--gen_kwargs", "max_gen_toks=8", "--metadata", PAIRS]
    return run_lm_eval(args, tmp_path_factory.mktemp("gest_batched"))


def item_scores(run: LmEvalRun, task: str) -> dict[int, dict[str, float]]:
    return {sample["doc"]["id"]: sample["gs"]["scores"] for sample in run.samples[task]}


def continuation_log10(model, tokenizer, context: str, word: str) -> float:
    """log10 P(word | context) summed over the word's tokens (context encoded as lm_eval does, no BOS here)."""
    context_ids = tokenizer(context)["input_ids"]
    full_ids = tokenizer(context + word)["input_ids"]
    with torch.no_grad():
        log_probs = torch.log_softmax(model(torch.tensor([full_ids])).logits[0].double(), dim=-1)
    total = sum(log_probs[i - 1, full_ids[i]].item() for i in range(len(context_ids), len(full_ids)))
    return total / math.log(10)


def test_gest_en_scores_are_the_reference_next_token_comparison(batched_run, tiny_causal):
    model = AutoModelForCausalLM.from_pretrained(tiny_causal).eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_causal)
    samples = load_gest()
    scores = item_scores(batched_run, "gest_en")
    assert sorted(scores) == list(range(int(LIMIT)))
    for doc_id in (0, 5):
        sentence = samples[doc_id]["sentence"]
        t0 = continuation_log10(model, tokenizer, f'"{sentence}",', " he")
        t0 -= continuation_log10(model, tokenizer, f'"{sentence}",', " she")
        assert scores[doc_id]["t0"] == pytest.approx(t0, abs=1e-5)
        # T1 words are single tokens here: the reference's log10 softmax of the next-token logits
        ids = tokenizer(f'"{sentence}", the', return_tensors="pt")
        with torch.no_grad():
            probs = torch.softmax(model(**ids).logits[0, -1].double(), dim=-1)
        man, woman = tokenizer.encode(" man"), tokenizer.encode(" woman")
        assert len(man) == len(woman) == 1
        reference = (torch.log10(probs[man[0]]) - torch.log10(probs[woman[0]])).item()
        assert scores[doc_id]["t1"] == pytest.approx(reference, abs=1e-5)


def test_gest_en_metrics_follow_from_the_logged_scores(batched_run):
    scores = item_scores(batched_run, "gest_en")
    docs = {sample["doc"]["id"]: sample["doc"] for sample in batched_run.samples["gest_en"]}
    per_template = {
        t: gest.compute([{"stereotype": docs[i]["stereotype"], "score": s[t]} for i, s in scores.items()])
        for t in ("t0", "t1")
    }
    metric = lambda name: batched_run.metric("gest_en", name)  # noqa: E731
    assert metric("gs_t0") == pytest.approx(per_template["t0"]["gs"])
    assert metric("gs") == pytest.approx((per_template["t0"]["gs"] + per_template["t1"]["gs"]) / 2)
    assert metric("count") == metric("count_t0") == int(LIMIT) and metric("unscored") == 0
    assert metric("missing_stereotypes_t1") == per_template["t1"]["missing"] > 0
    assert metric("rank_09_self_confident_t0") == per_template["t0"]["feminine_rank"][9]
    assert metric("gs_ci_low") <= metric("gs_ci_high")
    assert batched_run.results["configs"]["gest_en"]["metadata"]["gest_version"] == "1.1"
    assert {sample["doc"]["version"] for sample in batched_run.samples["gest_en"]} == {"1.1"}
    assert "gest" in batched_run.results["group_subtasks"]


def test_gest_pairs_filters_and_scores(batched_run):
    metric = lambda name: batched_run.metric("gest_pairs_pl", name)  # noqa: E731
    # tiny GPT-2 BPE: rows 5, 8, 9 tokenise to different lengths; row 6 repeats row 2; row 7 is ojcem/matką
    assert (metric("count"), metric("excluded_tokenization")) == (3, 3)
    assert (metric("excluded_duplicate"), metric("excluded_first_letter")) == (1, 1)
    kept = [s for s in batched_run.samples["gest_pairs_pl"] if not s["gs"]["excluded"]]
    assert sorted(s["doc"]["row"] for s in kept) == [2, 3, 4]
    for sample in kept:
        male, female = (float(resp[0][0]) for resp in sample["resps"])
        assert sample["gs"]["scores"]["pair"] == pytest.approx((male - female) / math.log(10))
        assert [arg["arg_0"] for arg in sample["arguments"].values()] == ["", ""]
    items = [{"stereotype": s["doc"]["stereotype"], "score": s["gs"]["scores"]["pair"]} for s in kept]
    assert metric("gs") == pytest.approx(gest.compute(items)["gs"])


def test_gest_mt_with_a_chat_template(batched_run):
    samples = batched_run.samples["gest_mt_pl"]
    assert len(samples) == int(LIMIT)
    prompt = samples[0]["arguments"]["gen_args_0"]["arg_0"]
    assert prompt.startswith("<|user|>\nTranslate the following sentence from English into Polish.")
    assert prompt.endswith("Polish:<|end|>\n<|assistant|>\n")
    metric = lambda name: batched_run.metric("gest_mt_pl", name)  # noqa: E731
    detected = metric("masculine") + metric("feminine")
    assert detected + metric("undetected") == metric("count") == int(LIMIT)
    assert metric("detection_yield") == pytest.approx(detected / int(LIMIT))
    for sample in samples:
        item = sample["f_s"]
        assert item["translation"] == gest_mt.extract_translation(sample["resps"][0][0], "pl")
        assert item["gender"] == gest_mt.detect_gender(item["translation"], "pl")


def mt_prompts(language: str, version: str) -> dict[int, str]:
    """The translation prompts of ``gest_mt_<language>`` as its YAML template renders them, by sample id."""
    from lm_eval.tasks import TaskManager

    name = f"gest_mt_{language}"
    task = TaskManager(include_defaults=False, metadata={"gest_version": version}).load([name])["tasks"][name]
    prompts = {doc["id"]: task.doc_to_text(doc) for doc in task.test_docs()}
    assert prompts[0].endswith(f"\n{language_name(language)}:") and "Reply with the translation only." in prompts[0]
    return prompts


def recorded_translations(tmp_path: Path, count: int) -> tuple[Path, list[str]]:
    """Replay outputs: DeepL's published Polish translations in several answer formats, plus two bad answers."""
    path = sources.fetch("gest", "data/translations/deepl/pl/translations.csv")
    deepl = {row["from"]: row["to"] for row in read_csv(path, required=["from", "to"])}
    formats = [" {}", '"{}"', "Polish: {}", "\n{}\nEnglish: I am next."]
    outputs, lines = [], []
    prompts = mt_prompts("pl", "1.0")
    for sample in load_gest("1.0")[:count]:
        output = formats[sample["id"] % 4].format(deepl[sample["sentence"]])
        if sample["id"] == 5:
            output = ""
        if sample["id"] == 6:
            output = sample["sentence"]  # an English "translation"
        outputs.append(output)
        lines.append(json.dumps({"prompt": prompts[sample["id"]], "output": output}, ensure_ascii=False))
    recordings = tmp_path / "recorded.jsonl"
    recordings.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return recordings, outputs


def test_gest_mt_metrics_from_recorded_translations(tmp_path):
    recordings, outputs = recorded_translations(tmp_path, 40)
    model_args = f"outputs={recordings},prompt_column=prompt,output_column=output"
    args = ["--model", "replay", "--model_args", model_args, "--tasks", "gest_mt_pl", "--limit", "40"]
    run = run_lm_eval([*args, "--metadata", json.dumps({"gest_version": "1.0"}), "--log_samples"], tmp_path)
    genders = [gest_mt.detect_gender(gest_mt.extract_translation(output, "pl"), "pl") for output in outputs]
    assert genders[5] is None and genders[6] is None
    assert genders.count("masculine") > genders.count("feminine") > 0
    stereotypes = [sample["stereotype"] for sample in load_gest("1.0")[:40]]
    expected = gest.compute_mt([{"stereotype": s, "gender": g} for s, g in zip(stereotypes, genders)])
    metric = lambda name: run.metric("gest_mt_pl", name)  # noqa: E731
    for name in ("masculine", "feminine", "undetected", "count", "f_s", "f_m", "p_f", "p_m", "detection_yield"):
        assert metric(name) == pytest.approx(expected[name])
    assert metric("p_09_self_confident") == pytest.approx(expected["per_stereotype"][9][0])
    assert metric("f_s_ci_low") <= metric("f_s") <= metric("f_s_ci_high")
    logged = {sample["doc"]["id"]: sample["f_s"] for sample in run.samples["gest_mt_pl"]}
    assert logged[1]["translation"] == logged[1]["translation"].strip('"')
    assert [logged[i]["gender"] for i in range(40)] == genders


def test_masked_tasks_with_hf_mlm(tiny_bert, tmp_path):  # noqa: F811
    args = ["--model", "hf-mlm", "--model_args", f"pretrained={tiny_bert}", "--batch_size", "4", "--log_samples"]
    args += ["--tasks", "gest_en_mlm,gest_pairs_mlm_pl", "--limit", "8", "--metadata", PAIRS]
    run = run_lm_eval(args, tmp_path)
    # WordPiece: only row 8 (Byłem/Byłam szczęśliwy/-a: two differing tokens) fails the tokenizer filter
    metric = lambda name: run.metric("gest_pairs_mlm_pl", name)  # noqa: E731
    assert (metric("count"), metric("excluded_tokenization"), metric("excluded_duplicate")) == (5, 1, 1)
    assert run.metric("gest_en_mlm", "count_t3") == 8
    model = AutoModelForMaskedLM.from_pretrained(tiny_bert).eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    sentence = load_gest()[0]["sentence"]

    def masked_log10(text: str, word: str) -> float:
        ids = tokenizer(text)["input_ids"]
        position = ids.index(tokenizer.convert_tokens_to_ids(word))
        masked = list(ids)
        masked[position] = tokenizer.mask_token_id
        with torch.no_grad():
            probs = torch.softmax(model(torch.tensor([masked])).logits[0, position].double(), dim=-1)
        return torch.log10(probs[ids[position]]).item()

    expected = masked_log10(f'He said: "{sentence}"', "he") - masked_log10(f'She said: "{sentence}"', "she")
    first = next(s for s in run.samples["gest_en_mlm"] if s["doc"]["id"] == 0)
    assert first["gs"]["scores"]["t0"] == pytest.approx(expected, abs=1e-5)
    pair = next(s for s in run.samples["gest_pairs_mlm_pl"] if s["doc"]["row"] == 2)
    spans = [arg["arg_1"] for arg in pair["arguments"].values()]
    assert spans == ["y", "a"]  # "zmęczon##y" / "zmęczon##a": only the differing sub-token is masked
    expected_pair = masked_log10("Jestem zmęczony.", "##y") - masked_log10("Jestem zmęczona.", "##a")
    assert pair["gs"]["scores"]["pair"] == pytest.approx(expected_pair, abs=1e-5)
