"""The runtime's pure pieces: kwargs for callables, XCom pull rules, lazy sequences, unmapping, templates,
macros, timeouts and per-thread log capture (no AWS)."""

from __future__ import annotations

import datetime as dt
import threading
import time

import pytest

from airflow.providers.standard.operators.bash import BashOperator
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG, task
from updraft.model.records import TIKey
from updraft.runtime.execute import execution_timeout
from updraft.runtime.logs import LocalLogSink, capture
from updraft.runtime.macros import ds_add, ds_format, macros
from updraft.runtime.mapping import MappingError, unmap
from updraft.runtime.templates import Renderer, render_task, template_env
from updraft.runtime.xcom import LazyXComSequence, XComClient, XComSerializationError, push_result
from updraft.sdk.exceptions import AirflowTaskTimeout
from updraft.sdk.execution import determine_kwargs

START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
KEY = TIKey("d", "r", "me")


class MemoryStore:
    def __init__(self) -> None:
        self.items: dict[tuple, object] = {}

    def put_xcom(self, key, xcom_key, value, *, now, shown=None):
        self.items[(key.task_id, key.map_index, xcom_key)] = value

    def get_xcom(self, key, xcom_key, default=None):
        return self.items.get((key.task_id, key.map_index, xcom_key), default)

    def list_xcoms(self, dag_id, run_id, task_id, map_index=None):
        return {(m, k): v for (t, m, k), v in self.items.items()
                if t == task_id and (map_index is None or m == map_index)}


def client(store=None, key=KEY):
    return XComClient(store or MemoryStore(), key, lambda: START)


class FakeTI:
    def __init__(self, xcom_client):
        self.xcom_client = xcom_client


# -- determine_kwargs ---------------------------------------------------------------------------------------
def test_callables_get_only_the_context_names_they_declare_or_everything_with_kwargs():
    context = {"ds": "2024-01-01", "ti": "TI", "x": 1}
    assert determine_kwargs(lambda ds, x: None, [], context) == {"ds": "2024-01-01", "x": 1}
    assert determine_kwargs(lambda **kw: None, [], context) == context
    with pytest.raises(ValueError, match="'ds' in args is a part of kwargs"):
        determine_kwargs(lambda ds: None, ["positional"], context)


# -- XCom -----------------------------------------------------------------------------------------------------
def test_xcom_pull_follows_airflow_3_rules():
    store = MemoryStore()
    c = client(store)
    c.push("return_value", 1)
    for i, v in enumerate(["a", "b"]):
        client(store, TIKey("d", "r", "mapped", i)).push("return_value", v)
    assert c.pull() == 1  # default: the calling task
    assert c.pull(task_ids="mapped") == ["a", "b"]  # all map indexes
    assert c.pull(task_ids="mapped", map_indexes=1) == "b"
    assert c.pull(task_ids=["me", "mapped"]) == [1, "a", "b"]
    assert c.pull(task_ids="missing", default="dflt") == "dflt"
    assert c.pull(task_ids="mapped", map_indexes=[0, 5], default=0) == ["a", 0]


def test_push_rejects_values_that_are_not_json():
    with pytest.raises(XComSerializationError, match="'me' is not JSON-serializable"):
        client().push("k", {"when": object()})


def test_tuples_and_sets_are_pushed_tagged_as_serde_tags_them_and_pulled_back():
    store = MemoryStore()
    pushed = {"t": (1, (2, "x")), "s": {3, 1}, "f": frozenset(["a"]), "l": [(1,)]}
    client(store).push("k", pushed)
    assert store.get_xcom(KEY, "k")["s"] == {"__classname__": "builtins.set", "__version__": 1, "__data__": [1, 3]}
    pulled = client(store).get_one(KEY.task_id, "k", None)
    assert pulled == pushed and type(pulled["t"][1]) is tuple and type(pulled["f"]) is frozenset


