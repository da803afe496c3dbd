"""The choice table of ``docs/RUNNING.md`` (``bench/choice_table.py``) and the engine bench's rows
(``bench/engine_rows.py``): the block in RUNNING.md is the one the committed ``bench/results.json`` gives, and the
picks, ratios, "same numbers" and targets are computed from the measured rows as stated (rows built here, no
timing)."""

from __future__ import annotations

import math

import pytest

from bench import choice_table, engine_rows
from bench.run import read_results


def row(name: str, backend: str, ll: float, *, computed: int = 100, cached: int = 0, equal: bool = True,
        worst: float = 1e-5, **labels) -> dict:  # fmt: skip
    """A measured row as :func:`bench.engine_rows.summarise` gives it (median ``ll`` seconds)."""
    seconds = {"median": ll, "min": ll, "max": ll}
    return {"row": name, "backend": backend, **labels, "requests": 150, "seconds": seconds, "ll_seconds": seconds,
            "requests_per_s": seconds, "computed": computed, "cached": cached, "resent": 0, "worst_vs_hf": worst,
            "metrics_equal": equal, "metrics_differing": [] if equal else ["t/acc,none"], "flagged_left_out": 0, "cores": {"client": 0.5, "servers": 0.9}}  # fmt: skip


def test_running_md_holds_the_table_of_the_committed_results():
    text = choice_table.RUNNING.read_text()
    assert text.count(choice_table.BEGIN) == 1 and text.count(choice_table.END) == 1
    block = choice_table.BEGIN + text.split(choice_table.BEGIN, 1)[1].split(choice_table.END, 1)[0] + choice_table.END
    assert block + "\n" == choice_table.table(read_results())
    assert choice_table.main(["--check"]) == 0


def test_the_pick_is_the_fastest_setup_whose_metrics_equal_hf_s():
    rows = [
        row("mbbq_en", "hf", 12.0),
        row("mbbq_en", "hf-prefix", 6.0),
        row("mbbq_en", "vllm", 4.0),
        row("mbbq_en", "vllm-prefix", 2.0, equal=False),  # fastest, but not hf's numbers
        row("demo mix", "hf", 10.0),
        row("demo mix", "hf-prefix", 5.0),
        row("demo mix", "vllm", 5.0),
        row("demo mix", "vllm-prefix", 1.0),
    ]
    best = choice_table.pick(rows, rows)
    # vllm: 3x and 2x (mean 2.5); hf-prefix: 2x and 2x; vllm-prefix is out (its mbbq_en metrics differ)
    assert best["backend"] == "vllm"
    assert choice_table.ratios(best, rows) == {"mbbq_en": 3.0, "demo mix": 2.0}
    assert choice_table.speed(best, rows) == "3.00x (mbbq_en), 2.00x (demo mix); max \\|Δ\\| 1e-05"
    assert choice_table.pick([r for r in rows if r["backend"] == "vllm-prefix"], rows) is None


def test_the_served_rows_name_the_fastest_num_concurrent_and_the_others_against_it():
    served = [row("mbbq_en", "hf", 12.0)]
    served += [row("mbbq_en", "local-completions", ll, num_concurrent=n, replicas=0) for n, ll in ((1, 8.0), (4, 6.0))]
    served += [row("mbbq_en", "local-completions-prefix", ll, cached=40, num_concurrent=n, replicas=0)
               for n, ll in ((1, 6.0), (4, 3.0), (16, 4.0))]  # fmt: skip
    served += [row("mbbq_en", "local-completions-prefix", ll, cached=40, num_concurrent=n, replicas=2)
               for n, ll in ((4, 2.0), (16, 1.5))]  # fmt: skip
    (one,) = choice_table.served_choice(served, 0)
    assert one == (
        "| a served model (`vllm serve`) | log-likelihood | `local-completions-prefix`, the plugin installed beside "
        "vLLM | 4.00x (mbbq_en); max \\|Δ\\| 1e-05 | 4 (at 1: 0.50x, at 16: 0.75x of its speed) |"
    )
    (two,) = choice_table.served_choice(served, 2)
    # 12 / 1.5 = 8x hf; one replica at num_concurrent=16 took 4.0 s: 2.67x
    assert "8.00x (mbbq_en)" in two and "2.67x one replica" in two and two.endswith("| 16 (at 4: 0.75x of its speed) |")
    # the same -prefix rows having read nothing from the replicas' caches: the plain client is picked, and why
    uncached = [dict(r, cached=0) if r.get("replicas") == 2 else r for r in served]
    uncached += [row("mbbq_en", "local-completions", 2.5, num_concurrent=16, replicas=2)]
    (plain,) = choice_table.served_choice(uncached, 2)
    assert plain == (
        "| several replicas | log-likelihood | `local-completions` through HAProxy (`local-completions-prefix` read "
        "nothing from the cache here) | 4.80x (mbbq_en); max \\|Δ\\| 1e-05 | 16 |"
    )
    assert choice_table.served_choice([row("mbbq_en", "hf", 1.0)], 2) == [
        "| several replicas | log-likelihood | not measured | | |"
    ]


