"""Twelve speed-ups for moto, applied wherever Updraft embeds moto (local mode, ``dags test``).

Its server lists moto's package directory (a ``listdir`` and ~60 ``stat`` calls) on every request to find the
backend for the host; the list never changes in a process, so it is computed once (~12% of a request's time).

moto 5.2 parses every request and serializes every response member by member of botocore's shapes, ten members
an attribute value: DynamoDB's attribute values pass as they are (``moto_wire``).

moto 5.2 answers a Query on a table's own key, or on a local secondary index (whose partition is the table's),
by listing and sorting every item of the table, then keeping the queried partition's: each of a run's Queries
walked the whole table, so a Query's cost grew with everything ever stored (a grid page's query of a DAG's
newest runs took 1.3 s beside 10,000 runs). While such a Query runs, the table's item list is that partition's
alone (its items, in the same order), so the Query does the same work on what it keeps. A global index spans
partitions: its Queries still walk the table, but unsorted, since moto sorts what such a Query keeps by the
index's keys and then the table's, a total order that makes the walk's order invisible (sorting the whole table
was most of local mode's index Queries: the scheduler's waiting and active-run reads, a few a try), and only the
items whose index partition key is the queried one reach moto's own walk, which tests each item's every key
condition through ``DynamoType`` methods (~10x the time of the plain comparison that picks them first).

moto 5.2 sorts what an index's Query keeps by comparing its attribute objects, a Python method per comparison
that converts both values (a hand-over's listing of a run's waiting index sorts every instance waiting: ~40 % of
that Query's time with 170 waiting); they are sorted by their key values as plain Python values (a number's
``Decimal``, a text or binary as stored), which is what those comparisons compare: a key attribute holds one type.

moto 5.2 finds whether a request's action is a method of its service's response class by listing the class's
members (``inspect.getmembers``) on every request (~6% of a request's time); a class's methods never change in a
process, so each class is listed once.

moto 5.2 validates an UpdateExpression by walking its tree once per check (ten walks), and two checks (one
clause of each kind, no overlapping paths) look at every node's whole subtree again: quadratic in the actions, so
an update of a task instance's 24 attributes cost ~13 ms, a third of the scheduling tests' time in moto. Clauses
and actions never nest, so a subtree holds a subset of the root's clauses and paths: when the root passes both
checks every node does, and only an expression that fails is walked node by node, for moto's own error. The
walks also build each check's table of node types once, not once per node, and the tree is copied for each
validation by pickling (what ``deepcopy`` does for such objects, several times faster). An expression's text is
parsed once (moto parsed each update twice, and the parsed tree is only read: each validation works on its copy).
The eight walks left visit the nodes in moto's order with moto's hooks, but ask whether a value is a node, and
whether a walk processes its type, once per type rather than through the ABC's ``isinstance`` at every node (a
third of a 24-attribute update's time went to the walks themselves).

moto 5.2 projects each item a Query of a keys-only index returns by rendering the whole item as plain JSON,
picking the keys and serializing them back (~0.4 ms an item of a task instance's ~20 attributes: a hand-over
lists up to a run's width of the waiting index), after a deep copy of every whole item the Query matched; the keys'
values alone make the projected item instead (a key is a text, a number or a binary, which the new item's
attributes copy). A Query served while no other request can be (``serving_alone``: the embedded
AWS of local mode serves one request at a time) skips that deep copy of its matches too, which it only reads
(~9% of local mode's DynamoDB CPU in a fan-out: the runs' and the active runs' Queries).

moto 5.2 turns each DynamoDB result into plain data before serializing it (``dynamo_to_dict``), asking every value,
each attribute's text included, whether it is a date, a ``DynamoType`` or has ``to_json`` (a failed attribute
lookup per leaf: ~6% of local mode's embedded AWS in a fan-out, most of it for BatchGetItem's items); a text, a
number, a boolean or None is returned as it is first, and an attribute of a scalar type other than a binary (``S``,
``N``, ``BOOL``, ``NULL``: what moto's walk returns for it) is turned into its ``{type: value}`` at once.

moto 5.2 checks DynamoDB's 400 KB item limit at every attribute it stores, by measuring the whole item again: an
item built with n attributes is measured n times (a task instance's ~25: ~300 sizes per item built, copied or
projected), and each of an update's SETs measures it once more, each value through four type tests. An item built
is measured once, after its last attribute (its attributes are all new, so that is the one of moto's tests that
could fail), and a text's size is taken without the type tests. An item's size is then kept on its attributes: a
write of one attribute adds its size less the old value's, and a removal or an update's change of a nested value
in place forgets it. So an update measures the item once, not at each SET, and an unchanged item is measured once
however often it is read: moto's Query
measured each item it returns twice against its 1 MB page, at every Query (~60% of a Query of the waiting index
with 150 instances waiting, ~20 attributes each, most of them texts; the fan-out's waiting index and runs are
read far more often than written).

moto 5.2 lexes every request's condition and key condition expression again, matching a dozen regular
expressions per token (~5% of the embedded AWS's DynamoDB CPU in a fan-out); the tokens depend on the text alone,
so each text is lexed once, and each request gets fresh copies of its tokens for moto's later passes. A request
then parses its condition twice with the same names and values (its handler, to check every name and value is
used, then its write: ~11% of the embedded AWS's time in a fan-out's requests replayed): the second takes the
first's result (``_conditions_parsed_once_a_request``).

moto 5.2 tests a transaction's condition on each item, then writes the item through its single-item write, which
parses and tests the same condition on the same item again (nothing can change the item in between); inside a
transaction the write is sent without it (~3% of the Python calls of a fan-out's requests replayed,
``bench/request_replay.py``).

``tests/unit/local/test_moto_speedups.py`` checks the responses are identical.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import pickle
import threading
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

from updraft.local import moto_plain_updates, moto_wire

_lock = threading.Lock()
_applied = False
# .partition: (table, hash key) of the Query this thread is answering; .keys_only: it reads a keys-only index;
# .hash_conditions: a global index's partition key conditions (name, DynamoType), which its matches all meet;
# .sizes: the sizes of the items it measured, by id
_queried = threading.local()
_ANY_ORDER = object()  # in place of the hash key: a global index's Query, which sorts what it keeps itself
_alone = threading.local()  # .active: this thread serves the one request moto serves now (``serving_alone``)
_transacting = threading.local()  # .active: this thread runs moto's transact_write_items


def apply() -> None:
    """Patch moto once per process (idempotent)."""
    global _applied
    with _lock:
        if _applied:
            return
        moto_wire.apply()
        _query_one_partition()
        _sort_by_plain_keys()
        _project_keys_only()
        _leaves_as_they_are()
        _item_sizes_once()
        _list_methods_once()
        _validate_update_expressions_once()
        _lex_conditions_once()
        _conditions_parsed_once_a_request()
        moto_plain_updates.apply()  # before the transaction's wrapper, which then wraps it
        _transaction_conditions_once()

        from moto import backends

        modules = tuple(backends.list_of_moto_modules())
        backends.list_of_moto_modules = lambda: modules  # type: ignore[assignment]
        _applied = True


@contextlib.contextmanager
def serving_alone() -> Iterator[None]:
    """Marks the request this thread hands to moto as the only one moto serves meanwhile (a guard that serializes
    every request holds its lock): a Query's matches are then not copied before they are serialized, since nothing
    can write them meanwhile and moto's Query only reads them (its projections build new items)."""
    _alone.active = True
    try:
        yield
    finally:
        _alone.active = False


