"""Requests and tokens per task, from lm_eval's own request builder (``lm-eval-stereo inventory``).

Each task is built by lm_eval (``TaskManager.load`` + ``task.build_all_requests``); the requests are
encoded by lm_eval's ``hf`` model code itself (``HFLM.loglikelihood``: ``_encode_pair``, empty context -> prefix token)
around a stand-in model (one layer, 8 wide) carrying the tokenizer, so no real model is loaded. Counted per task:

- log-likelihood tasks: the input tokens lm_eval's ``hf`` forwards (``(context + continuation)[-(L+1):][:-1]`` per
  request) and those ``hf-prefix`` forwards (the nodes of its prefix-tree rows, :mod:`lm_eval_stereo.models.prefix_tree`,
  packed for a model of ``--hidden-size``);
- generation tasks: the generations (a request with ``repeats: N`` counts N), their prompt tokens and the most new
  tokens they may generate (``max_gen_toks``).

``--tokenizer bpe32k`` trains a byte-level BPE of 32,000 entries on the counted requests' own texts (those of the
documents for tasks that need the tokenizer to build their requests; no download; optimistic for this in-domain
text), any other value is a Hugging Face tokenizer name or folder.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

#: the causal-LM suite (gest_pairs needs the pairs file, see lm_eval_stereo/tasks/gest/README.md)
DEFAULT_TASKS = (
    "stereoset_multi,gest_en,gerbbq_mc,gest_mt,gerbbq,sexist_statements_de,stereo_persona_de,neutral_persona_de,"
    "gender_persona_de,s_jsd_ext,stereotype_leakage"
)
BPE_VOCAB_SIZE = 32_000


@dataclass
class TaskCount:
    """One task's requests and tokens (``hf_tokens``/``prefix_tokens``: log-likelihood; the rest: generation)."""

    task: str
    output_type: str
    documents: int
    requests: int
    hf_tokens: int = 0
    prefix_tokens: int = 0
    prompt_tokens: int = 0
    max_new_tokens: int = 0


def train_bpe_tokenizer(texts: list[str], vocab_size: int = BPE_VOCAB_SIZE) -> Any:
    """A byte-level BPE (GPT-2 style) ``PreTrainedTokenizerFast`` trained on ``texts``, BOS = EOS = ``<|endoftext|>``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    eos = "<|endoftext|>"
    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[eos],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    raw.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=raw, bos_token=eos, eos_token=eos, unk_token=eos)


def leaf_tasks(names: list[str], metadata: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(name, task) for every task under ``names`` (groups expanded to their leaf tasks), built by lm_eval's
    ``TaskManager.load``."""
    from lm_eval.tasks import TaskManager

    yield from TaskManager(metadata=metadata).load(names)["tasks"].items()


def stand_in_lm(tokenizer: Any, max_length: int) -> Any:
    """lm_eval's ``HFLM`` around a one-layer random model with ``tokenizer``, recording the encoded requests."""
    from lm_eval.models.huggingface import HFLM
    from transformers import GPT2Config, GPT2LMHeadModel

    class Recorder(HFLM):
        def _loglikelihood_tokens(self, requests, disable_tqdm=False, override_bs=None):
            self.recorded = requests
            return [(0.0, False)] * len(requests)

    config = GPT2Config(vocab_size=len(tokenizer), n_positions=max_length, n_layer=1, n_embd=8, n_head=1)
    return Recorder(pretrained=GPT2LMHeadModel(config), tokenizer=tokenizer, max_length=max_length, batch_size=1)


def count_task(name: str, task: Any, lm: Any, hidden_size: int, limit: float | None) -> TaskCount:
    """Build ``task``'s requests and count them (see the module docstring)."""
    from lm_eval_stereo.models.prefix_tree import pack_rows, truncate

    task.build_all_requests(limit=limit, rank=0, world_size=1)
    instances = task.instances
    count = TaskCount(name, task.OUTPUT_TYPE, len({i.doc_id for i in instances}), len(instances))
    if task.OUTPUT_TYPE in ("loglikelihood", "multiple_choice"):
        lm.loglikelihood(instances, disable_tqdm=True)
        requests = truncate([(ctx, cont) for _, ctx, cont in lm.recorded], lm.max_length)
        count.hf_tokens = sum(len(r.inputs) for r in requests)
        rows = pack_rows(requests, lm.max_length, attention_cost=1 / hidden_size)
        count.prefix_tokens = sum(len(row) for row in rows)
    elif task.OUTPUT_TYPE == "generate_until":
        count.requests = 0
        for instance in instances:
            context, gen_kwargs = instance.args
            repeats = instance.repeats or 1
            count.requests += repeats
            count.prompt_tokens += repeats * len(lm.tok_encode(context))
            count.max_new_tokens += repeats * int(gen_kwargs.get("max_gen_toks", lm.max_gen_toks))
    return count


def request_texts(task: Any, limit: float | None) -> set[str]:
    """The texts of ``task``'s requests; for a task that needs the model's tokenizer to build them (S_JSD causal:
    one request per token), the texts of its documents."""
    try:
        task.build_all_requests(limit=limit, rank=0, world_size=1)
    except ValueError:
        docs = list(task.eval_docs)[: int(limit * len(task.eval_docs)) if limit and limit < 1 else limit]
        return {value for doc in docs for value in doc.values() if isinstance(value, str)}
    return {a for instance in task.instances for a in instance.args if isinstance(a, str)}


