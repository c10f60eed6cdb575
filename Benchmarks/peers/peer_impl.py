"""Peer-side code for peers.py: every call into huey, APScheduler, PgQueuer or
procrastinate happens in a process running this script, so peers.py can put a
timeout on it and kill its whole process group.

Subcommands (peers.py builds these argument lists; each prints one JSON line
on stdout when it has a result):

  enqueue SYSTEM VARIANT --count N --warmup N --rounds N --batch N
          [--db FILE | --pg SOCKET --dbname NAME]
  dispatch-client SYSTEM VARIANT --samples N --read-fd FD [--db FILE | --pg ...]
  apscheduler-dispatch --db FILE --samples N
  huey-consumer --db FILE --report-fd FD -- [huey_consumer options]
  pgqueuer-worker --pg SOCKET --dbname NAME --report-fd FD
  procrastinate-worker VARIANT --pg SOCKET --dbname NAME --report-fd FD
  pg-install SYSTEM --pg SOCKET --dbname NAME
  huey-fill --db FILE --jobs N --ahead S
  apscheduler-hold --db FILE --jobs N --ahead S

The handlers of the dispatch benchmark take time.time() on their first line
and write "INDEX TIME" to the report pipe (an inherited file descriptor).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import math
import os
import random
import select
import sys
import threading
import time

UTC = dt.timezone.utc
REPORT_FD: int | None = None
SAMPLE_GIVE_UP_S = 30.0


# --------------------------------------------------------------------------- helpers

def report(index, started: float) -> None:
    if REPORT_FD is not None:
        os.write(REPORT_FD, f"{index} {started!r}\n".encode())


def pct(sorted_vals: list[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    n = len(sorted_vals)
    return sorted_vals[max(0, min(n - 1, math.ceil(q * n) - 1))]


def emit(obj) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def round_figures(latencies_s: list[float], jobs: int, elapsed_s: float) -> dict:
    lat = sorted(latencies_s)
    return {"per_s": jobs / elapsed_s, "p50_ms": pct(lat, 0.50) * 1e3, "p99_ms": pct(lat, 0.99) * 1e3,
            "calls": len(lat), "elapsed_s": elapsed_s}


def run_rounds(call, count: int, warmup: int, rounds: int, batch: int) -> list[dict]:
    """call(first_index, n) enqueues n jobs in one call; sequential, one client."""
    i = 0
    done = 0
    while done < warmup:
        n = min(batch, warmup - done)
        call(i, n)
        i += n
        done += n
    out = []
    for _ in range(rounds):
        lat = []
        done = 0
        t0 = time.perf_counter()
        while done < count:
            n = min(batch, count - done)
            s = time.perf_counter()
            call(i, n)
            lat.append(time.perf_counter() - s)
            i += n
            done += n
        out.append(round_figures(lat, count, time.perf_counter() - t0))
    return out


def pg_conninfo(sock: str, dbname: str) -> str:
    return f"host={sock} port=5432 dbname={dbname} user=postgres connect_timeout=10"


async def pg_settings_asyncpg(conn) -> dict:
    keys = ["fsync", "synchronous_commit", "wal_sync_method", "full_page_writes"]
    return {k: await conn.fetchval(f"show {k}") for k in keys}


def sqlite_pragmas(conn) -> dict:
    return {"journal_mode": conn.execute("pragma journal_mode").fetchone()[0],
            "synchronous": conn.execute("pragma synchronous").fetchone()[0]}


# --------------------------------------------------------------------------- huey

HUEY_KW = {"defaults": {}, "fsync": {"fsync": True}, "fsync-off": {"fsync": False}}


def make_huey(db: str, variant: str = "defaults"):
    from huey import SqliteHuey
    h = SqliteHuey(name="bench", filename=db, **HUEY_KW[variant])

    @h.task(name="bench_handler")
    def bench_handler(index):
        started = time.time()
        report(index, started)

    return h, bench_handler


def huey_enqueue(a) -> dict:
    h, task = make_huey(a.db, a.variant)
    rounds = run_rounds(lambda i, n: task(i), a.count, a.warmup, a.rounds, 1)
    observed = sqlite_pragmas(h.storage.conn)
    return {"rounds": rounds, "observed": observed, "queued": h.pending_count()}


def write_thread_names(path: str | None) -> None:
    """Python thread names by native thread id, for the idle report (Linux comm is just 'python')."""
    if path:
        names = {str(t.native_id): t.name for t in threading.enumerate()}
        with open(path + ".tmp", "w") as f:
            json.dump(names, f)
        os.replace(path + ".tmp", path)


def write_thread_names_later(path: str | None, delay: float = 1.0) -> None:
    # A short-lived helper thread: it names the consumer's threads once they exist, then exits
    # (long before peers.py opens its measurement window).
    if path:
        threading.Thread(target=lambda: (time.sleep(delay), write_thread_names(path)), name="names",
                         daemon=True).start()


def huey_consumer(a, rest: list[str]) -> None:
    # The same steps as huey's own huey_consumer entry point (huey/bin/huey_consumer.py),
    # with the Huey instance built here instead of imported by dotted path.
    global REPORT_FD
    REPORT_FD = a.report_fd
    import logging
    from huey.consumer_options import ConsumerConfig, OptionParserHandler
    parser = OptionParserHandler().get_option_parser()
    options, args = parser.parse_args(rest)
    if args:
        raise SystemExit(f"huey-consumer: unexpected arguments {args}")
    config = ConsumerConfig(**{k: v for k, v in options.__dict__.items() if v is not None})
    config.validate()
    h, _ = make_huey(a.db, "defaults")
    config.setup_logger(logging.getLogger("huey"))
    write_thread_names_later(a.thread_names)
    h.create_consumer(**config.values).run()


def huey_fill(a) -> dict:
    h, task = make_huey(a.db, "defaults")
    eta = dt.datetime.fromtimestamp(time.time() + a.ahead, UTC)
    for i in range(a.jobs):
        task.schedule(args=(i,), eta=eta)
    return {"queued": h.pending_count()}


def huey_dispatch_submit(a):
    h, task = make_huey(a.db, "defaults")

    def submit(index, due: float) -> float:
        task.schedule(args=(index,), eta=dt.datetime.fromtimestamp(due, UTC))
        return due
    return submit, (lambda: None)


# --------------------------------------------------------------------------- APScheduler 3

def aps_noop(index):
    pass


APS_QUEUE = None


def aps_handler(index):
    started = time.time()
    APS_QUEUE.put((index, started))


def make_aps(db: str):
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.schedulers.background import BackgroundScheduler
    store = SQLAlchemyJobStore(url=f"sqlite:///{db}")
    sched = BackgroundScheduler(jobstores={"default": store}, timezone=UTC)
    sched.start()
    return sched, store


def aps_observed(store) -> dict:
    with store.engine.connect() as c:
        return {"journal_mode": c.exec_driver_sql("pragma journal_mode").scalar(),
                "synchronous": c.exec_driver_sql("pragma synchronous").scalar()}


def aps_enqueue(a) -> dict:
    sched, store = make_aps(a.db)
    far = dt.datetime.now(UTC) + dt.timedelta(days=365)
    try:
        rounds = run_rounds(lambda i, n: sched.add_job(aps_noop, "date", run_date=far, args=[i]),
                            a.count, a.warmup, a.rounds, 1)
        return {"rounds": rounds, "observed": aps_observed(store), "jobs": len(sched.get_jobs())}
    finally:
        sched.shutdown(wait=False)


def aps_dispatch(a) -> dict:
    import queue
    global APS_QUEUE
    APS_QUEUE = queue.Queue()
    sched, store = make_aps(a.db)
    try:
        def submit(index, due):
            sched.add_job(aps_handler, "date", run_date=dt.datetime.fromtimestamp(due, UTC), args=[index])
            return due

        def wait(index, deadline):
            while True:
                left = deadline - time.time()
                if left <= 0:
                    return None
                try:
                    got, started = APS_QUEUE.get(timeout=left)
                except queue.Empty:
                    return None
                if got == index:
                    return started
        return dispatch_loop(submit, wait, a.samples)
    finally:
        sched.shutdown(wait=False)


def aps_hold(a) -> None:
    sched, store = make_aps(a.db)
    when = dt.datetime.now(UTC) + dt.timedelta(seconds=a.ahead)
    for i in range(a.jobs):
        sched.add_job(aps_noop, "date", run_date=when, args=[i])
    write_thread_names(a.thread_names)
    emit({"ready": True, "jobs": len(sched.get_jobs()), "observed": aps_observed(store)})
    threading.Event().wait()  # the main thread sleeps; the scheduler thread does the work


# --------------------------------------------------------------------------- PgQueuer

async def pgq_connect(a):
    import asyncpg
    return await asyncpg.connect(host=a.pg, port=5432, database=a.dbname, user="postgres", timeout=10)


async def pgq_install(a) -> dict:
    from pgqueuer.queries import Queries
    conn = await pgq_connect(a)
    try:
        q = Queries.from_asyncpg_connection(conn)
        if not await q.schema_is_installed():
            await q.install()
        return {"installed": True, "settings": await pg_settings_asyncpg(conn)}
    finally:
        await conn.close()


def pgq_enqueue(a) -> dict:
    from pgqueuer.queries import Queries
    loop = asyncio.new_event_loop()
    conn = loop.run_until_complete(pgq_connect(a))
    q = Queries.from_asyncpg_connection(conn)

    def call(i, n):
        if a.variant == "throughput":
            loop.run_until_complete(q.enqueue(["bench"] * n, [str(i + k).encode() for k in range(n)], [0] * n))
        else:
            loop.run_until_complete(q.enqueue("bench", str(i).encode()))
    try:
        rounds = run_rounds(call, a.count, a.warmup, a.rounds, a.batch if a.variant == "throughput" else 1)
        settings = loop.run_until_complete(pg_settings_asyncpg(conn))
        return {"rounds": rounds, "observed": settings}
    finally:
        loop.run_until_complete(conn.close())
        loop.close()


def pgq_worker(a) -> None:
    global REPORT_FD
    REPORT_FD = a.report_fd
    from pgqueuer import PgQueuer

    async def main():
        conn = await pgq_connect(a)
        pgq = PgQueuer.from_asyncpg_connection(conn)

        @pgq.entrypoint("bench")
        async def bench(job) -> None:
            started = time.time()
            report(job.payload.decode(), started)

        await pgq.run()  # documented defaults: dequeue_timeout=30 s, batch_size=10
    asyncio.run(main())


def pgq_dispatch_submit(a):
    from pgqueuer.queries import Queries
    loop = asyncio.new_event_loop()
    conn = loop.run_until_complete(pgq_connect(a))
    q = Queries.from_asyncpg_connection(conn)

    async def go(index, due):
        ids = await q.enqueue("bench", str(index).encode(), execute_after=dt.timedelta(seconds=max(0.0, due - time.time())))
        # execute_after is stored as NOW() + interval on the server; read back the exact instant.
        return float(await conn.fetchval("select extract(epoch from execute_after) from pgqueuer where id = $1", ids[0]))

    def close():
        loop.run_until_complete(conn.close())
        loop.close()
    return (lambda index, due: loop.run_until_complete(go(index, due))), close


# --------------------------------------------------------------------------- procrastinate

def make_procrastinate(a):
    import procrastinate
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=pg_conninfo(a.pg, a.dbname)))

    @app.task(name="bench_handler")
    async def bench_handler(index):
        started = time.time()
        report(index, started)

    return app, bench_handler


async def proc_install(a) -> dict:
    app, _ = make_procrastinate(a)
    async with app.open_async():
        await app.schema_manager.apply_schema_async()
    return {"installed": True}


def proc_enqueue(a) -> dict:
    app, task = make_procrastinate(a)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(app.open_async())

    def call(i, n):
        if a.variant == "throughput":
            loop.run_until_complete(task.batch_defer_async(*({"index": i + k} for k in range(n))))
        else:
            loop.run_until_complete(task.defer_async(index=i))
    try:
        rounds = run_rounds(call, a.count, a.warmup, a.rounds, a.batch if a.variant == "throughput" else 1)
        return {"rounds": rounds}
    finally:
        loop.run_until_complete(app.close_async())
        loop.close()


PROC_WORKER_KW = {"defaults": {}, "throughput": {"fetch_job_polling_interval": 0.1}}


def proc_worker(a) -> None:
    global REPORT_FD
    REPORT_FD = a.report_fd
    app, _ = make_procrastinate(a)
    app.run_worker(**PROC_WORKER_KW[a.variant])


def proc_dispatch_submit(a):
    app, task = make_procrastinate(a)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(app.open_async())

    def submit(index, due):
        loop.run_until_complete(task.configure(schedule_at=dt.datetime.fromtimestamp(due, UTC)).defer_async(index=index))
        return due

    def close():
        loop.run_until_complete(app.close_async())
        loop.close()
    return submit, close


# --------------------------------------------------------------------------- dispatch loop

def pipe_waiter(fd: int):
    buf = b""

    def wait(index, deadline):
        nonlocal buf
        want = str(index)
        while True:
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                parts = line.decode().split()
                if len(parts) == 2 and parts[0] == want:
                    return float(parts[1])
            left = deadline - time.time()
            if left <= 0:
                return None
            r, _, _ = select.select([fd], [], [], left)
            if r:
                chunk = os.read(fd, 4096)
                if not chunk:
                    raise RuntimeError("the worker closed the report pipe (did it exit?)")
                buf += chunk
    return wait


def dispatch_loop(submit, wait, samples: int) -> dict:
    # One warm-up job, due now: proves the worker runs and warms its code paths.
    t = submit("warmup", time.time())
    if wait("warmup", time.time() + 60) is None:
        raise RuntimeError("the warm-up job did not start within 60 s (is the worker running?)")
    lat = []
    for k in range(samples):
        due = submit(k, time.time() + random.uniform(0.2, 0.5))
        started = wait(k, due + SAMPLE_GIVE_UP_S)
        if started is None:
            raise RuntimeError(f"sample {k}: the handler had not started {SAMPLE_GIVE_UP_S:.0f} s after its due instant")
        lat.append(started - due)
    s = sorted(lat)
    return {"latencies_ms": [x * 1e3 for x in lat], "p50_ms": pct(s, 0.5) * 1e3, "p99_ms": pct(s, 0.99) * 1e3,
            "min_ms": s[0] * 1e3, "max_ms": s[-1] * 1e3, "samples": len(s)}


def dispatch_client(a) -> dict:
    makers = {"huey": huey_dispatch_submit, "pgqueuer": pgq_dispatch_submit, "procrastinate": proc_dispatch_submit}
    submit, close = makers[a.system](a)
    try:
        return dispatch_loop(submit, pipe_waiter(a.read_fd), a.samples)
    finally:
        close()


# --------------------------------------------------------------------------- main

def main(argv: list[str]) -> int:
    rest: list[str] = []
    if "--" in argv:
        k = argv.index("--")
        argv, rest = argv[:k], argv[k + 1:]
    p = argparse.ArgumentParser(prog="peer_worker.py")
    p.add_argument("command")
    p.add_argument("positional", nargs="*")
    p.add_argument("--db")
    p.add_argument("--pg")
    p.add_argument("--dbname")
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--samples", type=int, default=30)
    p.add_argument("--read-fd", type=int)
    p.add_argument("--report-fd", type=int)
    p.add_argument("--jobs", type=int, default=1000)
    p.add_argument("--ahead", type=float, default=7200.0)
    p.add_argument("--thread-names")
    a = p.parse_args(argv)
    a.system = a.positional[0] if a.positional else None
    a.variant = a.positional[1] if len(a.positional) > 1 else (a.positional[0] if a.command == "procrastinate-worker" and a.positional else "defaults")
    c = a.command
    if c == "enqueue":
        fn = {"huey": huey_enqueue, "apscheduler": aps_enqueue, "pgqueuer": pgq_enqueue,
              "procrastinate": proc_enqueue}[a.system]
        emit(fn(a))
    elif c == "dispatch-client":
        emit(dispatch_client(a))
    elif c == "apscheduler-dispatch":
        emit(aps_dispatch(a))
    elif c == "huey-consumer":
        huey_consumer(a, rest)
    elif c == "pgqueuer-worker":
        pgq_worker(a)
    elif c == "procrastinate-worker":
        proc_worker(a)
    elif c == "pg-install":
        emit(asyncio.run({"pgqueuer": pgq_install, "procrastinate": proc_install}[a.system](a)))
    elif c == "huey-fill":
        emit(huey_fill(a))
    elif c == "apscheduler-hold":
        aps_hold(a)
    else:
        p.error(f"unknown command {c}")
    return 0


