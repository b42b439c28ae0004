"""Import errors: ``GET /importErrors`` and ``GET /importErrors/{import_error_id}``.

Updraft keeps a file's import errors on the file's item, not as rows with ids. The id Airflow's clients need is
derived from the error itself (file, DAG, message), so it is stable while the error persists and a new error
gets a new id, as a re-parse gives one in Airflow.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, Any

from updraft.api.errors import NotFound
from updraft.api.formats import iso, parse_datetime, pattern_matcher
from updraft.api.lookups import field_keys
from updraft.api.pagination import page_of, paginate
from updraft.api.routing import Call, RouteTable

if TYPE_CHECKING:
    from updraft.api.models import ImportErrorCollectionResponse, ImportErrorResponse

routes = RouteTable()

EPOCH = "1970-01-01T00:00:00Z"
ORDER = field_keys("import_error_id", "timestamp", "filename", aliases={"id": "import_error_id"})


def error_id(err: dict[str, Any]) -> int:
    key = "\x1f".join((err["filename"], err.get("dag_id") or "", err.get("message") or ""))
    return zlib.crc32(key.encode()) & 0x7FFFFFFF


def error_response(err: dict[str, Any]) -> ImportErrorResponse:
    stamp = parse_datetime(err["timestamp"]) if err.get("timestamp") else None
    return {"import_error_id": error_id(err), "timestamp": iso(stamp) or EPOCH, "filename": err["filename"],
            "bundle_name": None, "stack_trace": err.get("stacktrace") or err.get("message") or ""}


def _all(call: Call) -> list[ImportErrorResponse]:
    return [error_response(err) for err in call.store.list_import_errors()]


@routes.get("/importErrors")
def get_import_errors(call: Call) -> ImportErrorCollectionResponse:
    page = page_of(call.query, ["id"])
    matches = pattern_matcher(call.query.string("filename_pattern"))
    filename = call.query.string("filename")
    call.query.check()
    errors = [e for e in _all(call) if matches(e["filename"]) and filename in (None, e["filename"])]
    found, total = paginate(errors, page, ORDER)
    return {"import_errors": found, "total_entries": total}


@routes.get("/importErrors/{import_error_id}")
def get_import_error(call: Call) -> ImportErrorResponse:
    wanted = call.int_path("import_error_id")
    found = next((e for e in _all(call) if e["import_error_id"] == wanted), None)
    if found is None:
        raise NotFound(f"The ImportError with import_error_id: `{wanted}` was not found")
    return found