def inventory(
    tasks: list[str], tokenizer: str, *, max_length: int, hidden_size: int, limit: float | None, metadata: dict
) -> list[TaskCount]:
    """Counts for every task under ``tasks``; ``tokenizer`` an HF tokenizer name or folder, or ``"bpe32k"``.

    The tokenizer reaches the tasks as the ``tokenizer`` model argument, as ``--model_args tokenizer=...`` would (tasks
    whose requests depend on the model's tokenizer, e.g. StereoSet's first-token split, build them with it).
    """
    import tempfile

    from transformers import AutoTokenizer

    from lm_eval_stereo.core import model_arguments

    with tempfile.TemporaryDirectory() as folder:
        if tokenizer == "bpe32k":
            texts: set[str] = set()
            for _, task in leaf_tasks(tasks, metadata):
                texts.update(request_texts(task, limit))
            train_bpe_tokenizer(sorted(texts)).save_pretrained(folder)
            tokenizer = folder
        # what the caller hands the tasks besides their options (e.g. pretrained=) is model arguments, as lm_eval passes
        with model_arguments.passing({**metadata, "tokenizer": tokenizer}):
            built = sorted(leaf_tasks(tasks, {**metadata, "tokenizer": tokenizer}), key=lambda item: item[0])
        lm = stand_in_lm(AutoTokenizer.from_pretrained(tokenizer), max_length)
        return [count_task(name, task, lm, hidden_size, limit) for name, task in built]


def markdown(counts: list[TaskCount]) -> str:
    """The inventory as a Markdown table with a total row."""
    lines = [
        "| task | type | documents | requests | hf tokens | hf-prefix tokens | saved | prompt tokens | max new tokens |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    total = TaskCount("**total**", "", 0, 0)
    for c in [*counts, total]:
        if c is not total:
            for key in ("documents", "requests", "hf_tokens", "prefix_tokens", "prompt_tokens", "max_new_tokens"):
                setattr(total, key, getattr(total, key) + getattr(c, key))
        saved = f"{1 - c.prefix_tokens / c.hf_tokens:.0%}" if c.hf_tokens else ""
        numbers = [c.documents, c.requests, c.hf_tokens, c.prefix_tokens]
        cells = [f"{n:,}" if n else "" for n in numbers] + [saved]
        cells += [f"{n:,}" if n else "" for n in (c.prompt_tokens, c.max_new_tokens)]
        lines.append(f"| {c.task} | {c.output_type} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def check_tokenizer(name: str) -> str | None:
    """What is wrong with ``--tokenizer name`` (None when it loads): a missing or non-tokenizer folder, or a name
    that is neither a folder nor a Hugging Face tokenizer (offline: one in the local cache)."""
    from pathlib import Path

    path = Path(name)
    if name == "bpe32k":
        return None
    if path.is_file():
        return f"{name}: a file, not a tokenizer folder"
    local = path.is_dir() or name.startswith((".", "/")) or name.count("/") > 1
    if local and not path.is_dir():
        return f"{name}: no such folder"
    from transformers import AutoTokenizer

    try:
        AutoTokenizer.from_pretrained(str(path) if local else name)
    except Exception as exc:  # noqa: BLE001 - transformers raises OSError, ValueError, KeyError, ... for a bad source
        if local:
            return f"{name}: not a tokenizer folder (no tokenizer files in it that transformers can load)"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"{name}: no such folder, and not a Hugging Face tokenizer that can be loaded here ({first})"
    return None


def unknown_tasks(names: list[str]) -> list[str]:
    """The names of ``names`` that lm_eval (with the plugin's tasks) does not know."""
    from pathlib import Path

    from lm_eval.tasks import TaskManager

    index = TaskManager().task_index
    return [name for name in names if name not in index and not Path(name).is_file()]


def main(argv: list[str]) -> int:
    from lm_eval_stereo.cli_args import Parser, json_object, limit, positive_int

    parser = Parser(prog="lm-eval-stereo inventory", description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", required=True, help='an HF tokenizer name/folder, or "bpe32k"')
    parser.add_argument("--tasks", default=DEFAULT_TASKS, help=f"comma-separated (default: {DEFAULT_TASKS})")
    parser.add_argument("--limit", type=limit, default=None, help="as lm_eval's --limit")
    parser.add_argument("--max_length", type=positive_int, default=4096, help="the model's window (default 4096)")
    parser.add_argument("--hidden_size", type=positive_int, default=4096, help="for hf-prefix's packing (default 4096)")
    parser.add_argument("--metadata", type=json_object, default={}, help="as lm_eval's --metadata (JSON)")
    parser.add_argument("--json", action="store_true", help="JSON instead of a Markdown table")
    args = parser.parse_args(argv)
    if problem := check_tokenizer(args.tokenizer):
        parser.fail("--tokenizer", problem)
    tasks = [name.strip() for name in args.tasks.split(",") if name.strip()]
    if not tasks:
        parser.fail("--tasks", "no task named")
    if unknown := unknown_tasks(tasks):
        parser.fail("--tasks", f"unknown task(s) {', '.join(unknown)} (lm-eval-stereo ls tasks lists them)")
    counts = inventory(
        tasks,
        args.tokenizer,
        max_length=args.max_length,
        hidden_size=args.hidden_size,
        limit=int(args.limit) if args.limit and args.limit >= 1 else args.limit,
        metadata=args.metadata,
    )
    print(json.dumps([asdict(c) for c in counts], indent=2) if args.json else markdown(counts))
    return 0
