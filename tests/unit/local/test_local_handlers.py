"""Local mode calls the deployed handlers as Lambda would: the API handler one request at a time, as one warm
container serves them (its Powertools resolver keeps the request being served in the resolver itself)."""

from __future__ import annotations

import threading
import time
import types
from concurrent.futures import ThreadPoolExecutor

from updraft.local.handlers import LocalHandlers
from updraft.resources import ResourceNames


def test_the_gateways_threads_take_turns_at_the_api_handler():
    inside, most = [0], [0]
    guard = threading.Lock()

    def handler(event, context):
        with guard:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.01)  # a request being served while others arrive
        with guard:
            inside[0] -= 1
        return {"statusCode": 200, "body": event["path"]}

    # The real handler modules are not needed to see the turns: the API module is a stand-in.
    handlers = LocalHandlers.__new__(LocalHandlers)
    handlers.names = ResourceNames("turns")
    handlers._api = types.SimpleNamespace(handler=handler)
    handlers._api_turn = threading.Lock()
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda i: handlers.api({"path": f"/r{i}"}), range(24)))
    assert [a["body"] for a in answers] == [f"/r{i}" for i in range(24)]
    assert most[0] == 1
