"""Which files a folder parse runs: Airflow's listing rules, and the duplicate-id rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from updraft.model.parse_results import ParsedFile
from updraft.parsing.folder import (
    find_python_files,
    flag_duplicate_dag_ids,
    is_excluded,
    list_dag_files,
    might_contain_dag,
)
from updraft.parsing.ignore import compile_glob

DAG_TEXT = "from airflow.sdk import DAG\n"


def make(root: Path, rel: str, text: str = DAG_TEXT) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def rels(root: Path, paths) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]


def test_lists_py_files_sorted_skipping_hidden_and_pycache(tmp_path):
    for rel in ["b.py", "a.py", "sub/c.py", "__pycache__/x.py", ".hidden/y.py", ".z.py", "notes.txt", "sub/d.pyc"]:
        make(tmp_path, rel)
    assert rels(tmp_path, find_python_files(tmp_path)) == ["a.py", "b.py", "sub/c.py"]


def test_safe_mode_needs_both_words(tmp_path):
    make(tmp_path, "dag.py", "from airflow import DAG\n")
    make(tmp_path, "helper.py", "def util():\n    return 1\n")
    make(tmp_path, "only_dag.py", "dag = 1\n")
    make(tmp_path, "asset.py", "from AIRFLOW.sdk import Asset\n")
    jobs, skipped = list_dag_files(tmp_path)
    assert [j.relative_path for j in jobs] == ["asset.py", "dag.py"]
    assert skipped == ["helper.py", "only_dag.py"]
    jobs, skipped = list_dag_files(tmp_path, safe_mode=False)
    assert len(jobs) == 4 and skipped == []
    assert might_contain_dag(tmp_path / "dag.py")
    assert not might_contain_dag(tmp_path / "missing.py")


def test_airflowignore_glob(tmp_path):
    for rel in ["keep.py", "skip_me.py", "tmp/a.py", "sub/deep/b.py", "sub/keep2.py", "sub/skip_me.py", "lib/x.py"]:
        make(tmp_path, rel)
    (tmp_path / ".airflowignore").write_text("# comment\nskip_*.py\ntmp/\n/lib\n\n")
    (tmp_path / "sub" / ".airflowignore").write_text("deep  # trailing comment\n")
    assert rels(tmp_path, find_python_files(tmp_path)) == ["keep.py", "sub/keep2.py"]
    assert is_excluded(tmp_path, tmp_path / "sub/skip_me.py")
    assert is_excluded(tmp_path, tmp_path / "sub/deep/b.py")
    assert not is_excluded(tmp_path, tmp_path / "sub/keep2.py")


def test_airflowignore_glob_negation_and_double_star(tmp_path):
    for rel in ["a/x_test.py", "a/b/y_test.py", "a/b/keep_test.py", "z.py"]:
        make(tmp_path, rel)
    (tmp_path / ".airflowignore").write_text("**/*_test.py\n!keep_test.py\n")
    assert rels(tmp_path, find_python_files(tmp_path)) == ["a/b/keep_test.py", "z.py"]


def test_airflowignore_regexp(tmp_path):
    for rel in ["project_a/dag.py", "project_b/dag.py", "tenant_1.py", "other.py"]:
        make(tmp_path, rel)
    (tmp_path / ".airflowignore").write_text("project_a\ntenant_[\\d]\n")
    assert rels(tmp_path, find_python_files(tmp_path, ignore_syntax="regexp")) == ["other.py", "project_b/dag.py"]


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "x.py", True),
        ("a?.py", "ab.py", True),
        ("[!a]b.py", "ab.py", False),
        ("[!a]b.py", "cb.py", True),
        ("foo/", "foo/", True),
        ("foo/", "foo", False),
        ("/foo/*.py", "foo/x.py", True),
        ("/foo/*.py", "foo/bar/x.py", False),
        ("foo/**", "foo/a/b.py", True),
        ("a/**/b.py", "a/x/y/b.py", True),
        ("a/**/b.py", "a/b.py", True),
    ],
)
def test_glob_translation(pattern, path, matches):
    rule = compile_glob(pattern, Path("/root/.airflowignore"))
    assert rule is not None
    assert bool(rule.regex.match(path)) is matches


def test_single_file_folder(tmp_path):
    path = make(tmp_path, "one.py")
    jobs, _ = list_dag_files(path)
    assert [(j.relative_path, j.dags_folder) for j in jobs] == [("one.py", str(tmp_path))]


def test_missing_folder_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        find_python_files(tmp_path / "nope")


def test_duplicate_dag_id_is_an_error_on_the_later_file():
    first = ParsedFile("a/first.py", "h1", [{"dag_id": "shared"}, {"dag_id": "own_a"}])
    second = ParsedFile("b_second.py", "h2", [{"dag_id": "own_b"}, {"dag_id": "shared"}])
    flag_duplicate_dag_ids([first, second])
    assert first.dag_ids == ["shared", "own_a"] and first.import_errors == []
    assert second.dag_ids == ["own_b"]
    [err] = second.import_errors
    assert err.dag_id == "shared"
    assert err.message == (
        "AirflowDagDuplicatedIdException: Ignoring DAG shared from b_second.py - also found in a/first.py"
    )