def test_gpu_rows_say_they_were_not_measured_until_bench_gpu_has_run_on_one():
    assert choice_table.gpu_choice({}) == [
        f"| one GPU | log-likelihood | {choice_table.NOT_ON_GPU} | | |",
        f"| one GPU | generation | {choice_table.GENERATION_ON_GPU} | | |",
    ]
    gpu_rows = [
        {"dtype": "bfloat16", "row": "mbbq_en", "backend": "hf", "seconds": 10.0},
        {"dtype": "bfloat16", "row": "mbbq_en", "backend": "vllm-prefix", "seconds": 2.5},
        {"dtype": "bfloat16", "row": "mbbq_en", "backend": "hf-prefix", "seconds": 4.0},
        {"dtype": "bfloat16", "row": "mbbq_en", "backend": "local-completions-prefix", "seconds": 1.0, "served": True},
        {"dtype": "float32", "row": "mbbq_en", "backend": "hf", "seconds": 20.0},
    ]
    benchmarks = {"gpu": {"json": {"device": "1 x H100", "rows": gpu_rows}}}
    measured = choice_table.gpu_choice(benchmarks)[0]
    # the served row is not an in-process choice; bfloat16 is read where it was measured
    assert (
        measured == "| one GPU | log-likelihood | `vllm-prefix` (bfloat16, 1 x H100) | 4.00x (mbbq_en) end to end | |"
    )


def test_same_numbers_leave_out_flagged_documents_and_count_a_missing_request_as_infinite():
    reference = {"t|0|0": -1.0, "t|0|1": -2.0, "t|1|0": -3.0, "t|2|0": math.nan}
    values = {"t|0|0": -1.0004, "t|0|1": -2.0, "t|1|0": -9.0, "t|2|0": math.nan}
    assert engine_rows.worst_difference(values, reference, flagged={"t|1"}) == pytest.approx(4e-4)
    assert engine_rows.worst_difference(values, reference, flagged=set()) == pytest.approx(6.0)
    del values["t|0|1"]
    assert engine_rows.worst_difference(values, reference, flagged={"t|1"}) == math.inf
    metrics = {"t": {"acc,none": 0.5, "requests_resent,none": 3.0}, "u": {"acc,none": 0.1}}
    differing = engine_rows.differing_metrics
    assert differing({"t": {"acc,none": 0.5009}, "u": {"acc,none": 0.1}}, metrics, set(), {}) == []
    assert differing({"t": {"acc,none": 0.502}, "u": {"acc,none": 0.1}}, metrics, set(), {}) == ["t/acc,none"]
    assert differing({"t": {"acc,none": 0.9}, "u": {"acc,none": 0.1}}, metrics, {"t|4"}, {}) == []
    # a group holding a task with a flagged document is left out too (its aggregate counts the flagged document)
    grouped = {**metrics, "g": {"acc,none": 0.3}, "h": {"acc,none": 0.3}}
    ours = {"t": {"acc,none": 0.9}, "u": {"acc,none": 0.1}, "g": {"acc,none": 0.7}, "h": {"acc,none": 0.7}}
    assert differing(ours, grouped, {"t|4"}, {"g": ["t", "u"], "h": ["g"]}) == []
    assert differing(ours, grouped, {"t|4"}, {"g": ["t", "u"]}) == ["h/acc,none"]


