"""Masked-LM task scoring of ``hf-mlm`` against a reference-style loop, with and without duplicate removal
(``make bench``).

The paths ``stereoset_multi_mlm`` and ``gest_en_mlm`` use: StereoSet intrasentence ``masked_fill`` (the reference's
re-tokenised decoded prefix + mask), StereoSet intersentence ``next_sentence`` (the NSP head) and GEST ``masked_span``
(the gendered word masked in its male and its female version). One seeded random bert-base-like ``BertForPreTraining``
(WordPiece vocab ~30k, width 768, 2 layers), the same documents on every side (``--limit`` as a fraction of every
task, so the tasks keep the suite's proportions):

- reference loop: what the reference code does, one input at a time (batch size 1): StereoSet
  ``discriminative_inference`` (the MLM head and a full-vocabulary softmax at every position; the NSP model for pairs),
  GEST ``_inference.ipynb`` (the positions where the male and female versions differ masked, full log-softmax), then the
  reference's counts (SS, LMS) and GEST's g_s. Its own data reading (the task's converted rows) is timed with it;
- ``hf-mlm``: ``lm_eval.simple_evaluate`` end to end (task building, dataset conversion, request building, scoring,
  aggregation with the tasks' metrics, ``log_samples``), with its duplicate removal (identical masked inputs computed
  once) and without it (a subclass giving every masked copy its own input), the same batch size.

Model loading is excluded on every side. Every figure is the median of ``REPETITIONS`` runs after one warm-up run, the
three sides interleaved in each repetition so that machine load hits them alike; min and max are shown. Per-candidate
and per-template scores of both hf-mlm sides are compared with the reference loop's.
"""

from __future__ import annotations

import math
import os
import statistics
import tempfile
import time
from pathlib import Path

import torch

from bench.timing import REPETITIONS, cell, spread
from lm_eval_stereo.local_models.tiny import build_bert
from lm_eval_stereo.models.masked_lm import HFMaskedLM, MaskedCopy

TASKS = ["stereoset_multi_mlm", "gest_en_mlm"]
BATCH_SIZE = 64
#: agreement with the reference loop (absolute, on probabilities and log10-probability differences)
TOLERANCE = 1e-5
REQUEST_TYPES = ("masked_fill", "next_sentence", "masked_span")


class AllCopiesMaskedLM(HFMaskedLM):
    """``hf-mlm`` without duplicate removal: every masked copy is its own model input."""

    @staticmethod
    def _model_inputs(copies: list[MaskedCopy]) -> list[tuple[tuple[int, ...], list[MaskedCopy]]]:
        return [(copy.tokens, [copy]) for copy in copies]


class ForwardCounter:
    """Forward pre-hook on an encoder: counts its calls, rows and positions (rows × padded width)."""

    def __init__(self, encoder: torch.nn.Module) -> None:
        self.calls = self.rows = self.positions = 0
        encoder.register_forward_pre_hook(self, with_kwargs=True)

    def reset(self) -> None:
        self.calls = self.rows = self.positions = 0

    def __call__(self, module, args, kwargs) -> None:
        ids = kwargs.get("input_ids", args[0] if args else None)
        self.calls += 1
        self.rows += int(ids.shape[0])
        self.positions += int(ids.numel())


def timed_scoring(lm: HFMaskedLM, seconds: list[float]) -> None:
    """Wrap ``lm``'s request methods: ``seconds[0]`` adds up their time (reset it before each run)."""
    for name in REQUEST_TYPES:
        method = getattr(lm, name)

        def wrapper(requests, disable_tqdm=False, _method=method):
            start = time.perf_counter()
            out = _method(requests, disable_tqdm=disable_tqdm)
            seconds[0] += time.perf_counter() - start
            return out

        setattr(lm, name, wrapper)


# ---------------------------------------------------------------- the reference loop (one input at a time)


