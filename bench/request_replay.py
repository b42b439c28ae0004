"""A run's DynamoDB requests, recorded as the embedded AWS received them, replayed on a fresh embedded AWS.

usage: python bench/e2e_bench.py --repeat 1 --dags bench_fanout200 --record bench/results/fanout.jsonl
       python bench/request_replay.py bench/results/fanout.jsonl [--calls]

The end-to-end benchmark's time and CPU a task move with this shared machine's load by 20-40% from one minute to
the next, more than most changes to the embedded AWS are worth. A replay measures such a change on a fixed
workload: the same requests, in the order they arrived, against moto in this process (through the embedded AWS's
own WSGI app, without HTTP), one after another. It prints each operation's count, its answers by status and the
CPU a request took; with ``--calls``, also the Python function calls the whole replay made (counted by the
profiler, which slows it: a count does not move with the load, a time does). Two trees compare on one recording.

The recording (``Recorder``, wrapped around the embedded AWS like the request census) keeps each DynamoDB
request's operation and body, in arrival order, one JSON object a line. Replayed in that order, requests that
raced in the run (two schedulers claiming one instance) land as the recording's order has them, not necessarily
as they landed then: the replay is a workload as realistic as the run's, not a re-enactment of it.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import io
import json
import pstats
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "shared")]

from updraft.local.concurrent_moto import DYNAMODB_TARGET  # noqa: E402

WsgiApp = Callable[[dict[str, Any], Any], Iterable[bytes]]
# Any SigV4 scope in the region: moto reads the region from it and checks no signature.
AUTHORIZATION = ("AWS4-HMAC-SHA256 Credential=replay/20260101/{region}/dynamodb/aws4_request, "
                 "SignedHeaders=host, Signature=0")


class Recorder:
    """Keeps the DynamoDB requests an embedded AWS's app receives (``EmbeddedAwsServer.wrap``), in arrival order;
    safe under the threaded server. Other services' requests pass untouched."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: list[dict[str, str]] = []

    def wrap(self, app: WsgiApp) -> WsgiApp:
        def recorded(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
            target = environ.get("HTTP_X_AMZ_TARGET", "")
            if target.startswith(DYNAMODB_TARGET):
                body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
                environ["wsgi.input"] = io.BytesIO(body)
                with self._lock:
                    self.requests.append({"operation": target[len(DYNAMODB_TARGET):], "body": body.decode()})
            return app(environ, start_response)

        return recorded

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            path.write_text("".join(json.dumps(request) + "\n" for request in self.requests))


def tables_of(requests: list[dict[str, str]]) -> list[str]:
    """The tables the requests name (a batch request's as its keys), in order of first mention."""
    names: dict[str, None] = {}
    for request in requests:
        body = json.loads(request["body"])
        if "TableName" in body:
            names[body["TableName"]] = None
        names.update(dict.fromkeys(body.get("RequestItems", {})))
        for item in body.get("TransactItems", ()):
            names[next(iter(item.values()))["TableName"]] = None
    return list(names)


def replay(requests: list[dict[str, str]], *, region: str = "us-east-1",
           profile: cProfile.Profile | None = None) -> dict[str, Any]:
    """Each request, in order, against a fresh embedded AWS holding Updraft's tables (those the requests name):
    per operation, its count, its answers by HTTP status and the CPU it took (``thread_time``, seconds).
    ``profile``: enabled around the requests alone (not the server's start nor the tables' creation)."""
    import boto3
    from werkzeug.test import Client

    from updraft.local.moto_server import EmbeddedAwsServer
    from updraft.store.config import StoreConfig
    from updraft.store.tables import create_table

    with EmbeddedAwsServer() as server:
        server.reset()
        client = boto3.client("dynamodb", region_name=region, endpoint_url=server.url, aws_access_key_id="replay",
                              aws_secret_access_key="replay")
        for table in tables_of(requests):
            create_table(StoreConfig(table_name=table, region=region, host=server.url), client=client)
        app = Client(server.app)
        headers = {"Authorization": AUTHORIZATION.format(region=region),
                   "Content-Type": "application/x-amz-json-1.0"}
        count: collections.Counter[str] = collections.Counter()
        status: collections.Counter[str] = collections.Counter()
        cpu: collections.Counter[str] = collections.Counter()
        if profile is not None:
            profile.enable()
        for request in requests:
            operation = request["operation"]
            began = time.thread_time()
            answer = app.post("/", data=request["body"].encode(),
                              headers={**headers, "X-Amz-Target": DYNAMODB_TARGET + operation})
            cpu[operation] += time.thread_time() - began
            count[operation] += 1
            status[f"{operation} {answer.status_code}"] += 1
        if profile is not None:
            profile.disable()
        server.reset()
    return {"count": dict(count), "status": dict(status), "cpu_s": dict(cpu)}


def render(result: dict[str, Any], calls: int | None = None) -> str:
    """A markdown table per operation, the most CPU first: count, answers by status, CPU a request."""
    count, cpu = result["count"], result["cpu_s"]
    lines = ["| operation | requests | answers | CPU a request | CPU |", "|---|---|---|---|---|"]
    total_cpu, total = sum(cpu.values()), sum(count.values())
    lines.append(f"| all | {total} | | {total_cpu * 1000 / max(total, 1):.2f} ms | {total_cpu * 1000:.0f} ms |")
    for operation in sorted(count, key=lambda op: -cpu[op]):
        answers = ", ".join(f"{key.rsplit(' ', 1)[1]}: {n}" for key, n in sorted(result["status"].items())
                            if key.rsplit(" ", 1)[0] == operation)
        lines.append(f"| {operation} | {count[operation]} | {answers} | "
                     f"{cpu[operation] * 1000 / count[operation]:.2f} ms | {cpu[operation] * 1000:.0f} ms |")
    if calls is not None:
        lines.append(f"\nPython function calls of the whole replay: {calls:,}")
    return "\n".join(lines)


def read(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recording", type=Path)
    parser.add_argument("--calls", action="store_true", help="count the Python function calls (profiled: slower)")
    args = parser.parse_args()
    profile = cProfile.Profile() if args.calls else None
    result = replay(read(args.recording), profile=profile)
    print(render(result, calls=None if profile is None else pstats.Stats(profile).total_calls))  # type: ignore[attr-defined]
    return 0


if __name__ == "__main__":
    sys.exit(main())
