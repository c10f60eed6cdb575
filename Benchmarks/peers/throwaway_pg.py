#!/usr/bin/env python3
"""A throwaway PostgreSQL cluster for the peer benchmarks.

    throwaway_pg.py start DIR          # initdb + start; prints the socket directory
    throwaway_pg.py stop DIR           # pg_ctl stop -m immediate

The cluster listens on a Unix socket in DIR only (listen_addresses=''), trusts
local connections as user ``postgres``, and keeps PostgreSQL's default
durability (fsync on, synchronous_commit on). When run as root the server runs
as the ``postgres`` user and DIR is chown'ed to it first.

Every subprocess has a timeout; a failure raises PgError naming the step and,
where there is one, the log file to read.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import sys

PORT = 5432
STEP_TIMEOUT_S = 120


class PgError(RuntimeError):
    pass


def bindir() -> str:
    """The newest /usr/lib/postgresql/*/bin holding initdb (or the one on PATH)."""
    cands = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
    )
    if cands:
        return os.path.dirname(cands[-1])
    found = shutil.which("initdb")
    if found:
        return os.path.dirname(found)
    raise PgError("no PostgreSQL binaries: neither /usr/lib/postgresql/*/bin/initdb nor initdb on PATH")


def _paths(directory: str) -> dict[str, str]:
    d = os.path.abspath(directory)
    return {"dir": d, "data": os.path.join(d, "data"), "log": os.path.join(d, "server.log"),
            "initdb_log": os.path.join(d, "initdb.log"), "sock": d}


def _clean_env() -> dict[str, str]:
    # Nothing from the caller's environment (PGDATA, PGHOST, ~/.pgpass...) leaks in.
    return {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "TZ": "UTC"}


def _as_postgres_prefix() -> tuple[list[str], int | None, int | None]:
    if os.geteuid() != 0:
        return [], None, None
    pw = pwd.getpwnam("postgres")
    return ["setpriv", "--reuid", str(pw.pw_uid), "--regid", str(pw.pw_gid), "--clear-groups"], pw.pw_uid, pw.pw_gid


def _run(step: str, argv: list[str], log: str | None = None, timeout: float = STEP_TIMEOUT_S,
         as_server_user: bool = True) -> str:
    prefix = _as_postgres_prefix()[0] if as_server_user else []
    env = _clean_env()
    env["HOME"] = "/nonexistent"
    try:
        out = subprocess.run(prefix + argv, stdin=subprocess.DEVNULL, capture_output=True,
                             text=True, timeout=timeout, env=env, cwd="/")
    except subprocess.TimeoutExpired:
        where = f"; see {log}" if log else ""
        raise PgError(f"{step} timed out after {timeout:.0f} s ({' '.join(argv)}){where}") from None
    except OSError as e:
        raise PgError(f"{step} could not run {argv[0]}: {e}") from None
    if out.returncode != 0:
        where = f"; see {log}" if log else ""
        tail = (out.stderr or out.stdout).strip().splitlines()[-5:]
        raise PgError(f"{step} failed with exit {out.returncode}{where}: " + " | ".join(tail))
    return out.stdout


def start(directory: str, port: int = PORT, max_connections: int = 100) -> str:
    """Create and start a cluster in DIR; return the socket directory."""
    p = _paths(directory)
    os.makedirs(p["dir"], exist_ok=True)
    if os.path.exists(os.path.join(p["data"], "PG_VERSION")):
        raise PgError(f"{p['data']} already holds a cluster; stop it and remove {p['dir']} first")
    _, uid, gid = _as_postgres_prefix()
    if uid is not None:
        os.chown(p["dir"], uid, gid)
        os.chmod(p["dir"], 0o755)
    b = bindir()
    # initdb writes its own output to our log file (the server user must be able to write it).
    with open(p["initdb_log"], "w"):
        pass
    if uid is not None:
        os.chown(p["initdb_log"], uid, gid)
    try:
        out = _run("initdb", [os.path.join(b, "initdb"), "-D", p["data"], "-A", "trust", "-U", "postgres",
                              "-E", "UTF8", "--locale=C.UTF-8"], log=p["initdb_log"])
    except PgError as e:
        with open(p["initdb_log"], "a") as f:
            f.write(str(e) + "\n")
        raise
    with open(p["initdb_log"], "a") as f:
        f.write(out)
    opts = (f"-c listen_addresses='' -c unix_socket_directories='{p['sock']}' -c port={port} "
            f"-c max_connections={max_connections}")
    _run("pg_ctl start", [os.path.join(b, "pg_ctl"), "-D", p["data"], "-l", p["log"], "-w", "-t", "60",
                          "-o", opts, "start"], log=p["log"], timeout=90)
    return p["sock"]


def stop(directory: str, mode: str = "immediate") -> None:
    p = _paths(directory)
    if not os.path.exists(os.path.join(p["data"], "postmaster.pid")):
        return
    _run("pg_ctl stop", [os.path.join(bindir(), "pg_ctl"), "-D", p["data"], "-m", mode, "-w", "-t", "30",
                         "stop"], log=p["log"], timeout=45)


def createdb_at(socket_dir: str, name: str, port: int = PORT) -> None:
    """CREATE DATABASE NAME on the server listening in SOCKET_DIR (runs as the caller)."""
    _run(f"createdb {name}", [os.path.join(bindir(), "createdb"), "-h", socket_dir, "-p", str(port),
                              "-U", "postgres", "-w", name], timeout=60, as_server_user=False)


def server_version(socket_dir: str, port: int = PORT) -> str:
    out = _run("psql (server version)", [os.path.join(bindir(), "psql"), "-h", socket_dir, "-p", str(port),
                                          "-U", "postgres", "-w", "-X", "-A", "-t", "-d", "postgres",
                                          "-c", "show server_version"], timeout=30, as_server_user=False)
    return out.strip()


def main(argv: list[str]) -> int:
    usage = "usage: throwaway_pg.py start DIR | stop DIR"
    if argv[:1] in (["-h"], ["--help"]):
        print(usage + "\n\n" + (__doc__ or "").strip())
        return 0
    if len(argv) < 2:
        print(usage, file=sys.stderr)
        return 2
    cmd, directory = argv[0], argv[1]
    try:
        if cmd == "start" and len(argv) == 2:
            print(start(directory))
        elif cmd == "stop" and len(argv) == 2:
            stop(directory)
        else:
            print(usage, file=sys.stderr)
            return 2
    except PgError as e:
        print(f"throwaway_pg: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