def _sort_by_plain_keys() -> None:
    from moto.dynamodb.models.table import Table

    sorted_items = Table.sorted_items

    def plain_sorted_items(self: Any, hash_key_attrs: Any, range_key_attrs: Any, items: list[Any]) -> list[Any]:
        attrs = self._generate_attr_to_sort_by(hash_key_attrs, range_key_attrs)
        try:
            keyed = [(tuple([_plain_key(item.attrs[attr]) for attr in attrs]), item) for item in items]
        except (KeyError, TypeError):  # not what a key holds: moto's own sort, and its own error
            return sorted_items(self, hash_key_attrs, range_key_attrs, items)  # type: ignore[no-any-return]
        keyed.sort(key=lambda pair: pair[0])
        items[:] = [item for _, item in keyed]
        return items

    Table.sorted_items = plain_sorted_items  # type: ignore[method-assign]


def _plain_key(value: Any) -> Any:
    """What moto compares a key attribute's value by (``DynamoType.cast_value``: a number's ``Decimal``, a text or
    binary as stored); anything no key can hold raises ``TypeError``."""
    kind = value.type
    if kind == "N":
        return Decimal(value.value)
    if kind in {"S", "B"}:
        return value.value
    raise TypeError(kind)


def _project_keys_only() -> None:
    import copy

    from moto.dynamodb.models import table as table_module
    from moto.dynamodb.models.dynamo_type import Item
    from moto.dynamodb.models.table import SecondaryIndex

    project = SecondaryIndex.project

    def keys_only(self: Any, item: Any) -> Any:
        if not _keys_only(self):
            return project(self, item)
        names = dict.fromkeys([*self.table_key_attrs, *self.schema_key_attrs])
        return Item(hash_key=item.hash_key, range_key=item.range_key,
                    attrs={name: item.attrs[name] for name in names if name in item.attrs})

    class KeysOnlyCopy:
        """``copy`` as moto's table module sees it: the deep copy of a Query's matches is skipped for a keys-only
        index (the projection above copies the few values it keeps) and for a Query served alone
        (``serving_alone``: its matches are only read, while no other request can write them); any other is
        moto's."""

        def __getattr__(self, name: str) -> Any:
            return getattr(copy, name)

        @staticmethod
        def deepcopy(value: Any, memo: Any = None) -> Any:
            if isinstance(value, list) and (getattr(_queried, "keys_only", False) or (
                    getattr(_queried, "partition", None) is not None and getattr(_alone, "active", False))):
                return list(value)
            return copy.deepcopy(value, memo)

    SecondaryIndex.project = keys_only  # type: ignore[method-assign]
    table_module.copy = KeysOnlyCopy()  # type: ignore[assignment]


