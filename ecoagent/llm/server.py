"""A minimal OpenAI-compatible server around the embedded backend, for people (and tests) without vLLM.

Serves ``GET /v1/models`` and ``POST /v1/chat/completions`` (with ``seed``, ``stop`` and, for the first
generated token, ``logprobs``/``top_logprobs``). Concurrent requests with the same sampling settings are
gathered into one batch, so the openai backend's thread pool turns into batched CPU generation.

Run it with ``python -m ecoagent.llm.server --port 8000`` and point ``llm_base_url`` at
``http://127.0.0.1:8000/v1``.
"""

from __future__ import annotations

import argparse
import json
import logging
import queue
import threading
import time
import uuid
from concurrent.futures import Future
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ecoagent.llm.base import SamplingParams
from ecoagent.llm.embedded import EmbeddedLLM

log = logging.getLogger(__name__)


@dataclass
class _Job:
    kind: str  # "generate" | "score"
    prompt: str
    params: SamplingParams
    top_logprobs: int
    future: Future[Any] = field(default_factory=Future)

    def group(self) -> tuple[Any, ...]:
        p = self.params
        return (self.kind, p.max_new_tokens, p.temperature, p.top_p, p.repetition_penalty, p.stop)


class BatchingWorker:
    """One thread that owns the model and runs queued jobs in batches of equal settings.

    Args:
        llm: the embedded model.
        max_wait: seconds to wait for more requests before running a batch.
    """

    def __init__(self, llm: EmbeddedLLM, max_wait: float = 0.02) -> None:
        self.llm = llm
        self.max_wait = max_wait
        self.jobs: queue.Queue[_Job] = queue.Queue()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="llm-batcher")
        self._thread.start()

    def submit(self, job: _Job) -> Any:
        self.jobs.put(job)
        return job.future.result()

    def _loop(self) -> None:
        while True:
            batch = [self.jobs.get()]
            deadline = time.monotonic() + self.max_wait
            while len(batch) < self.llm.batch_size:
                try:
                    batch.append(self.jobs.get(timeout=max(0.0, deadline - time.monotonic())))
                except queue.Empty:
                    break
            groups: dict[tuple[Any, ...], list[_Job]] = {}
            for job in batch:
                groups.setdefault(job.group(), []).append(job)
            for jobs in groups.values():
                try:
                    results = self._run(jobs)
                except Exception as exc:  # noqa: BLE001 - reported to each waiting request
                    for job in jobs:
                        job.future.set_exception(exc)
                    continue
                for job, result in zip(jobs, results, strict=True):
                    job.future.set_result(result)

    def _run(self, jobs: list[_Job]) -> list[Any]:
        prompts = [j.prompt for j in jobs]
        if jobs[0].kind == "score":
            return self._first_token(jobs)
        seeds = [j.params.seed for j in jobs]
        texts = self.llm.generate_prompts(prompts, jobs[0].params, seeds)
        return [(t, None) for t in texts]

    def _first_token(self, jobs: list[_Job]) -> list[Any]:
        """Greedy first token with its top logprobs (what a yes/no judge asks for)."""
        import torch

        logprobs = self.llm.next_token_logprobs([j.prompt for j in jobs])
        out = []
        for job, row in zip(jobs, logprobs, strict=True):
            k = max(1, job.top_logprobs)
            values, ids = torch.topk(row, k)
            tokens = [self.llm.tokenizer.decode([int(i)]) for i in ids]
            top = [
                {"token": t, "logprob": float(v), "bytes": list(t.encode())}
                for t, v in zip(tokens, values, strict=True)
            ]
            out.append(
                (
                    tokens[0],
                    [
                        {
                            "token": tokens[0],
                            "logprob": float(values[0]),
                            "bytes": list(tokens[0].encode()),
                            "top_logprobs": top,
                        }
                    ],
                )
            )
        return out


def _handler(llm: EmbeddedLLM, worker: BatchingWorker) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt: str, *args: Any) -> None:
            log.debug("%s " + fmt, self.address_string(), *args)

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str) -> None:
            self._send(
                status, {"error": {"message": message, "type": "invalid_request_error", "code": status}}
            )

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.path.rstrip("/") != "/v1/models":
                return self._error(404, f"no route {self.path}")
            info = llm.info()
            entry = {
                "id": llm.model_id,
                "object": "model",
                "created": 0,
                "owned_by": "ecoagent",
                "root": info.get("model_file") or llm.model_id,
                "revision": info.get("revision"),
                "model_file_sha256": info.get("model_file_sha256"),
            }
            self._send(200, {"object": "list", "data": [entry]})

        def do_POST(self) -> None:  # noqa: N802
            if self.path.rstrip("/") != "/v1/chat/completions":
                return self._error(404, f"no route {self.path}")
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                job = self._job(body)
            except (ValueError, KeyError, TypeError) as exc:
                return self._error(400, str(exc))
            text, logprobs = worker.submit(job)
            choice: dict[str, Any] = {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "length" if job.kind == "score" else "stop",
                "logprobs": {"content": logprobs} if logprobs else None,
            }
            self._send(
                200,
                {
                    "id": f"chatcmpl-{uuid.uuid4().hex}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": llm.model_id,
                    "choices": [choice],
                },
            )

        def _job(self, body: dict[str, Any]) -> _Job:
            if body.get("model") != llm.model_id:
                raise ValueError(
                    f"model {body.get('model')!r} is not served (this server serves {llm.model_id!r})"
                )
            messages = body["messages"]
            if not isinstance(messages, list) or not messages:
                raise ValueError("messages must be a non-empty list")
            turns = [{"role": m["role"], "content": m["content"]} for m in messages]
            if turns[-1]["role"] == "assistant" and not body.get("continue_final_message"):
                raise ValueError("a final assistant message needs continue_final_message=true")
            prompt = llm.template([turns])[0]
            stop = body.get("stop") or ()
            params = SamplingParams(
                max_new_tokens=int(body.get("max_tokens") or body.get("max_completion_tokens") or 64),
                temperature=float(body.get("temperature", 1.0)),
                top_p=float(body.get("top_p", 1.0)),
                repetition_penalty=float(body.get("repetition_penalty", 1.0)),
                seed=int(body.get("seed") or 0),
                stop=(stop,) if isinstance(stop, str) else tuple(stop),
            )
            if body.get("logprobs"):
                if params.max_new_tokens != 1:
                    raise ValueError("this server returns logprobs only with max_tokens=1 (yes/no scoring)")
                return _Job("score", prompt, params, int(body.get("top_logprobs") or 1))
            return _Job("generate", prompt, params, 0)

    return Handler


def serve(llm: EmbeddedLLM, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    """A started server (call ``serve_forever`` on it, or run that in a thread); port 0 picks a free one."""
    server = ThreadingHTTPServer((host, port), _handler(llm, BatchingWorker(llm)))
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="HuggingFaceTB/SmolLM2-135M-Instruct")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    server = serve(EmbeddedLLM(args.model, batch_size=args.batch_size), args.host, args.port)
    log.info("serving %s on http://%s:%d/v1", args.model, *server.server_address[:2])
    server.serve_forever()


if __name__ == "__main__":
    main()