def test_push_result_multiple_outputs_lengths_and_unmappable_values():
    store = MemoryStore()

    class T:
        do_xcom_push = True
        multiple_outputs = True

    assert push_result(T(), {"a": 1, "b": 2}, client(store), maps_downstream=False) == 2
    assert store.get_xcom(KEY, "a") == 1 and store.get_xcom(KEY, "return_value") == {"a": 1, "b": 2}
    with pytest.raises(TypeError, match="expected dictionary for multiple_outputs"):
        push_result(T(), [1], client(store), maps_downstream=False)
    T.multiple_outputs = False
    assert push_result(T(), (1, 2, 3), client(store), maps_downstream=True) == 3
    from updraft.runtime.xcom import XComForMappingNotPushed

    with pytest.raises(XComForMappingNotPushed):
        push_result(T(), None, client(store), maps_downstream=True)
    assert push_result(T(), None, client(store), maps_downstream=True, is_mapped=True) is None
    assert push_result(T(), 5, client(store), maps_downstream=True, is_mapped=True) is None
    from updraft.sdk.exceptions import UnmappableXComTypePushed

    with pytest.raises(UnmappableXComTypePushed):
        push_result(T(), 5, client(store), maps_downstream=True)


def test_lazy_sequence_is_ordered_by_map_index_and_compares_to_lists():
    store = MemoryStore()
    for i in (2, 0, 1):
        client(store, TIKey("d", "r", "up", i)).push("return_value", i * 10)
    seq = LazyXComSequence(client(store), "up")
    assert len(seq) == 3 and seq[0] == 0 and list(seq) == [0, 10, 20] and seq == [0, 10, 20]


# -- unmapping ------------------------------------------------------------------------------------------------
def test_cross_product_last_argument_fastest_and_dicts_expand_into_items():
    with DAG("m", schedule=None, start_date=START):
        mapped = BashOperator.partial(task_id="b", env={"A": "1"}).expand(
            bash_command=["x", "y"], cwd=["/1", "/2", "/3"])

        @task
        def f(k):
            return k

        over_dict = f.expand(k={"a": 1, "b": 2}).operator
    context = {"ti": FakeTI(client())}
    picked = [(op.bash_command, op.cwd) for op in (unmap(mapped, i, context)[0] for i in range(6))]
    assert picked == [("x", "/1"), ("x", "/2"), ("x", "/3"), ("y", "/1"), ("y", "/2"), ("y", "/3")]
    op = unmap(mapped, 4, context)[0]
    assert op.task_id == "b" and op.env == {"A": "1"} and op.dag.dag_id == "m"
    assert unmap(over_dict, 1, context)[0].op_kwargs == {"k": ("b", 2)}
    with pytest.raises(MappingError, match="map index 6"):
        unmap(mapped, 6, context)


def test_expand_kwargs_and_taskflow_partial_go_into_op_kwargs():
    with DAG("m", schedule=None, start_date=START):
        @task
        def add(a, b, c):
            return a + b + c

        mapped = add.partial(c=100).expand_kwargs([{"a": 1, "b": 2}, {"a": 3, "b": 4}]).operator
    op, _ = unmap(mapped, 1, {"ti": FakeTI(client())})
    assert op.op_kwargs == {"c": 100, "a": 3, "b": 4}


# -- templates --------------------------------------------------------------------------------------------------
class Nested:
    template_fields = ("query",)

    def __init__(self, query):
        self.query = query


def test_rendering_recurses_into_collections_and_nested_objects(tmp_path):
    (tmp_path / "q.sql").write_text("select {{ n }}")
    with DAG("t", schedule=None, start_date=START, template_searchpath=[str(tmp_path)],
             user_defined_filters={"twice": lambda v: v * 2}) as dag:
        op = PythonOperator(task_id="p", python_callable=print,
                            op_args=[("{{ n }}", ["{{ n | twice }}"]), Nested("{{ n + 1 }}")],
                            op_kwargs={"k": {"deep": "{{ macros.ds_add('2024-01-01', n) }}"}},
                            templates_dict={"f": "q.sql"}, templates_exts=[".sql"])
    render_task(op, dag, {"n": 2, "macros": macros()})
    assert op.op_args[0] == ("2", ["4"]) and op.op_args[1].query == "3"
    assert op.op_kwargs == {"k": {"deep": "2024-01-03"}}
    assert op.templates_dict == {"f": "select 2"}


def test_native_environment_keeps_types_and_undefined_is_strict():
    import jinja2

    with DAG("t", schedule=None, start_date=START) as dag:
        pass
    native = Renderer(template_env(dag, native=True), {"n": [1, 2]}, native=True)
    assert native.render("{{ n }}") == [1, 2]
    with pytest.raises(jinja2.UndefinedError):
        Renderer(template_env(dag, native=False), {}).render("{{ missing }}")


