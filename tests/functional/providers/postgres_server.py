"""A throwaway PostgreSQL server for the provider tests: Debian's binaries (``make postgresql`` installs them), a
fresh cluster in a temporary folder, listening on 127.0.0.1 at a free port, trust authentication for its one
user, stopped (fast shutdown) and deleted when the context exits.

PostgreSQL refuses to run as root: as root the cluster belongs to, and the server runs as, the ``postgres``
user when there is one, else nobody (65534).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

USER = "updraft"


def binaries() -> Path | None:
    """The newest installed PostgreSQL's bin folder (Debian keeps each major version apart), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _run_as() -> tuple[int, int] | None:
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam("postgres")
        return entry.pw_uid, entry.pw_gid
    except KeyError:
        return 65534, 65534


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def postgres_server(bin_dir: Path) -> Iterator[str]:
    """Yields the connection URI (``postgresql://updraft@127.0.0.1:<port>/postgres``)."""
    owner = _run_as()
    ids = {"user": owner[0], "group": owner[1], "extra_groups": []} if owner else {}
    folder = Path(tempfile.mkdtemp(prefix="updraft-postgres-"))
    try:
        if owner:
            os.chown(folder, *owner)
        data = folder / "data"
        subprocess.run([str(bin_dir / "initdb"), "-D", str(data), "-U", USER, "-A", "trust", "--no-sync",
                        "-E", "UTF8", "--locale", "C"],
                       check=True, capture_output=True, cwd=folder, **ids)
        port = _free_port()
        server = subprocess.Popen(
            [str(bin_dir / "postgres"), "-D", str(data), "-k", str(folder), "-p", str(port),
             "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off"],
            cwd=folder, stdout=subprocess.DEVNULL, stderr=(folder / "server.log").open("wb"), **ids)
        try:
            deadline = time.monotonic() + 30
            while subprocess.run([str(bin_dir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port)],
                                 capture_output=True, check=False).returncode != 0:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"PostgreSQL did not start:\n{(folder / 'server.log').read_text()}")
                time.sleep(0.1)
            yield f"postgresql://{USER}@127.0.0.1:{port}/postgres"
        finally:
            server.send_signal(signal.SIGINT)  # fast shutdown: ends the sessions, then exits
            try:
                server.wait(15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
