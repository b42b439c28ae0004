"""The process's one cache of serialized DAG versions: bounded, most recently used kept."""

from __future__ import annotations

import threading

from updraft.store.lru import LruCache


def test_keeps_the_most_recently_used_entries():
    cache = LruCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recent
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    assert len(cache) == 2


def test_is_safe_across_threads():
    cache = LruCache(8)

    def work(n: int) -> None:
        for i in range(500):
            cache.put((n, i % 16), i)
            cache.get((n, (i + 1) % 16))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 8
