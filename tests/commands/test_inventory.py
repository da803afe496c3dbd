"""``lm-eval-stereo inventory``: requests and tokens per task from lm_eval's request builder."""

from __future__ import annotations

from pathlib import Path

from lm_eval_stereo.hooks.tasks import ONLY_PLUGIN_TASKS_ENV
from lm_eval_stereo.inventory import inventory, markdown


def test_counts_follow_the_requests(tiny_causal: Path, monkeypatch):
    monkeypatch.setenv(ONLY_PLUGIN_TASKS_ENV, "1")  # the plugin-only index, as every lm_eval run of the suite
    counts = inventory(
        ["gest_en", "gerbbq_mc_amb", "gest_mt_pl", "s_jsd_en"],
        str(tiny_causal),
        max_length=512,
        hidden_size=32,
        limit=3,
        metadata={"pretrained": str(tiny_causal)},
    )
    by_task = {c.task: c for c in counts}
    gest, gerbbq, mt = by_task["gest_en"], by_task["gerbbq_mc_amb"], by_task["gest_mt_pl"]
    assert (gest.documents, gest.requests, gerbbq.requests, mt.requests) == (3, 12, 9, 3)
    # gest_en: each sentence once for its four continuations (he / she, the man / the woman)
    assert 0 < gest.prefix_tokens < gest.hf_tokens / 2 and 0 < gerbbq.prefix_tokens < gerbbq.hf_tokens / 2
    assert mt.max_new_tokens == 3 * 66 and mt.prompt_tokens > 0 and mt.hf_tokens == 0  # max_gen_toks of gest_mt
    # s_jsd_en (causal): one request per shared token, the sentence's prefixes nested in one tree
    s_jsd = by_task["s_jsd_en"]
    assert s_jsd.output_type == "loglikelihood" and s_jsd.documents == 3 and s_jsd.requests > 6
    assert 0 < s_jsd.prefix_tokens < s_jsd.hf_tokens / 2
    table = markdown(counts)
    assert "| gest_en | loglikelihood | 3 | 12 |" in table and "**total**" in table