def test_targets_say_met_or_by_how_much_they_were_missed_and_why():
    rows = [
        row("mbbq_en", "hf-prefix", 5.0, computed=1000),
        row("mbbq_en", "vllm", 6.0, computed=3000),
        row("mbbq_en", "vllm-prefix", 4.0, computed=1800, cached=1200),
        row("mbbq_en", "local-completions", 6.0, computed=3000, num_concurrent=4, replicas=0),
        row("mbbq_en", "local-completions-prefix", 3.0, computed=1800, cached=1200, num_concurrent=16, replicas=0),
        row("mbbq_en", "local-completions-prefix", 2.0, computed=3000, num_concurrent=16, replicas=2),
    ]
    speed, tokens, served, replicas = engine_rows.targets(rows)
    # 6 / 4 = 1.5x against a 2x target: short by 25%; token ceiling 3000 / 1800
    assert speed.startswith("- `vllm-prefix` 1.50x `vllm`") and "NOT met (by 25%)" in speed and "1.67x" in speed
    assert "Why:" in speed
    assert tokens.startswith("- `vllm-prefix` computes 1.80x the tokens") and "NOT met (by 20%)" in tokens
    assert "2.00x `local-completions`" in served and ": met." in served and "Why" not in served
    assert "`local-completions-prefix` 1.50x" in replicas and "read nothing from the replicas' caches" in replicas
    assert "at most 2x one" in replicas


def test_a_setup_whose_worker_ended_is_shown_failed_and_left_out_of_the_targets_and_the_table():
    from bench.bench_engines import failure

    log = "bench worker vllm-prefix ended (1):\nTraceback (most recent call last):\n  File ...\n"
    log += "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.\nUserWarning: leaked semaphore"
    reason = f"run 2 of mbbq_en: {failure(log)} (log: vllm-prefix.log)"
    assert (
        reason
        == "run 2 of mbbq_en: vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. (log: vllm-prefix.log)"
    )
    assert failure("bench worker hf ended (-9):\n") == "bench worker hf ended (-9):"
    rows = [row("mbbq_en", "hf", 12.0), row("mbbq_en", "vllm", 6.0),
            {"row": "mbbq_en", "backend": "vllm-prefix", "failed": reason}]  # fmt: skip
    text = engine_rows.markdown(rows, {}, "mbbq_en (mbbq_en, --limit 50)", 3)
    assert f"| vllm-prefix | FAILED in the {reason} | | | | | | | |" in text
    assert "- `vllm-prefix` against `vllm`: not measured (run `--only vllm`)." in text
    assert choice_table.pick(engine_rows.measured(rows), rows)["backend"] == "vllm"


def test_a_row_summarises_its_runs_medians_tokens_cores_and_every_differing_metric():
    reference = {"values": {"t|0|0": -1.0, "t|0|1": -2.0}, "metrics": {"t": {"acc,none": 0.5}}, "flagged": []}

    def run(seconds: float, ll: float, computed: int, acc: float, first: float) -> dict:
        return {"seconds": seconds, "ll_seconds": ll, "tokens": [computed, 40], "resent": 0, "groups": {},
                "values": {"t|0|0": first, "t|0|1": -2.0}, "metrics": {"t": {"acc,none": acc}},
                "cpu": {"client": seconds / 2, "servers": seconds}}  # fmt: skip

    runs = [run(10.0, 8.0, 100, 0.5, -1.0), run(12.0, 10.0, 120, 0.6, -1.5), run(14.0, 4.0, 110, 0.5, -1.0)]
    row = engine_rows.summarise({"row": "mbbq_en", "backend": "vllm"}, runs, reference)
    assert row["seconds"] == {"median": 12.0, "min": 10.0, "max": 14.0}
    assert row["ll_seconds"]["median"] == 8.0 and row["requests_per_s"] == {"median": 0.25, "min": 0.2, "max": 0.5}
    assert (row["computed"], row["cached"], row["requests"]) == (110, 40, 2)
    assert row["cores"] == {"client": 0.5, "servers": 1.0}
    # the second run's numbers differ: the row says so, whichever run it was
    assert row["worst_vs_hf"] == 0.5 and row["metrics_differing"] == ["t/acc,none"] and not row["metrics_equal"]