def test_macros():
    assert ds_add("2024-01-30", 3) == "2024-02-02" and ds_add("2024-01-30", 0) == "2024-01-30"
    assert ds_format("2024-01-30", "%Y-%m-%d", "%d/%m/%y") == "30/01/24"
    m = macros()
    assert m.datetime is dt.datetime and m.timedelta is dt.timedelta and m.json.dumps([1]) == "[1]"
    assert m.dateutil.relativedelta.relativedelta(days=1).days == 1


# -- timeouts and logs -------------------------------------------------------------------------------------------
def test_execution_timeout_in_the_main_thread_and_in_a_worker_thread():
    started = time.monotonic()
    with pytest.raises(AirflowTaskTimeout, match=r"timed out after 0\.2 seconds"), \
            execution_timeout(dt.timedelta(seconds=0.2), "main"):
        time.sleep(120)
    assert time.monotonic() - started < 60  # interrupted at 0.2 s, not slept through
    caught: list[BaseException] = []

    def in_thread():
        try:
            with execution_timeout(dt.timedelta(seconds=0.2), "thread"):
                for _ in range(100):
                    time.sleep(0.02)
        except AirflowTaskTimeout as exc:
            caught.append(exc)

    t = threading.Thread(target=in_thread)
    t.start()
    t.join(5)
    assert caught and "timed out" in str(caught[0])
    with execution_timeout(dt.timedelta(seconds=5), "fast"):
        pass  # nothing fires after the block