@torch.no_grad()
def reference_intrasentence(model, tokenizer, context: str, word: str) -> float:
    """Mean probability of the word's sub-tokens, each at the first mask of the context with every BLANK replaced by
    the decoded earlier sub-tokens + mask (batch size 1, softmax over the vocabulary at every position)."""
    pieces = tokenizer.encode(word, add_special_tokens=False)
    probs = []
    for i, piece in enumerate(pieces):
        text = context.replace("BLANK", tokenizer.decode(pieces[:i]) + tokenizer.mask_token)
        encoded = tokenizer(text, return_tensors="pt")
        logits = model(input_ids=encoded["input_ids"], attention_mask=encoded["attention_mask"]).prediction_logits
        at_masks = logits.softmax(dim=-1)[encoded["input_ids"] == tokenizer.mask_token_id]
        probs.append(at_masks[0, piece].item())
    return sum(probs) / len(probs)


@torch.no_grad()
def reference_next_sentence(model, tokenizer, context: str, candidate: str) -> float:
    """P(IsNext): the encoder's pooled output through the NSP head, softmax (the reference's NSP model)."""
    encoded = tokenizer(context, candidate, return_tensors="pt", return_token_type_ids=True)
    pooled = model.bert(**encoded).pooler_output
    return float(torch.softmax(model.cls.seq_relationship(pooled), dim=-1)[0, 0].float())


@torch.no_grad()
def reference_gest(model, tokenizer, male_text: str, female_text: str) -> float:
    """Mean log10 P(male tokens) in the male version − the same in the female version, the differing positions
    masked."""
    versions = [tokenizer.encode(male_text), tokenizer.encode(female_text)]
    positions = [i for i, (a, b) in enumerate(zip(*versions, strict=True)) if a != b]
    means = []
    for ids in versions:
        masked = torch.tensor([ids])
        masked[0, positions] = tokenizer.mask_token_id
        log_probs = model(input_ids=masked).prediction_logits.log_softmax(dim=-1)[0]
        means.append(sum(log_probs[p, ids[p]].item() for p in positions) / len(positions) / math.log(10))
    return means[0] - means[1]


def reference_run(model, tokenizer, selected: dict[str, list[int]]) -> dict[str, dict]:
    """Score the selected documents of every task as the reference does; per task its scores and headline figures."""
    from lm_eval_stereo.tasks.gest.data import load_gest
    from lm_eval_stereo.tasks.gest.task_mlm import MASKED_TEMPLATES
    from lm_eval_stereo.tasks.stereoset_multi.data import load_rows

    out: dict[str, dict] = {}
    for task, doc_ids in selected.items():
        if task == "gest_en_mlm":
            rows = load_gest()
            scores = {}
            for doc_id in doc_ids:
                sentence = rows[doc_id]["sentence"]
                for template in MASKED_TEMPLATES:
                    left, right = template.parts(sentence)
                    male, female = left + template.male + right, left + template.female + right
                    scores[(doc_id, template.name)] = reference_gest(model, tokenizer, male, female)
            out[task] = {"scores": scores, "g_s": gest_ratio(rows, scores)}
            continue
        rows = load_rows(task.rsplit("_", 1)[1])
        scores = {}
        for doc_id in doc_ids:
            row = rows[doc_id]
            for c in (1, 2, 3):
                if row["test"] == "intrasentence":
                    score = reference_intrasentence(model, tokenizer, row["context"], row[f"c{c}_word"])
                else:
                    score = reference_next_sentence(model, tokenizer, row["context"], row[f"c{c}_sentence"])
                scores[(doc_id, c)] = score
        out[task] = {"scores": scores, **stereoset_counts(rows, scores)}
    return out


def stereoset_counts(rows: list[dict], scores: dict[tuple[int, int], float]) -> dict[str, float]:
    """The reference ``evaluation.py`` counts: SS = 100·pro/N, LMS = 100·related/(2N) (strict >)."""
    pro = related = n = 0
    for doc_id in {d for d, _ in scores}:
        by_label = {rows[doc_id][f"c{c}_gold_label"]: scores[(doc_id, c)] for c in (1, 2, 3)}
        stereotype, anti, unrelated = (by_label[k] for k in ("stereotype", "anti-stereotype", "unrelated"))
        pro += stereotype > anti
        related += (stereotype > unrelated) + (anti > unrelated)
        n += 1
    return {"ss": 100 * pro / n, "lms": 100 * related / (2 * n)}


