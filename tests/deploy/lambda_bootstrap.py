"""The Lambda runtime's bootstrap, as far as a handler can tell: run by the deploy tier's runtime
(``tests/deploy/lambda_runtime.py``) as ``python -I -S lambda_bootstrap.py TASK_ROOT HANDLER RUNTIME_DIR`` in a clean
interpreter (no site-packages: the bundle must hold everything it imports), with the event on stdin.

It imports the handler from TASK_ROOT as Lambda's runtime does (TASK_ROOT first on ``sys.path``, the runtime's
own packages, RUNTIME_DIR, last), calls it once with a context object carrying the attributes Lambda gives, and
writes one result line to stdout after whatever the handler printed: ``MARKER {"result": ...}`` or ``MARKER {"errorType": ..., "errorMessage": ...}``, with the
import and the invoke times in ms, and ``calls``: every AWS API call the function's process made.

The calls are recorded as botocore's own event system reports them: a ``provide-client-params`` handler added to
botocore's built-in handlers (which every botocore session registers when it is created: boto3's, pynamodb's, CDK
handlers' own) as soon as the bundle's ``botocore.handlers`` is imported, so the handler's import is timed as
Lambda would time it and no client the function makes escapes. Each call is its service's signing name (IAM's
prefix), its operation and its parameters (bodies and long strings cut), for the deploy tier's IAM check.
"""

import importlib
import importlib.abc
import importlib.machinery
import json
import os
import runpy
import sys
import time
import traceback

MARKER = "\x1eUPDRAFT-LAMBDA-RESULT"
CALLS: list = []
_CUT = 300  # characters of a string parameter kept (names and ARNs fit; bodies and log messages do not matter)


def _plain(value):
    """A call's parameters as JSON: strings cut, bytes and streams named, at most 100 list items."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value[:100]]
    if isinstance(value, str):
        return value[:_CUT]
    if value is None or isinstance(value, bool | int | float):
        return value
    return f"<{type(value).__name__}>"


def _record(params, model, **kwargs):
    service = model.service_model
    CALLS.append({"service": service.signing_name, "operation": model.name, "params": _plain(params)})


class _Loader(importlib.abc.Loader):
    """Runs ``botocore.handlers`` as its own loader would, then adds the recorder to its built-in handlers."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        module.BUILTIN_HANDLERS.append(("provide-client-params", _record))


class _RecordCalls(importlib.abc.MetaPathFinder):
    """Finds ``botocore.handlers`` with the other finders, once, and wraps its loader."""

    def find_spec(self, name, path, target=None):
        if name != "botocore.handlers":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


class Context:
    """The attributes of Lambda's context object that handlers and Powertools read."""

    def __init__(self, deadline: float) -> None:
        env = os.environ
        self.function_name = env["AWS_LAMBDA_FUNCTION_NAME"]
        self.function_version = env.get("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        self.memory_limit_in_mb = int(env.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128"))
        self.invoked_function_arn = env["UPDRAFT_TEST_FUNCTION_ARN"]
        self.aws_request_id = env["UPDRAFT_TEST_REQUEST_ID"]
        self.log_group_name = env.get("AWS_LAMBDA_LOG_GROUP_NAME", "")
        self.log_stream_name = env.get("AWS_LAMBDA_LOG_STREAM_NAME", "")
        self._deadline = deadline

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def run_module(task_root: str, module: str) -> None:
    """A container's ``python -m MODULE`` from ``task_root`` (the image's working directory), calls recorded; the
    result line gives its exit status (``exit_code``) instead of a result."""
    sys.path[:0] = [task_root]
    sys.meta_path.insert(0, _RecordCalls())
    out: dict = {"calls": CALLS}
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        out["exit_code"] = 0
    except SystemExit as stop:
        out["exit_code"] = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except Exception as exc:  # Python's own report of an uncaught error, and its exit status
        traceback.print_exc()
        out.update(exit_code=1, errorType=type(exc).__name__, errorMessage=str(exc))
    sys.stdout.flush()
    print(MARKER, json.dumps(out, default=str), flush=True)
    sys.exit(out["exit_code"])


def main() -> None:
    task_root, handler, runtime_dir = sys.argv[1], sys.argv[2], sys.argv[3]
    if handler.startswith("-m:"):
        run_module(task_root, handler.removeprefix("-m:"))
        return
    started = time.monotonic()
    deadline = started + float(os.environ["AWS_LAMBDA_FUNCTION_TIMEOUT"])
    sys.path[:0] = [task_root]
    sys.path.append(runtime_dir)
    event = json.loads(sys.stdin.read() or "{}")
    sys.meta_path.insert(0, _RecordCalls())
    out: dict = {"calls": CALLS}
    try:
        module_name, function_name = handler.rsplit(".", 1)
        function = getattr(importlib.import_module(module_name), function_name)
        imported = time.monotonic()
        out["import_ms"] = round((imported - started) * 1000, 1)
        out["result"] = function(event, Context(deadline))
        out["invoke_ms"] = round((time.monotonic() - imported) * 1000, 1)
    except Exception as exc:  # reported as Lambda reports an unhandled error
        out.update(errorType=type(exc).__name__, errorMessage=str(exc),
                   stackTrace=traceback.format_exception(exc))
    sys.stdout.flush()
    print(MARKER, json.dumps(out, default=str), flush=True)


if __name__ == "__main__":
    main()
