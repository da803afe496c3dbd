"""The test session's one in-process vLLM engine (:mod:`vllm_engine_server`, in the vLLM venv), shared by every test
that runs ``lm_eval --model vllm`` or ``--model vllm-prefix``: the ``vllm_engine`` session fixture (``conftest.py``)
starts it at the first such test and stops it at the end of the session.

Use::

    def test_something(vllm_engine, smollm2, tmp_path):
        run = vllm_engine.run(["--model", "vllm", "--model_args", vllm_engine.model_args, "--tasks", "gest_en",
                               "--limit", "2"], tmp_path)

:meth:`VllmEngine.run` takes ``lm_eval``'s arguments as :func:`lm_eval_runner.run_lm_eval` does and returns its
:class:`~lm_eval_runner.LmEvalRun`: the run is lm_eval's own command line in the server, whose backend is built as a
fresh ``lm_eval`` builds it, but on the session's engine when the run asks for that engine (:attr:`model_args`, or
the same with a smaller ``max_model_len``, any ``block_size``: see :mod:`vllm_engine_server`); a run that asks for
another engine gets one of its own in the server. The engine is SmolLM2 in float32 with vllm-prefix's block size
(32 on the CPU), prefix caching on; ``--model vllm`` runs skip reading the cache, as lm_eval's scoring does. A run
of stock lm_eval (``plugin=False``: the plugin's hooks not installed) can only come before the session's first run
with the plugin (``conftest.FIRST_ON_THE_ENGINE``). A test of what a fresh process does at its start or exit (an
engine shut down as the interpreter ends) starts ``lm_eval`` itself (:func:`lm_eval_runner.run_lm_eval` with
``launcher=[VLLM_BIN / "lm_eval"]``).

The server's CPU-seconds are counted by :mod:`cpu_report` with the test each run served (``/proc``: the server runs
in a session of its own, its engine core with it).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from lm_eval_runner import LmEvalRun, lm_eval_command, read_outputs
from model_server import end_session, started
from tiers import starting
from vllm_replicas import ENV, MAX_MODEL_LEN, VLLM_BIN

from lm_eval_stereo._autoload import AUTOLOAD_ENV
from lm_eval_stereo.hooks.tasks import ONLY_PLUGIN_TASKS_ENV

#: seconds the engine may take to start (two loaded cores: minutes)
START_TIMEOUT = 900


class VllmEngine:
    """The engine server of one test session (see the module docstring)."""

    def __init__(self, model: Path, folder: Path) -> None:
        self.model, self.folder = model, folder
        #: the engine's ``--model_args``: SmolLM2 in float32, the tier's window, eager (no graph capture on the CPU)
        self.model_args = f"pretrained={model},dtype=float32,max_model_len={MAX_MODEL_LEN},enforce_eager=True"
        self.log = folder / "server.log"
        self.process: subprocess.Popen | None = None
        self.runs = 0
        self.unread = b""

    def start(self) -> None:
        """Start the server and wait for its engine (an AssertionError with the server's log if it cannot start)."""
        starting("a vLLM engine (the session's, tests/vllm_engine.py)")
        env = {**os.environ, **ENV, ONLY_PLUGIN_TASKS_ENV: "1", AUTOLOAD_ENV: "0"}  # the hooks installed on request
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [str(VLLM_BIN / "python"), str(Path(__file__).with_name("vllm_engine_server.py")), self.model_args],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env, cwd=self.folder,
                start_new_session=True,
            )  # fmt: skip
        started(self.process)
        ready = self.answer(START_TIMEOUT)
        if not (ready or {}).get("ready"):
            self.stop()
            raise AssertionError(f"the vLLM engine did not start ({ready}):\n{self.log.read_text()[-5000:]}")

    def answer(self, timeout: float) -> dict | None:
        """The server's next line within ``timeout`` seconds; None if none came or the server ended."""
        import select

        deadline = time.monotonic() + timeout
        while b"\n" not in self.unread:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.process.stdout], [], [], left)[0]:
                return None
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                return None
            self.unread += chunk
        line, self.unread = self.unread.split(b"\n", 1)
        return json.loads(line)

    def run(
        self,
        args: list[str],
        output_dir: Path,
        *,
        env: dict[str, str] | None = None,
        check: bool = True,
        reset_prefix_cache: bool = False,
        plugin: bool = True,
        timeout: float = 900,
    ) -> LmEvalRun:
        """``lm_eval args... --output_path output_dir`` on the session's engine (``env`` added to the tier's
        :data:`~vllm_replicas.ENV`; ``reset_prefix_cache``: the engine's prefix cache emptied first; ``plugin``
        false: stock lm_eval, which only the session's first runs on the engine can be, see
        :mod:`vllm_engine_server`); the run, with ``prompt_tokens``: what its ``vllm-prefix`` backend sent and read
        from the cache."""
        command, full_env = lm_eval_command(
            args, output_dir, launcher=[str(VLLM_BIN / "lm_eval")], env={**ENV, **(env or {})}
        )
        self.runs += 1
        out = output_dir / f"lm_eval.{self.runs}.out"
        err = output_dir / f"lm_eval.{self.runs}.err"
        request = {"argv": command[1:], "cwd": str(output_dir), "env": full_env, "stdout": str(out),
                   "stderr": str(err), "reset_prefix_cache": reset_prefix_cache, "plugin": plugin}  # fmt: skip
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        self.process.stdin.flush()
        ended = self.answer(timeout)
        if ended is None:
            raise AssertionError(f"the vLLM engine server gave no answer:\n{self.log.read_text()[-5000:]}")
        stdout, stderr = (path.read_text(errors="replace") for path in (out, err))
        if check and ended["status"] != 0:
            raise AssertionError(f"{' '.join(command)} failed ({ended['status']}):\n{stdout[-4000:]}\n{stderr[-8000:]}")
        run = LmEvalRun(ended["status"], stdout, stderr, *read_outputs(output_dir), output_dir)
        run.prompt_tokens = ended["prompt_tokens"]
        return run

    def stop(self) -> int | None:
        """End the server (its engine shut down first); its exit status (None if it was not running)."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.stdin.close()
            end_session(self.process, None)
        return self.process.returncode
