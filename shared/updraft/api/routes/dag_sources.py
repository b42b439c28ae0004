"""``GET /dagSources/{dag_id}``: the DAG file's source, Airflow's ``DAGSourceResponse`` (or the text alone when
``Accept: text/plain``).

The source is read from the environment's bucket, where the parser read it: the object version the DAG was
parsed from when the bucket is versioned (the row's ``file_version``), else the file as it is now. Updraft does
not number DAG versions, so ``version_number`` is null in the answer and asking for one is a 400 naming it.

The API's role may read ``dags/*`` (``infra/constructs/access.py``'s ``read_dag_source``: the text, which the API
never imports); a stack deployed before that grant answers a 403 saying so, never a 500.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from updraft.api.errors import BadRequest, Forbidden, NotFound
from updraft.api.formats import TEXT, json_or_text
from updraft.api.lookups import dag_or_404, display_name
from updraft.api.routing import Call, Reply, RouteTable

if TYPE_CHECKING:
    from updraft.api.models import DAGSourceResponse
    from updraft.store.api import DagMeta

routes = RouteTable()


def _version_of(meta: DagMeta) -> str | None:
    """The S3 version the DAG was parsed from; the parser records an ETag (quoted) when the bucket keeps none."""
    version = meta.file_version
    return version if version and not version.startswith('"') and version != "null" else None


def _source(call: Call, meta: DagMeta) -> str | None:
    config = call.services.config
    if not config.bucket:
        return None
    s3 = call.services.client("s3")
    key = config.dags_prefix + meta.relative_fileloc
    try:
        try:
            version = _version_of(meta)
            body = (s3.get_object(Bucket=config.bucket, Key=key, VersionId=version) if version
                    else s3.get_object(Bucket=config.bucket, Key=key))["Body"]
        except s3.exceptions.ClientError as err:  # that version is gone: the file as it is now
            if err.response.get("Error", {}).get("Code") not in ("InvalidArgument", "NoSuchVersion"):
                raise
            body = s3.get_object(Bucket=config.bucket, Key=key)["Body"]
    except s3.exceptions.NoSuchKey:
        return None
    except s3.exceptions.ClientError as err:
        if err.response.get("Error", {}).get("Code") != "AccessDenied":
            raise
        raise Forbidden("This environment's API may not read DAG files: its stack predates the API's read of "
                        "DAG sources (deploy the stack again)") from None
    return body.read().decode("utf-8", errors="replace")


@routes.get("/dagSources/{dag_id}")
def get_dag_source(call: Call) -> DAGSourceResponse | Reply:
    dag_id = call.path("dag_id")
    version_number = call.query.integer("version_number")
    call.query.check()
    mimetype = json_or_text(call.request.header("Accept"))
    if version_number is not None:
        raise BadRequest("Updraft does not number DAG versions: version_number is not supported (omit it for the "
                         "source the DAG was last parsed from)")
    meta, sdag = dag_or_404(call, dag_id)
    content = _source(call, meta)
    if content is None:
        raise NotFound(f"Code not found. dag_id='{dag_id}' version_number='None'")
    if mimetype == TEXT:
        return Reply(200, content, content_type=TEXT)
    return {"content": content, "dag_id": dag_id, "version_number": None,
            "dag_display_name": display_name(sdag, dag_id)}