def _leaves_as_they_are() -> None:
    from moto.dynamodb import responses
    from moto.dynamodb.models import utilities
    from moto.dynamodb.models.dynamo_type import DynamoType

    walk = utilities.dynamo_to_dict
    leaves = (str, int, float, bool, type(None))

    def dynamo_to_dict(obj: Any) -> Any:
        kind = type(obj)
        if kind in leaves:
            return obj
        if kind is DynamoType and obj.type in moto_wire.SCALARS and type(obj.value) in leaves:
            return {obj.type: obj.value}
        return walk(obj)

    utilities.dynamo_to_dict = dynamo_to_dict  # its own recursion calls the module's name: leaves return at once
    responses.dynamo_to_dict = dynamo_to_dict  # type: ignore[attr-defined]


def _item_sizes_once() -> None:
    from moto.dynamodb.exceptions import ItemSizeTooLarge
    from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict
    from moto.dynamodb.models.utilities import bytesize
    from moto.dynamodb.parsing.executors import AddExecutor, DeleteExecutor, RemoveExecutor, SetExecutor

    limit = 405000  # moto's: DynamoDB's 400 KB, as it measured where the real refusal starts

    def size(value: Any) -> int:
        """moto's size of one key or value (``DynamoType.size``), a text's without its four type tests (and an
        ASCII text's without encoding it: its length is its size in UTF-8)."""
        if type(value) is DynamoType:
            if value.type == "S":
                text = value.value
                return len(text) if text.isascii() else bytesize(text)
            return value.size()  # type: ignore[no-any-return]
        if type(value) is str and value.isascii():
            return len(value)
        return bytesize(str(value))

    def measured(attrs: dict[str, Any]) -> int:
        """The item's size, kept on its attributes until they change (``_forgetting``)."""
        known: int | None = attrs.__dict__.get(_SIZE)
        if known is None:
            known = attrs.__dict__[_SIZE] = sum(size(key) + size(value) for key, value in attrs.items())
        return known

    def setitem(self: Any, key: str, value: Any) -> None:
        before, added = measured(self), size(key) + size(value)
        if before + added > limit:  # moto's test: the old value of ``key`` counts too
            raise ItemSizeTooLarge
        old = dict.get(self, key)
        dict.__setitem__(self, key, value)
        self.__dict__[_SIZE] = before + added - (0 if old is None else size(key) + size(old))

    def init(self: Any, hash_key: Any, range_key: Any, attrs: dict[str, Any]) -> None:
        self.hash_key, self.range_key = hash_key, range_key
        self.attrs = LimitedSizeDict()
        for key, value in attrs.items():
            dict.__setitem__(self.attrs, key, DynamoType(value))
        if measured(self.attrs) > limit:  # keys all new: the last of moto's per-key tests is this one
            raise ItemSizeTooLarge

    def item_size(self: Any) -> int:
        return measured(self.attrs)

    for name in ("__delitem__", "pop", "popitem", "clear", "update", "setdefault"):
        setattr(LimitedSizeDict, name, _forgetting(getattr(dict, name)))
    LimitedSizeDict.__setitem__ = setitem  # type: ignore[method-assign,assignment]
    Item.__init__ = init  # type: ignore[method-assign]
    Item.size = item_size  # type: ignore[method-assign]
    # An update's action writes the item's attributes (a SET of a top-level path: ``setitem``) or changes a value in
    # place (a nested path, a set's ADD or DELETE, a REMOVE through ``pop``), which no method of the attributes sees.
    for executor in (AddExecutor, DeleteExecutor, RemoveExecutor, SetExecutor):
        executor.execute = _forgetting_in_place(  # type: ignore[method-assign, assignment]
            executor.execute, top_level_kept=executor is SetExecutor)
    Item.update_with_attribute_updates = _forgetting(  # type: ignore[method-assign]
        Item.update_with_attribute_updates, attrs=True)