def test_log_capture_is_per_thread(tmp_path):
    sink = LocalLogSink(tmp_path)
    barrier = threading.Barrier(2)

    def run(name):
        key = TIKey("d", "r", name)
        with capture(sink, key, 1):
            barrier.wait()
            print(f"hello from {name}")
            import logging

            logging.getLogger("x").warning("warned by %s", name)

    threads = [threading.Thread(target=run, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    a, b = sink.read(TIKey("d", "r", "a"), 1), sink.read(TIKey("d", "r", "b"), 1)
    assert "hello from a" in a and "warned by a" in a and "from b" not in a
    assert "hello from b" in b and "by a" not in b
    assert sink.path(TIKey("d", "r", "a", 3), 2).as_posix().endswith("d/r/a/3/2.log")


def test_a_running_try_s_log_is_written_as_it_grows_and_whole_at_its_end(tmp_path):
    from updraft.runtime.logs import write_live_logs
    from updraft.secrets.masker import mask_secret, reset_masker

    sink, key = LocalLogSink(tmp_path), TIKey("d", "r", "live")
    try:
        with capture(sink, key, 1):
            mask_secret("s3cr3t-value")
            print("first line, s3cr3t-value")
            write_live_logs()  # what the live writer does every few seconds
            assert sink.read(key, 1) == "first line, ***\n"
            write_live_logs()  # nothing new: nothing written
            print("second line")
            write_live_logs()
            assert sink.read(key, 1) == "first line, ***\nsecond line\n"
        write_live_logs()  # the try ended: its complete log is never overwritten by a partial one
        final = sink.read(key, 1)
        assert final.startswith("first line, ***\nsecond line\n") and final.rstrip().endswith("end of try 1")
    finally:
        reset_masker()


@pytest.mark.slow
def test_the_heartbeat_extends_the_lease_while_the_try_runs_and_stops_after():
    from updraft.executors.base import Dispatch
    from updraft.runtime.worker import _Heartbeat

    beats: list[dt.datetime] = []

    class Store:
        def heartbeat(self, key, *, try_id, lease_expires_at):
            beats.append(lease_expires_at)
            return True

    dispatch = Dispatch(key=KEY, try_number=1, try_id="t")
    with _Heartbeat(Store(), dispatch, lambda: START, dt.timedelta(seconds=3)):
        time.sleep(2.3)
    count = len(beats)
    time.sleep(1.2)
    assert count == 2 and len(beats) == count
    assert beats[0] == START + dt.timedelta(seconds=3)


def test_strings_render_with_the_dags_own_delimiters_and_jinjas_newline_rules():
    # A string that holds no Airflow-default delimiter still renders when the DAG chose others, and Jinja's
    # newline handling (one trailing newline dropped, \r\n normalised) applies as Airflow renders every string.
    with DAG("t", schedule=None, start_date=START,
             jinja_environment_kwargs={"variable_start_string": "[[", "variable_end_string": "]]"}) as dag:
        pass
    custom = Renderer(template_env(dag, native=False), {"ds": "2024-02-02"})
    assert custom.render("day [[ ds ]]") == "day 2024-02-02"
    with DAG("u", schedule=None, start_date=START) as plain_dag:
        pass
    plain = Renderer(template_env(plain_dag, native=False), {})
    assert plain.render("echo hi\n") == "echo hi"
    assert plain.render("a\r\nb") == "a\nb"
    assert plain.render("50% off {x}") == "50% off {x}"


class _WithPrivate:
    _x = 1


def test_environments_are_airflows_private_attributes_allowed_and_native_not_sandboxed():
    import jinja2.sandbox

    with DAG("t", schedule=None, start_date=START) as dag:
        pass
    sandboxed = Renderer(template_env(dag, native=False), {"o": _WithPrivate()})
    assert sandboxed.render("{{ o._x }}") == "1"  # Airflow allows "_" attributes, blocks only "__" ones
    with pytest.raises(jinja2.exceptions.SecurityError):
        sandboxed.render("{{ o.__class__ }}")
    native = Renderer(template_env(dag, native=True), {"o": _WithPrivate()}, native=True)
    assert native.render("{{ o.__class__.__name__ }}") == "_WithPrivate"  # Airflow's native env has no sandbox
    assert not isinstance(native.env, jinja2.sandbox.SandboxedEnvironment)


class JsonStore(MemoryStore):
    """Keeps what the real store keeps: the JSON text of each value."""

    def put_xcom(self, key, xcom_key, value, *, now, shown=None):
        import json

        super().put_xcom(key, xcom_key, json.dumps(value, allow_nan=False), now=now)

    def get_xcom(self, key, xcom_key, default=None):
        import json

        found = super().get_xcom(key, xcom_key, None)
        return default if found is None else json.loads(found)

    def list_xcoms(self, dag_id, run_id, task_id, map_index=None):
        import json

        return {k: json.loads(v) for k, v in super().list_xcoms(dag_id, run_id, task_id, map_index).items()}


class FakeTask:
    do_xcom_push = True
    multiple_outputs = False


def test_datetimes_dates_times_and_timedeltas_go_through_xcoms_as_in_airflow():
    # Airflow 3's XCom serde gives a task back the datetime another one returned; JSON alone cannot.
    import pendulum

    store = JsonStore()
    c = client(store)
    value = {"when": dt.datetime(2024, 3, 5, 6, 7, 8, 9, tzinfo=dt.UTC), "naive": dt.datetime(2024, 1, 2),
             "day": dt.date(2024, 3, 5), "at": dt.time(6, 7), "gap": dt.timedelta(hours=1, microseconds=5),
             "berlin": pendulum.datetime(2024, 3, 5, tz="Europe/Berlin"), "plain": [1, "x", None]}
    push_result(FakeTask(), value, c, maps_downstream=False)
    back = c.pull(task_ids="me")
    assert back == value
    assert isinstance(back["berlin"], pendulum.DateTime) and back["berlin"].timezone_name == "Europe/Berlin"
    c.push("many", [dt.date(2024, 1, d) for d in (1, 2)])
    assert c.pull(task_ids="me", key="many") == [dt.date(2024, 1, 1), dt.date(2024, 1, 2)]
    assert list(LazyXComSequence(c, "me", "many")) == [[dt.date(2024, 1, 1), dt.date(2024, 1, 2)]]
    # JSON values are stored as they are, and a user's dict that merely looks tagged stays a dict
    c.push("tagged", {"__classname__": "x", "__version__": 1, "__data__": 2})
    assert c.pull(task_ids="me", key="tagged") == {"__classname__": "x", "__version__": 1, "__data__": 2}


def test_a_bash_template_file_runs_as_a_script_file_as_in_airflow(tmp_path):
    # Airflow writes a rendered .sh/.bash template to a temporary script and runs `bash <script>`: $0 names it,
    # and a script longer than one argument may be (128 KiB on Linux) still runs, where `bash -c` could not.
    op = BashOperator(task_id="script", bash_command="long.sh")
    op.bash_command = "# " + "x" * 200_000 + "\necho \"$0\"\n"  # what rendering the template file gives
    assert op.execute({}).endswith(".sh")
    inline = BashOperator(task_id="inline", bash_command="echo \"$0\"")
    assert not inline.execute({}).endswith(".sh")  # `bash -c`: $0 is bash itself
    in_cwd = BashOperator(task_id="in_cwd", bash_command="x.bash", cwd=str(tmp_path))
    in_cwd.bash_command = "pwd"
    assert in_cwd.execute({}) == str(tmp_path) and list(tmp_path.iterdir()) == []  # the script is cleaned up
