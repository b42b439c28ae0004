"""The domain errors the API answers as Airflow does, in one table: a route lets them through, the app's handler
(:func:`updraft.api.app.build_app`) turns one into its status and ``{"detail": ...}``.

Each entry names an exception class of a lower layer and says its answer: the status, and the detail made from
the exception (its message unless said otherwise: each raise site words it as Airflow's API does). The most
specific class wins: an exception's classes are tried in its method resolution order, so a subclass may have an
answer of its own. A class not in the table, a bare ``ValueError`` included, stays the 500 of an unexpected error.

The table names classes by module and name rather than importing them: the modules defining them (the
scheduler's commands) would add ~0.2 s to the API's first request, and a route imports each only when it runs.
An exception whose module was never imported was never raised, so naming loses nothing;
``tests/unit/api/test_domain_errors.py`` checks that every name is an exception class.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DomainAnswer:
    """The answer to a domain error: ``status`` and the ``detail`` made from the exception."""

    status: int
    detail: Callable[[BaseException], Any] = str


def _providers_unreadable(exc: BaseException) -> str:
    return f"The environment's installed providers cannot be read: {exc}"


# "<module>.<class>" -> its answer.
DOMAIN_ERRORS: dict[str, DomainAnswer] = {
    # Triggering a run (POST /dags/{dag_id}/dagRuns) and creating a backfill: each raise site words the 404 as
    # Airflow's route does ("Dag with dag_id: '<id>' not found"; a backfill's "Could not find dag <id>").
    "updraft.sdk.exceptions.DagNotFound": DomainAnswer(404),
    "updraft.sdk.exceptions.ParamValidationError": DomainAnswer(400),
    "updraft.sdk.exceptions.DagRunAlreadyExists": DomainAnswer(409),
    "updraft.scheduling.commands.triggering.InvalidRunId": DomainAnswer(400),
    "updraft.timetables.evaluated.ManualIntervalNotEvaluated": DomainAnswer(400),
    # DELETE /dags/{dag_id} while one of its task instances runs.
    "updraft.scheduling.commands.dag_deletion.DagStillRunning": DomainAnswer(409),
    # A task instance's dependencies: no such run, task or map index.
    "updraft.scheduling.commands.why.NotFound": DomainAnswer(404),
    # Clearing through ExternalTaskMarkers past their recursion depth.
    "updraft.scheduling.commands.marker_clears.MarkerRecursionError": DomainAnswer(400),
    # Backfills: Airflow answers a request its rules refuse with its validation error, 422 whose detail is the
    # message itself.
    "updraft.scheduling.commands.backfill_commands.BackfillNotFound": DomainAnswer(404),
    "updraft.scheduling.commands.backfill_commands.AlreadyRunningBackfill": DomainAnswer(409),
    "updraft.scheduling.commands.backfill_commands.BackfillCompleted": DomainAnswer(409),
    "updraft.scheduling.commands.backfill_commands.InvalidBackfill": DomainAnswer(422),
    "updraft.scheduling.commands.backfill_commands.RerunKeepsConf": DomainAnswer(400),
    # A task state key written without a retention while [state_store] default_retention_days is negative.
    "updraft.store.state_stores.NegativeRetention": DomainAnswer(400),
    # A providers.json that does not read is a broken install: the server's error, naming what is wrong.
    "updraft.requirements.provider_info.ProviderInfoError": DomainAnswer(500, _providers_unreadable),
}


def domain_answer(exc: BaseException) -> tuple[int, dict[str, Any]] | None:
    """``exc``'s status and body when its class (or the most specific of its bases) is in :data:`DOMAIN_ERRORS`;
    None for any other exception."""
    for cls in type(exc).__mro__:
        answer = DOMAIN_ERRORS.get(f"{cls.__module__}.{cls.__qualname__}")
        if answer is not None:
            return answer.status, {"detail": answer.detail(exc)}
    return None