def _forgetting_in_place(execute: Callable[[Any, Any], None], *, top_level_kept: bool) -> Callable[[Any, Any], None]:
    """An update action's ``execute``, after which the item's measured size is forgotten, unless
    ``top_level_kept`` and the action's path is a top-level attribute (its write through ``setitem`` kept it)."""

    @functools.wraps(execute)
    def executed(self: Any, item: Any) -> None:
        try:
            execute(self, item)
        finally:
            if not top_level_kept or len(self.get_path_expression_nodes()) > 1:
                item.attrs.__dict__.pop(_SIZE, None)

    return executed


_SIZE = "_updraft_size"  # an item's measured size, on its attributes' dict while they are unchanged


def _forgetting(method: Callable[..., Any], *, attrs: bool = False) -> Callable[..., Any]:
    """``method``, after which the measured size of the attributes it changed (its owner's ``attrs`` if
    ``attrs``) is forgotten."""

    @functools.wraps(method)
    def forgetting(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        finally:
            (self.attrs if attrs else self).__dict__.pop(_SIZE, None)

    return forgetting


def _same_key(value: Any, wanted: Any) -> bool:
    """moto's equality of two key values (``DynamoType.__eq__``), a text's or a binary's without converting them
    (a number's value is compared as a number: "1.0" is 1)."""
    if value is None:
        return False
    if wanted.type in ("S", "B"):
        return value.type == wanted.type and value.value == wanted.value  # type: ignore[no-any-return]
    return value == wanted  # type: ignore[no-any-return]


def _keys_only(index: Any) -> bool:
    return bool((index.projection or {}).get("ProjectionType") == "KEYS_ONLY")


def _list_methods_once() -> None:
    from moto.core import responses

    responses.method_names_from_class = functools.lru_cache(maxsize=None)(  # type: ignore[assignment]
        responses.method_names_from_class)


def _validate_update_expressions_once() -> None:
    from moto.dynamodb.parsing import validators
    from moto.dynamodb.parsing.ast_nodes import DepthFirstTraverser, Node  # type: ignore[attr-defined]
    from moto.dynamodb.parsing.expressions import UpdateExpressionParser  # type: ignore[attr-defined]

    def processing_map(traverser: Any) -> dict[type, Any]:
        cached = traverser.__dict__.get("_updraft_processing_map")
        if cached is None:
            cached = traverser.__dict__["_updraft_processing_map"] = traverser._processing_map()
        return cached  # type: ignore[no-any-return]

    def nodes_to_be_processed(self: Any) -> tuple[type, ...]:
        cached = self.__dict__.get("_updraft_kinds")
        if cached is None:
            cached = self.__dict__["_updraft_kinds"] = tuple(processing_map(self))
        return cached  # type: ignore[no-any-return]

    def process(self: Any, node: Any) -> Any:
        for node_type, processor in processing_map(self).items():
            if isinstance(node, node_type):
                return processor(node)
        return None

    is_node: dict[type, bool] = {}  # a value's type -> whether it is a Node (an ABC, so isinstance is slow)
    processes: dict[tuple[type, ...], dict[type, bool]] = {}  # a traverser's kinds -> a node type -> is it one
    plain_pre = DepthFirstTraverser.pre_processing_of_child

    def is_a(known: dict[type, bool], kind: type, classes: type | tuple[type, ...]) -> bool:
        answer = known.get(kind)
        if answer is None:
            answer = known[kind] = issubclass(kind, classes)
        return answer

    def traverse_node_recursively(self: Any, node: Any, child_id: int = -1) -> Any:
        if not is_a(is_node, type(node), Node):
            return node
        pre = None if type(self).pre_processing_of_child is plain_pre else self.pre_processing_of_child
        kinds = nodes_to_be_processed(self)
        return walk(self, node, child_id, processes.setdefault(kinds, {}), kinds, pre)

    def walk(self: Any, node: Any, child_id: int, processed: dict[type, bool], kinds: tuple[type, ...],
             pre: Any) -> Any:
        """moto's ``traverse_node_recursively`` for a Node, in the same order with the same hooks: children
        first, then the node if the traverser processes its kind, the result taking the node's place."""
        parent = node.parent
        children = node.children
        if children is not None:
            for i, child in enumerate(children):
                if pre is not None:
                    pre(node, i)
                if is_a(is_node, type(child), Node):
                    walk(self, child, i, processed, kinds, pre)
        if is_a(processed, type(node), kinds):
            node = self.process(node)
            node.parent = parent
            if parent:
                parent.children[child_id] = node
        return node

    DepthFirstTraverser.nodes_to_be_processed = nodes_to_be_processed  # type: ignore[method-assign]
    DepthFirstTraverser.process = process  # type: ignore[method-assign]
    DepthFirstTraverser.traverse_node_recursively = traverse_node_recursively  # type: ignore[method-assign]

    for check in (validators.ActionCountValidator, validators.OverlappingPathsValidator):
        def at_the_root(self: Any, node: Any, every_node: Any = check.traverse) -> Any:
            try:
                if isinstance(node, validators.UpdateExpression):
                    self.process(node)
                    return node
            except Exception:  # moto's own walk raises its error, from the node moto raises it at
                pass
            return every_node(self, node)

        check.traverse = at_the_root  # type: ignore[method-assign]

    parse = UpdateExpressionParser.make.__func__
    parsed = functools.lru_cache(maxsize=4096)(functools.partial(parse, UpdateExpressionParser))
    UpdateExpressionParser.make = classmethod(  # type: ignore[method-assign, assignment]
        lambda cls, text: parsed(text) if cls is UpdateExpressionParser else parse(cls, text))

    deepcopy = validators.deepcopy

    def copy_tree(value: Any) -> Any:
        if isinstance(value, Node):
            with contextlib.suppress(pickle.PicklingError, TypeError, AttributeError):
                return pickle.loads(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
        return deepcopy(value)

    validators.deepcopy = copy_tree  # type: ignore[assignment]


def _query_one_partition() -> None:
    from moto.dynamodb.models.table import Table

    query, all_items = Table.query, Table.all_items
    index_position = 7  # query(hash_key, range_comparison, range_objs, limit, start, forward, projection, index_name)

    def partition_query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = args[index_position - 1] if len(args) >= index_position else kwargs.get("index_name")
        local = not index_name or any(index.name == index_name for index in self.indexes or ())
        if not local:
            scope = _ANY_ORDER
        elif hash_key is None or not self.range_key_attr:
            return query(self, hash_key, *args, **kwargs)
        else:
            scope = hash_key
        _queried.partition = (self, scope)
        _queried.hash_conditions = list(kwargs.get("hash_key_conditions") or ()) if scope is _ANY_ORDER else None
        # A keys-only index's matches are not copied whole before the projection copies their keys (moto's Query
        # copies every match: a task instance's ~20 attributes, for the 2-4 a keys-only index returns).
        _queried.keys_only = not local and any(index.name == index_name and _keys_only(index)
                                               for index in self.global_indexes or ())
        try:
            return query(self, hash_key, *args, **kwargs)
        finally:
            _queried.partition = None
            _queried.keys_only = False
            _queried.hash_conditions = None

    def partition_items(self: Any) -> Any:
        queried = getattr(_queried, "partition", None)
        if queried is None or queried[0] is not self:
            return all_items(self)
        if queried[1] is _ANY_ORDER:
            every = self.items.values() if not self.range_key_attr else (
                item for partition in self.items.values() for item in partition.values())
            conditions = getattr(_queried, "hash_conditions", None)
            if not conditions:
                return list(every)
            return [item for item in every
                    if all(_same_key(item.attrs.get(name), wanted) for name, wanted in conditions)]
        partition = dict.get(self.items, queried[1]) or {}
        return sorted(partition.values(), key=lambda item: item.range_key)

    Table.query = partition_query  # type: ignore[method-assign]
    Table.all_items = partition_items  # type: ignore[method-assign]


LEXED_EXPRESSIONS = 4096  # distinct condition texts kept (Updraft's writes use a few dozen)


def _lex_conditions_once() -> None:
    """A condition expression's tokens, lexed once per text (the module's docstring); each request gets fresh
    nodes (moto's later passes are free to build on their ``children``)."""
    from moto.dynamodb.comparisons import ConditionExpressionParser

    lex = ConditionExpressionParser._lex_condition_expression
    known: dict[str, tuple[Any, ...]] = {}

    def lex_once(self: Any) -> Any:
        text = self.condition_expression
        nodes = known.get(text)
        if nodes is None:
            nodes = tuple(lex(self))
            if len(known) < LEXED_EXPRESSIONS:
                known[text] = nodes
        return collections.deque(node._replace(children=list(node.children)) for node in nodes)

    ConditionExpressionParser._lex_condition_expression = lex_once  # type: ignore[method-assign]


PARSED_KEPT = 128  # conditions parsed kept per thread: more than one request's (a transaction has at most 100)


def _conditions_parsed_once_a_request() -> None:
    """A condition parsed again with the very same names and values objects (one request's handler, then its write)
    gives the first parse's result: the same tree and the same names and values found. The objects are kept with
    the result, so no later request's can take their identity, and moto reads them without changing them."""
    from moto.dynamodb.comparisons import ConditionExpressionParser

    parse = ConditionExpressionParser.parse
    kept = threading.local()  # .parsed: {(text, id(names), id(values)): (names, values, tree, found names, values)}

    def parse_once(self: Any) -> Any:
        text, names, values = self.condition_expression, self.expression_attribute_names, \
            self.expression_attribute_values
        if not text:
            return parse(self)
        parsed: dict[tuple[str, int, int], tuple[Any, ...]] = kept.__dict__.setdefault("parsed", {})
        known = parsed.get((text, id(names), id(values)))
        if known is not None and known[0] is names and known[1] is values:
            self.expr_attr_names_found.extend(known[3])
            self.expr_attr_values_found.extend(known[4])
            return known[2]
        tree = parse(self)
        if len(parsed) >= PARSED_KEPT:
            del parsed[next(iter(parsed))]
        parsed[(text, id(names), id(values))] = (names, values, tree, list(self.expr_attr_names_found),
                                                 list(self.expr_attr_values_found))
        return tree

    ConditionExpressionParser.parse = parse_once  # type: ignore[method-assign]


def _transaction_conditions_once() -> None:
    from moto.dynamodb.models import DynamoDBBackend

    transact = DynamoDBBackend.transact_write_items

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        _transacting.active = True
        try:
            transact(self, transact_items)
        finally:
            _transacting.active = False

    def checked_once(write: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(write)
        def written(self: Any, *args: Any, **kwargs: Any) -> Any:
            if getattr(_transacting, "active", False):
                kwargs["condition_expression"] = None  # the transaction's own test of it just passed
            return write(self, *args, **kwargs)

        return written

    DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]
    for name in ("put_item", "update_item", "delete_item"):
        setattr(DynamoDBBackend, name, checked_once(getattr(DynamoDBBackend, name)))