def gest_ratio(rows: list[dict], scores: dict[tuple[int, str], float]) -> float:
    """g_s of template t0: geometric mean of exp(mean score) over male stereotypes / the same over female ones."""
    by_stereotype: dict[int, list[float]] = {}
    for (doc_id, name), score in scores.items():
        if name == "t0":
            by_stereotype.setdefault(rows[doc_id]["stereotype"], []).append(score)
    means = {s: statistics.fmean(v) for s, v in by_stereotype.items()}
    male = [m for s, m in means.items() if s >= 8]
    female = [m for s, m in means.items() if s <= 7]
    if not male or not female:
        return float("nan")
    return math.exp(statistics.fmean(male) - statistics.fmean(female))


# ---------------------------------------------------------------- hf-mlm side


def logged_scores(results: dict) -> dict[str, dict]:
    """Per task, the logged score of each (doc_id, candidate) or (doc_id, template)."""
    out: dict[str, dict] = {}
    for task, samples in results["samples"].items():
        scores = {}
        for sample in samples:
            if task == "gest_en_mlm":
                scores |= {(sample["doc_id"], name): s for name, s in sample["gs"]["scores"].items()}
            else:
                scores |= {(sample["doc_id"], c): x["score"] for c, x in enumerate(sample["lms"]["candidates"], 1)}
        out[task] = scores
    return out


def max_difference(a: dict[str, dict], b: dict[str, dict]) -> float:
    assert a.keys() == b.keys()
    diffs = []
    for task in a:
        assert a[task].keys() == b[task].keys(), task
        diffs += [abs(a[task][key] - b[task][key]) for key in a[task]]
    return max(diffs)


