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


def test_handlers_running_at_once_on_two_threads_keep_their_own_metrics():
    """Powertools shares one metric set between all ``Metrics`` of a process: the API's flush found the set it
    had checked emptied by the scheduler's, and the gateway answered 502 ("Must contain at least one metric")."""
    from aws_lambda_powertools import Metrics

    from updraft.local.handlers import keep_metrics_per_thread

    api, scheduler = Metrics(namespace="t", service="updraft-api"), Metrics(namespace="t", service="updraft-scheduler")
    assert api.metric_set is scheduler.metric_set  # Powertools' own sharing, which the isolation undoes
    for metrics in (api, scheduler):
        keep_metrics_per_thread(metrics)
    api_added, scheduler_cleared = threading.Event(), threading.Event()
    lines: dict[str, object] = {}

    def api_call() -> None:
        api.add_metric(name="ApiRequests", unit="Count", value=1)
        api_added.set()
        scheduler_cleared.wait(5)
        lines["api"] = api.serialize_metric_set()
        api.clear_metrics()

    def scheduler_call() -> None:
        api_added.wait(5)
        scheduler.add_metric(name="SchedulerRuns", unit="Count", value=2)
        lines["scheduler"] = scheduler.serialize_metric_set()
        scheduler.clear_metrics()
        scheduler_cleared.set()

    threads = [threading.Thread(target=api_call), threading.Thread(target=scheduler_call)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    api_line, scheduler_line = lines["api"], lines["scheduler"]
    assert (api_line["ApiRequests"], api_line["service"]) == ([1.0], "updraft-api")  # type: ignore[index]
    assert "SchedulerRuns" not in api_line  # type: ignore[operator]
    assert (scheduler_line["SchedulerRuns"], scheduler_line["service"]) == ([2.0], "updraft-scheduler")  # type: ignore[index]
    assert "ApiRequests" not in scheduler_line  # type: ignore[operator]
