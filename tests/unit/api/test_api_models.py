"""``updraft.api.models`` is what ``bench/gen_api_models.py`` writes from the shipped OpenAPI document, so the
response builders' types never drift from Airflow's models."""

from __future__ import annotations

import gzip
import json
import typing

from bench.gen_api_models import DOCUMENT, TARGET, generate


def _document() -> dict:
    return json.loads(gzip.decompress(DOCUMENT.read_bytes()))


def test_the_committed_models_are_what_the_generator_writes():
    assert TARGET.read_text() == generate(_document()), "run: python bench/gen_api_models.py"


def test_the_models_keep_airflow_s_required_keys_and_types():
    from updraft.api import models

    schema = _document()["components"]["schemas"]["DAGRunResponse"]
    assert models.DAGRunResponse.__required_keys__ == frozenset(schema["required"])
    assert models.DAGRunCollectionResponse.__optional_keys__ == {"next_cursor", "previous_cursor", "total_entries",
                                                                 "total_entries_limit"}
    hints = typing.get_type_hints(models.DAGRunResponse)
    assert hints["run_after"] is str and hints["duration"] == float | None
    assert hints["dag_versions"] == list[models.DagVersionResponse]
    assert "__type" in models.TimeDelta.__optional_keys__


def test_the_routes_import_the_models_for_mypy_only():
    """Building the classes would cost the API Lambda's cold start: the routes import them under TYPE_CHECKING."""
    import os
    import subprocess
    import sys

    code = ("import pkgutil, importlib, sys, updraft.api.routes as r\n"
            "for m in pkgutil.iter_modules(r.__path__): importlib.import_module(f'updraft.api.routes.{m.name}')\n"
            "import updraft.api.app\n"
            "print('updraft.api.models' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}  # this checkout's updraft, as pytest imports it
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "False"