def run(quick: bool = False) -> dict:
    import lm_eval
    from lm_eval.tasks import TaskManager
    from transformers import AutoTokenizer, BertForPreTraining

    limit = 0.001 if quick else 0.005
    load_before = os.getloadavg()
    sides = ("reference", "hf-mlm", "hf-mlm, no duplicate removal")
    times: dict[str, list[float]] = {side: [] for side in sides}
    scoring: dict[str, list[float]] = {side: [] for side in sides[1:]}
    counts: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        directory = build_bert(Path(tmp) / "bert", seed=0, shape="bench")
        tokenizer = AutoTokenizer.from_pretrained(directory)
        reference_model = BertForPreTraining.from_pretrained(directory).eval()
        models = {
            sides[1]: HFMaskedLM(pretrained=str(directory), device="cpu", batch_size=BATCH_SIZE),
            sides[2]: AllCopiesMaskedLM(pretrained=str(directory), device="cpu", batch_size=BATCH_SIZE),
        }
        params = sum(p.numel() for p in reference_model.parameters())
        counters = {sides[0]: ForwardCounter(reference_model.bert)}
        counters |= {side: ForwardCounter(lm.model.base_model) for side, lm in models.items()}
        seconds = {side: [0.0] for side in models}
        for side, lm in models.items():
            timed_scoring(lm, seconds[side])
        manager = TaskManager(include_defaults=False, metadata={"pretrained": str(directory)})
        outputs: dict[str, dict] = {}
        for repetition in range(REPETITIONS + 1):
            for side, lm in models.items():
                counters[side].reset()
                seconds[side][0] = 0.0
                start = time.perf_counter()
                outputs[side] = lm_eval.simple_evaluate(
                    model=lm, tasks=TASKS, limit=limit, task_manager=manager, bootstrap_iters=0, log_samples=True
                )
                elapsed = time.perf_counter() - start
                if repetition:
                    times[side].append(elapsed)
                    scoring[side].append(seconds[side][0])
            selected = {
                task: sorted({s["doc_id"] for s in samples}) for task, samples in outputs[sides[1]]["samples"].items()
            }
            counters[sides[0]].reset()
            start = time.perf_counter()
            reference = reference_run(reference_model, tokenizer, selected)
            elapsed = time.perf_counter() - start
            if repetition:
                times[sides[0]].append(elapsed)
        counts = {side: {"forwards": c.calls, "rows": c.rows, "positions": c.positions} for side, c in counters.items()}
    load_after = os.getloadavg()
    expected = {task: r["scores"] for task, r in reference.items()}
    got = {side: logged_scores(outputs[side]) for side in models}
    max_diff = {side: max_difference(expected, got[side]) for side in models}
    dedup_vs_all = max_difference(got[sides[1]], got[sides[2]])
    headline = {"ss": "ss,none", "lms": "lms,none", "g_s": "gs_t0,none"}
    metrics_equal = all(
        math.isclose(outputs[side]["results"][task][headline[key]], value, rel_tol=1e-6, abs_tol=1e-9)
        for side in models
        for task, r in reference.items()
        for key, value in r.items()
        if key in headline
    )
    documents = {task: len(ids) for task, ids in selected.items()}
    stats = {side: spread(values) for side, values in times.items()}
    scoring_stats = {side: spread(values) for side, values in scoring.items()}
    speedups = {side: spread([a / b for a, b in zip(times[sides[0]], times[side])]) for side in models}
    dedup_gain = spread([a / b for a, b in zip(times[sides[2]], times[sides[1]])])
    scoring_gain = spread([a / b for a, b in zip(scoring[sides[2]], scoring[sides[1]])])
    same = all(d <= TOLERANCE for d in max_diff.values())
    markdown = (
        "## Masked-LM task scoring (masked_fill, next_sentence, masked_span) — hf-mlm vs reference-style loop\n\n"
        f"Tasks {', '.join(TASKS)} with `--limit {limit}` ({sum(documents.values())} documents: "
        + ", ".join(f"{task} {n}" for task, n in sorted(documents.items()))
        + f"). Random bert-base-like BertForPreTraining (vocab {len(tokenizer):,}, width 768, 2 layers, "
        f"{params / 1e6:.1f}M parameters), float32, CPU, {torch.get_num_threads()} threads, hf-mlm batch size "
        f"{BATCH_SIZE}. Median (min–max) of {REPETITIONS} runs after a warm-up; model loading excluded. Load average "
        f"(1, 5, 15 min) on {os.cpu_count()} cores: {', '.join(f'{x:.1f}' for x in load_before)} before, "
        f"{', '.join(f'{x:.1f}' for x in load_after)} after.\n\n"
        "| what | reference loop | hf-mlm | hf-mlm, no duplicate removal |\n|---|---:|---:|---:|\n"
        f"| end to end (s) | {cell(stats[sides[0]])} | {cell(stats[sides[1]])} | {cell(stats[sides[2]])} |\n"
        f"| of which scoring requests (s) | | {cell(scoring_stats[sides[1]])} | {cell(scoring_stats[sides[2]])} |\n"
        f"| speed-up over the reference loop | | **{cell(speedups[sides[1]])}×** | "
        f"**{cell(speedups[sides[2]])}×** |\n"
        + "| encoder forwards (rows; positions incl. padding) | "
        + " | ".join(f"{counts[s]['forwards']:,} ({counts[s]['rows']:,}; {counts[s]['positions']:,})" for s in sides)
        + " |\n"
        f"| max |Δ| of the per-item scores vs the reference | | {max_diff[sides[1]]:.2g} | {max_diff[sides[2]]:.2g} |\n\n"
        f"Duplicate removal: {counts[sides[2]]['rows'] / counts[sides[1]]['rows']:.2f}× fewer encoder rows, "
        f"end to end {cell(dedup_gain)}× faster, scoring requests {cell(scoring_gain)}× faster; scores with and "
        f"without it differ by at most {dedup_vs_all:.2g}. Same numbers as the reference loop (|Δ| ≤ {TOLERANCE:g}): "
        f"{same}; StereoSet SS and LMS and GEST g_s (t0) equal to the reference's: {metrics_equal}.\n"
    )
    return {
        "markdown": markdown,
        "json": {
            "tasks": TASKS,
            "limit": limit,
            "documents": documents,
            "parameters": params,
            "batch_size": BATCH_SIZE,
            "repetitions": REPETITIONS,
            "load_average_before_after": [load_before, load_after],
            "seconds_end_to_end": stats,
            "seconds_scoring_requests": scoring_stats,
            "speedup_over_reference": speedups,
            "speedup_duplicate_removal": {"end_to_end": dedup_gain, "scoring_requests": scoring_gain},
            "encoder_forwards": counts,
            "max_abs_diff_vs_reference": max_diff,
            "max_abs_diff_with_vs_without_duplicate_removal": dedup_vs_all,
            "same_numbers": same,
            "headline_metrics_equal_reference": metrics_equal,
        },
    }


if __name__ == "__main__":
    print(run(quick=True)["markdown"])
