#!/usr/bin/env python3
"""Peer benchmarks: the Python job queues a user would pick instead of
swift-background-tasks, measured the way bgtask-bench measures ours.

  peers.py [--only enqueue,dispatch,idle] [--rounds N] [--count N]
           [--dispatch-samples N] [--idle-seconds S] [--pg-socket DIR]
           [--work DIR] --json OUT

Groups:
  enqueue   durable enqueue, one job per call, sequential, one client:
            jobs/s and per-call latency p50/p99 (plus each peer's batch API
            where it has one, as the "throughput" row)
  dispatch  due instant -> handler's first line, worker in its own process
  idle      CPU and wakeups of an idle huey consumer and an idle APScheduler
            holding 1,000 jobs due in 2 h

Run it with the venv's Python (see README.md). Without --pg-socket it starts a
throwaway PostgreSQL cluster under --work and stops it at the end. Exit code:
0 all rows ran, 1 some row has an "error", 2 usage error.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import json
import os
import platform
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import procstats  # noqa: E402
import throwaway_pg  # noqa: E402

WORKER = os.path.join(HERE, "peer_worker.py")
SITE = "site-packages"
PACKAGES = ["huey", "APScheduler", "SQLAlchemy", "pgqueuer", "asyncpg", "procrastinate", "psycopg",
            "psycopg-pool"]
GROUPS = ("enqueue", "dispatch", "idle")


def ver(pkg: str) -> str:
    try:
        return importlib.metadata.version(pkg)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


class RowError(RuntimeError):
    pass


# --------------------------------------------------------------------------- child processes

class Children:
    """Every process we start: its own session (so its own process group), killed as a group."""

    def __init__(self, env: dict[str, str], logdir: str):
        self.env = env
        self.logdir = logdir
        self.live: list[subprocess.Popen] = []

    def start(self, name: str, args: list[str], pass_fds=(), stdout=subprocess.DEVNULL) -> subprocess.Popen:
        log = open(os.path.join(self.logdir, f"{name}.log"), "ab")
        p = subprocess.Popen([sys.executable, WORKER, *args], stdin=subprocess.DEVNULL, stdout=stdout,
                             stderr=log, env=self.env, cwd=self.logdir, pass_fds=pass_fds,
                             start_new_session=True)
        log.close()
        p.log_path = os.path.join(self.logdir, f"{name}.log")  # type: ignore[attr-defined]
        self.live.append(p)
        return p

    def run(self, name: str, args: list[str], timeout: float, pass_fds=()) -> dict:
        """Run to completion; return the last JSON line it printed."""
        p = self.start(name, args, pass_fds=pass_fds, stdout=subprocess.PIPE)
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RowError(f"{name} timed out after {timeout:.0f} s; see {p.log_path}") from None
        finally:
            self.kill(p)
        lines = [ln for ln in out.decode(errors="replace").splitlines() if ln.startswith("{")]
        if p.returncode != 0 or not lines:
            raise RowError(f"{name} exited with {p.returncode}: {tail(p.log_path)} (log: {p.log_path})")
        return json.loads(lines[-1])

    def kill(self, p: subprocess.Popen, grace: float = 0.0) -> None:
        if p.poll() is None:
            try:
                if grace > 0:
                    os.killpg(p.pid, signal.SIGTERM)
                    try:
                        p.wait(grace)
                    except subprocess.TimeoutExpired:
                        pass
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            pass
        # The group may outlive its leader (e.g. huey process workers).
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if p in self.live:
            self.live.remove(p)

    def kill_all(self) -> None:
        for p in list(self.live):
            self.kill(p)


def tail(path: str, n: int = 3) -> str:
    try:
        with open(path, errors="replace") as f:
            lines = [ln.strip() for ln in f.read().splitlines() if ln.strip()]
        return " | ".join(lines[-n:]) or "(empty log)"
    except OSError:
        return "(no log)"


# --------------------------------------------------------------------------- row descriptions

HUEY_DB_NOTE = ("huey/storage.py:877 SqliteStorage(..., fsync=None, journal_mode='wal', ...); "
                "storage.py:911-912 sets 'pragma synchronous' only when fsync is not None "
                "(2 if fsync else 0)")

ENQUEUE_ROWS = [
    dict(system="huey", variant="defaults", durable=True,
         label="huey {huey} SqliteHuey (defaults)",
         settings=("SqliteHuey(filename=FILE): journal_mode=wal, fsync=None -> no synchronous pragma, "
                   "so SQLite's default synchronous=FULL(2) applies (read back at run time); "
                   "enqueue = calling a @huey.task() function (INSERT in BEGIN EXCLUSIVE, commit)"),
         notes=[HUEY_DB_NOTE,
                "huey 3.5.4's default is fsync=None, not fsync=False: defaults are WAL + synchronous=FULL, "
                "i.e. each commit fsyncs the WAL (durable)"]),
    dict(system="huey", variant="fsync", durable=True,
         label="huey {huey} SqliteHuey(fsync=True)",
         settings="SqliteHuey(filename=FILE, fsync=True): journal_mode=wal, pragma synchronous=2 (FULL)",
         notes=[HUEY_DB_NOTE, "same pragmas as the defaults row on this SQLite (default synchronous is FULL)"]),
    dict(system="huey", variant="fsync-off", durable=False,
         label="huey {huey} SqliteHuey(fsync=False)",
         settings="SqliteHuey(filename=FILE, fsync=False): journal_mode=wal, pragma synchronous=0 (OFF): no fsync",
         notes=[HUEY_DB_NOTE, "not durable: a power loss can lose acknowledged jobs (not a docs recommendation; "
                              "shown as the no-fsync bound)"]),
    dict(system="apscheduler", variant="defaults", durable=True,
         label="APScheduler {APScheduler} BackgroundScheduler + SQLAlchemyJobStore(sqlite) (defaults)",
         settings=("BackgroundScheduler(jobstores={'default': SQLAlchemyJobStore(url='sqlite:///FILE')}, "
                   "timezone=UTC), started; enqueue = add_job(func, 'date', run_date=now+365 d); SQLite defaults: "
                   "rollback journal (DELETE), synchronous=FULL (read back at run time)"),
         notes=["apscheduler/jobstores/sqlalchemy.py:68 create_engine(url, **(engine_options or {})): no pragmas set",
                "the scheduler is started, so each add_job also wakes the scheduler thread "
                "(schedulers/base.py:890 wakeup), which re-reads the store",
                "no throughput variant: APScheduler 3's docs recommend no store settings for throughput"]),
    dict(system="pgqueuer", variant="defaults", durable=True,
         label="PgQueuer {pgqueuer} Queries.enqueue (asyncpg, defaults)",
         settings=("Queries.from_asyncpg_connection(conn).enqueue('bench', payload): one INSERT ... RETURNING per "
                   "job in autocommit; schema from Queries.install() (durability=durable: all tables LOGGED); "
                   "server fsync=on, synchronous_commit=on"),
         notes=["driver: asyncpg (the driver PgQueuer's README and quick start use; psycopg is the alternative)",
                "pgqueuer/adapters/persistence/qb.py:588 build_enqueue_query: the same statement also inserts a "
                "pgqueuer_log row (and the table trigger sends a NOTIFY)"]),
    dict(system="pgqueuer", variant="throughput", durable=True,
         label="PgQueuer {pgqueuer} Queries.enqueue batch of {batch} (asyncpg)",
         settings=("Queries.enqueue(list of entrypoints, list of payloads, list of priorities): one statement "
                   "per batch of {batch} jobs (UNNEST), autocommit"),
         notes=["p50_ms/p99_ms are per call, i.e. per batch of {batch} jobs; per_s counts jobs",
                "p99 over count/{batch} calls only"]),
    dict(system="procrastinate", variant="defaults", durable=True,
         label="procrastinate {procrastinate} defer_async (PsycopgConnector, defaults)",
         settings=("App(connector=PsycopgConnector(conninfo=...)); schema via "
                   "app.schema_manager.apply_schema_async(); enqueue = await task.defer_async(index=i) "
                   "(procrastinate_defer_jobs_v1 in autocommit); server fsync=on, synchronous_commit=on"),
         notes=["async API (procrastinate is async-first); the sync task.defer() goes through the same SQL"]),
    dict(system="procrastinate", variant="throughput", durable=True,
         label="procrastinate {procrastinate} batch_defer_async of {batch}",
         settings="await task.batch_defer_async(*[{'index': i} ...]): one call per batch of {batch} jobs",
         notes=["p50_ms/p99_ms are per call, i.e. per batch of {batch} jobs; per_s counts jobs",
                "p99 over count/{batch} calls only"]),
]

HUEY_CONSUMER_NOTE = ("huey/consumer_options.py:10-17 defaults: workers=1 (thread), initial_delay=0.1, "
                      "backoff=1.15, max_delay=10.0, health_check_interval=10, scheduler_interval=1; "
                      "consumer.py:165 the scheduler interval is clamped to >= 1 s; consumer.py:428 the "
                      "consumer main loop waits 0.1 s at a time")
HUEY_PATH_NOTE = ("path of a task with an eta: task.schedule() inserts it in the task table; a worker "
                  "dequeues it, sees it is not due and adds it to the schedule table (api.py:413-418); the "
                  "scheduler thread moves due entries back to the task table once per scheduler tick; a "
                  "worker polling with back-off dequeues and runs it")

DISPATCH_ROWS = [
    dict(system="huey", variant="defaults",
         label="huey {huey} consumer (defaults)",
         settings="consumer with huey_consumer's defaults: -w 1 -k thread -d 0.1 -b 1.15 -m 10 -S 1",
         worker=["huey-consumer"], consumer_opts=[],
         notes=[HUEY_CONSUMER_NOTE, HUEY_PATH_NOTE,
                "consumer started through huey's own option parser and Huey.create_consumer(**config.values), "
                "the steps of huey/bin/huey_consumer.py, in its own process"]),
    dict(system="huey", variant="throughput",
         label="huey {huey} consumer (-w 8 -k thread -b 1.1 -m 1.0)",
         settings=("consumer with -w 8 -k thread -b 1.1 -m 1.0: the huey docs' example 'with 8 threads ... and a "
                   "very short polling interval' (docs/consumer.rst); -S cannot go below 1 s"),
         worker=["huey-consumer"], consumer_opts=["-w", "8", "-k", "thread", "-b", "1.1", "-m", "1.0"],
         notes=[HUEY_CONSUMER_NOTE, HUEY_PATH_NOTE]),
    dict(system="apscheduler", variant="defaults",
         label="APScheduler {APScheduler} BackgroundScheduler + SQLAlchemyJobStore(sqlite) (defaults)",
         settings=("BackgroundScheduler with SQLAlchemyJobStore(url='sqlite:///FILE'), default ThreadPoolExecutor "
                   "(max_workers=10); job added with add_job(func, 'date', run_date=T) from the same process"),
         notes=["in-process: APScheduler 3 runs its scheduler thread inside the application process, so the job "
                "is added from the process whose thread pool runs the handler (that is how it is deployed)",
                "add_job on a running scheduler wakes the scheduler thread (schedulers/base.py:890), which then "
                "sleeps until the next run time (blocking.py/background.py: event wait with a timeout)"]),
    dict(system="pgqueuer", variant="defaults",
         label="PgQueuer {pgqueuer} worker (asyncpg, defaults)",
         settings=("PgQueuer.from_asyncpg_connection(conn) with one entrypoint, run() with its defaults "
                   "(dequeue_timeout=30 s, batch_size=10); job enqueued with execute_after=T-now"),
         worker=["pgqueuer-worker"],
         notes=["T is read back from the row (execute_after = NOW() + interval on the server)",
                "pgqueuer/core/qm.py:371-388: the worker waits for a NOTIFY or until the next deferred job's eta, "
                "at least min_dequeue_poll_interval=0.1 s (qm.py:89-92)",
                "no separate throughput/latency variant: the defaults already wake at the eta"]),
    dict(system="procrastinate", variant="defaults",
         label="procrastinate {procrastinate} worker (defaults)",
         settings=("app.run_worker() with defaults: concurrency=1, listen_notify=True, "
                   "fetch_job_polling_interval=5.0 s; job deferred with configure(schedule_at=T)"),
         worker=["procrastinate-worker", "defaults"], max_samples=10,
         notes=["procrastinate/worker.py:28-30 WORKER_CONCURRENCY=1, FETCH_JOB_POLLING_INTERVAL=5.0, "
                "ABORT_JOB_POLLING_INTERVAL=5.0; worker.py:695-699 the loop waits for a NOTIFY, the stop event "
                "or a fresh asyncio.sleep(fetch_job_polling_interval)",
                "the insert NOTIFY wakes the worker before the job is due; its fetch finds nothing due and the next "
                "wait starts a new 5 s sleep, so the job starts ~5 s after it was deferred (latency ~ 5 s minus "
                "the 0.2-0.5 s lead)"]),
    dict(system="procrastinate", variant="throughput",
         label="procrastinate {procrastinate} worker (fetch_job_polling_interval=0.1)",
         settings=("app.run_worker(fetch_job_polling_interval=0.1): the knob the docstring names for how often "
                   "jobs are polled (app.py:293-301); listen_notify stays True"),
         worker=["procrastinate-worker", "throughput"],
         notes=["the docs name the knob but recommend no value; 0.1 s is our choice (huey's and PgQueuer's "
                "shortest poll)"]),
]


# --------------------------------------------------------------------------- runs

class Bench:
    def __init__(self, a, children: Children, sock: str | None):
        self.a = a
        self.ch = children
        self.sock = sock
        self.results: list[dict] = []
        self.dbseq = 0
        self.vers = {p: ver(p) for p in PACKAGES}

    def fmt(self, s: str) -> str:
        for k, v in {"batch": str(self.a.batch), **self.vers}.items():
            s = s.replace("{" + k + "}", v)
        return s

    def fresh_sqlite(self, name: str) -> str:
        d = os.path.join(self.a.work, "sqlite")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, f"{name}.db")
        for suffix in ("", "-wal", "-shm", "-journal"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        return path

    def fresh_pg(self, system: str, group: str) -> list[str]:
        if not self.sock:
            raise RowError("no PostgreSQL server (the throwaway cluster did not start)")
        self.dbseq += 1
        name = f"peers_{system}_{group}_{self.dbseq}_{os.getpid()}"
        throwaway_pg.createdb_at(self.sock, name)
        args = ["--pg", self.sock, "--dbname", name]
        self.ch.run(f"{system}-{group}-install", ["pg-install", system, *args], timeout=120)
        return args

    def row(self, group: str, spec: dict, body) -> None:
        base = {"group": group, "system": spec["system"], "variant": spec["variant"],
                "label": self.fmt(spec["label"]), "settings": self.fmt(spec["settings"])}
        if "durable" in spec:
            base["durable"] = spec["durable"]
        notes = [self.fmt(n) for n in spec.get("notes", [])]
        t0 = time.monotonic()
        print(f"[peers] {group}: {base['label']} ...", file=sys.stderr, flush=True)
        try:
            base.update(body(notes))
        except (RowError, throwaway_pg.PgError, OSError, ValueError, KeyError) as e:
            base["error"] = str(e)
        except Exception as e:  # a peer failing must not stop the others
            base["error"] = f"{type(e).__name__}: {e}"
            traceback.print_exc()
        base["notes"] = notes
        base["wall_s"] = round(time.monotonic() - t0, 2)
        msg = base.get("error") or ", ".join(f"{k}={base[k]:.3g}" for k in ("per_s", "p50_ms", "p99_ms", "cpu_s",
                                                                              "wakeups_per_min") if k in base)
        print(f"[peers]   -> {msg}", file=sys.stderr, flush=True)
        self.results.append(base)

    # ---- enqueue
    def enqueue(self) -> None:
        for spec in ENQUEUE_ROWS:
            def body(notes, spec=spec):
                system, variant = spec["system"], spec["variant"]
                if system in ("huey", "apscheduler"):
                    where = ["--db", self.fresh_sqlite(f"enqueue-{system}-{variant}")]
                else:
                    where = self.fresh_pg(system, "enqueue")
                batch = self.a.batch if variant == "throughput" else 1
                per_round = self.a.count / batch
                timeout = 60 + self.a.rounds * per_round * 0.5 + self.a.count * self.a.rounds * 0.02
                r = self.ch.run(f"enqueue-{system}-{variant}",
                                ["enqueue", system, variant, *where, "--count", str(self.a.count),
                                 "--warmup", str(self.a.warmup), "--rounds", str(self.a.rounds),
                                 "--batch", str(self.a.batch)], timeout=timeout)
                rounds = [{k: x[k] for k in ("per_s", "p50_ms", "p99_ms")} for x in r["rounds"]]
                if "observed" in r:
                    notes.append("observed at run time: " + json.dumps(r["observed"], sort_keys=True))
                notes.append(f"warm-up: {self.a.warmup} jobs; {len(rounds)} rounds of {self.a.count} jobs "
                             f"({r['rounds'][0]['calls']} calls per round); figures are medians over rounds; "
                             "percentiles nearest-rank")
                return {"rounds": rounds, "per_s": statistics.median(x["per_s"] for x in rounds),
                        "p50_ms": statistics.median(x["p50_ms"] for x in rounds),
                        "p99_ms": statistics.median(x["p99_ms"] for x in rounds),
                        "count": self.a.count, **({"batch": batch} if batch > 1 else {})}
            self.row("enqueue", spec, body)

    # ---- dispatch
    def dispatch(self) -> None:
        for spec in DISPATCH_ROWS:
            self.row("dispatch", spec, lambda notes, spec=spec: self.dispatch_one(spec, notes))

    def dispatch_one(self, spec: dict, notes: list[str]) -> dict:
        system, variant = spec["system"], spec["variant"]
        samples = self.a.dispatch_samples
        if spec.get("max_samples") and samples > spec["max_samples"]:
            samples = spec["max_samples"]
            notes.append(f"{samples} samples instead of {self.a.dispatch_samples}: with a 5 s polling interval "
                         "each sample takes ~5 s (p50 4.7 s measured)")
        timeout = 120 + samples * 40
        if system == "apscheduler":
            r = self.ch.run("dispatch-apscheduler", ["apscheduler-dispatch", "--db",
                                                     self.fresh_sqlite("dispatch-apscheduler"),
                                                     "--samples", str(samples)], timeout=timeout)
        else:
            if system == "huey":
                where = ["--db", self.fresh_sqlite(f"dispatch-huey-{variant}")]
            else:
                where = self.fresh_pg(system, "dispatch")
            rfd, wfd = os.pipe()
            worker = None
            try:
                wargs = [*spec["worker"], *where, "--report-fd", str(wfd)]
                if spec.get("consumer_opts") is not None:
                    wargs += ["--", *spec["consumer_opts"]]
                worker = self.ch.start(f"dispatch-{system}-{variant}-worker", wargs, pass_fds=(wfd,))
                os.close(wfd)
                wfd = -1
                try:
                    r = self.ch.run(f"dispatch-{system}-{variant}-client",
                                    ["dispatch-client", system, variant, *where, "--samples", str(samples),
                                     "--read-fd", str(rfd)], timeout=timeout, pass_fds=(rfd,))
                except RowError as e:
                    raise RowError(f"{e}; worker log: {tail(worker.log_path)}") from None
            finally:
                os.close(rfd)
                if wfd >= 0:
                    os.close(wfd)
                if worker is not None:
                    self.ch.kill(worker, grace=2.0)
        notes.append(f"one warm-up job (due at once) before the samples; due instants drawn uniformly "
                     f"0.2-0.5 s ahead; samples sequential; latency = handler's time.time() - due instant")
        return {"p50_ms": r["p50_ms"], "p99_ms": r["p99_ms"], "min_ms": r["min_ms"], "max_ms": r["max_ms"],
                "samples": r["samples"], "latencies_ms": [round(x, 3) for x in r["latencies_ms"]]}

    # ---- idle
    def idle(self) -> None:
        jobs, window = 1000, float(self.a.idle_seconds)
        specs = [
            dict(system="huey", variant="defaults",
                 label="huey {huey} consumer (defaults), 1,000 tasks scheduled 2 h ahead",
                 settings="huey consumer, huey_consumer defaults (-w 1 -k thread -d 0.1 -b 1.15 -m 10 -S 1), "
                          "SqliteHuey defaults",
                 notes=[HUEY_CONSUMER_NOTE,
                        "threads: MainThread (stop-flag wait, 0.1 s timeout), Scheduler (1 s tick), Worker "
                        "(polls the task table with back-off 0.1 s x1.15 up to 10 s)",
                        "the worker's back-off restarts at 0.1 s whenever it dequeues something (here: the 1,000 "
                        "tasks it moved to the schedule) and needs ~33 empty polls (~66 s) to reach 10 s, so a "
                        "window opened 2 s after the schedule filled includes that ramp"]),
            dict(system="apscheduler", variant="defaults",
                 label="APScheduler {APScheduler} BackgroundScheduler + SQLAlchemyJobStore(sqlite), "
                       "1,000 date jobs 2 h ahead",
                 settings="BackgroundScheduler(jobstores={'default': SQLAlchemyJobStore(url='sqlite:///FILE')}), "
                          "defaults; process main thread blocked on an Event",
                 notes=["the scheduler thread waits on an Event until the next run time (2 h away)"]),
        ]
        def names_file(system: str) -> str:
            return os.path.join(self.a.work, f"idle-{system}-threads.json")

        state: dict[str, dict] = {}
        procs: list[subprocess.Popen] = []
        try:
            # huey: tasks go in first (task.schedule), then the consumer moves them to its schedule table.
            try:
                hdb = self.fresh_sqlite("idle-huey")
                self.ch.run("idle-huey-fill", ["huey-fill", "--db", hdb, "--jobs", str(jobs), "--ahead", "7200"],
                            timeout=120)
                hp = self.ch.start("idle-huey-consumer", ["huey-consumer", "--db", hdb, "--thread-names",
                                                          names_file("huey"), "--"])
                procs.append(hp)
                deadline = time.time() + 60
                while True:
                    with sqlite3.connect(hdb, timeout=5) as c:
                        sched = c.execute("select count(*) from schedule").fetchone()[0]
                        queued = c.execute("select count(*) from task").fetchone()[0]
                    c.close()
                    if sched == jobs and queued == 0:
                        break
                    if hp.poll() is not None:
                        raise RowError(f"huey consumer exited with {hp.returncode}: {tail(hp.log_path)}")
                    if time.time() > deadline:
                        raise RowError(f"huey consumer had moved {sched}/{jobs} tasks to its schedule after 60 s")
                    time.sleep(0.1)
                state["huey"] = {"proc": hp, "info": {"schedule_rows": sched}}
            except (RowError, OSError, sqlite3.Error) as e:
                state["huey"] = {"error": str(e)}
            try:
                ap = self.ch.start("idle-apscheduler", ["apscheduler-hold", "--db", self.fresh_sqlite("idle-aps"),
                                                       "--jobs", str(jobs), "--ahead", "7200",
                                                       "--thread-names", names_file("apscheduler")],
                                   stdout=subprocess.PIPE)
                procs.append(ap)
                line = read_line(ap, 120)
                if not line:
                    raise RowError(f"APScheduler holder did not get ready: {tail(ap.log_path)}")
                state["apscheduler"] = {"proc": ap, "info": json.loads(line)}
            except (RowError, OSError, ValueError) as e:
                state["apscheduler"] = {"error": str(e)}

            time.sleep(2.0)  # settle
            samplers = {k: procstats.TreeSampler(v["proc"].pid) for k, v in state.items() if "proc" in v}
            t0 = time.monotonic()
            end = t0 + window
            while True:
                now = time.monotonic()
                for s in samplers.values():
                    s.sample()
                if now >= end:
                    break
                time.sleep(min(0.1, max(0.0, end - time.monotonic())))
            elapsed = time.monotonic() - t0
            for k, v in state.items():
                if "proc" in v and v["proc"].poll() is not None:
                    v["error"] = f"{k} exited during the window with {v['proc'].returncode}"
        finally:
            for p in procs:
                self.ch.kill(p)

        for spec in specs:
            def body(notes, spec=spec):
                st = state.get(spec["system"], {"error": "not run"})
                if "error" in st:
                    raise RowError(st["error"])
                r = samplers[spec["system"]].result(elapsed)
                try:
                    with open(names_file(spec["system"])) as f:
                        names = json.load(f)
                except (OSError, ValueError):
                    names = {}
                for t in r["threads"]:
                    if t["pid"] == st["proc"].pid:
                        t["name"] = names.get(str(t["tid"]), "?")
                notes.append("measured concurrently with the other idle peer in one window (both idle, 2 cores); "
                             "CPU = utime+stime of every process of the tree from /proc/PID/stat; wakeups = "
                             "voluntary+nonvoluntary context switches of every thread (/proc/PID/task/*/status), "
                             "sampled every 100 ms, exited threads counted to their last sample")
                notes.append("setup: " + json.dumps(st["info"], sort_keys=True))
                return {"jobs": jobs, "window_s": round(elapsed, 3), "cpu_s": r["cpu_s"],
                        "cpu_percent_of_core": r["cpu_percent_of_core"], "wakeups_per_min": r["wakeups_per_min"],
                        "details": {"threads": r["threads"], "processes": r["processes"],
                                    "context_switches": r["context_switches"], "samples": r["samples"]}}
            self.row("idle", spec, body)


def read_line(p: subprocess.Popen, timeout: float) -> str | None:
    import select
    buf = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        r, _, _ = select.select([p.stdout], [], [], max(0.0, deadline - time.time()))
        if not r:
            break
        chunk = os.read(p.stdout.fileno(), 4096)
        if not chunk:
            break
        buf += chunk
        if b"\n" in buf:
            return buf.split(b"\n", 1)[0].decode()
    return None


# --------------------------------------------------------------------------- main

def machine() -> str:
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), {model}, Linux {platform.release()}"


def parse(argv: list[str]):
    p = argparse.ArgumentParser(prog="peers.py", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--only", default=",".join(GROUPS), help="comma-separated subset of enqueue,dispatch,idle")
    p.add_argument("--rounds", type=int, default=3, help="enqueue rounds (default 3)")
    p.add_argument("--count", type=int, default=1000, help="jobs per enqueue round (default 1000)")
    p.add_argument("--warmup", type=int, default=50, help="enqueue warm-up jobs (default 50)")
    p.add_argument("--batch", type=int, default=100, help="batch size of the batch-enqueue rows (default 100)")
    p.add_argument("--dispatch-samples", type=int, default=30, help="samples per dispatch row (default 30)")
    p.add_argument("--idle-seconds", type=float, default=60.0, help="idle window (default 60)")
    p.add_argument("--pg-socket", help="socket directory of a running PostgreSQL (trust auth, user postgres, "
                                       "port 5432); default: start a throwaway cluster under --work")
    p.add_argument("--work", help="scratch directory (default: a new directory under /tmp)")
    p.add_argument("--json", required=True, help="output file")
    a = p.parse_args(argv)
    a.only = [g.strip() for g in a.only.split(",") if g.strip()]
    bad = [g for g in a.only if g not in GROUPS]
    if bad or not a.only:
        p.error(f"--only takes a subset of {','.join(GROUPS)}; got {bad or 'nothing'}")
    for k in ("rounds", "count", "dispatch_samples", "batch"):
        if getattr(a, k) < 1:
            p.error(f"--{k.replace('_', '-')} must be >= 1")
    if a.idle_seconds <= 0:
        p.error("--idle-seconds must be > 0")
    return a


def main(argv: list[str]) -> int:
    a = parse(argv)
    if a.work is None:
        a.work = tempfile.mkdtemp(prefix="peers-")
    a.work = os.path.abspath(a.work)
    os.makedirs(a.work, exist_ok=True)
    os.chmod(a.work, 0o755)  # the postgres user must reach the cluster directory inside it
    logdir = os.path.join(a.work, "logs")
    home = os.path.join(a.work, "home")
    os.makedirs(logdir, exist_ok=True)
    os.makedirs(home, exist_ok=True)
    # Children get this environment and nothing else: no PG* variables, no PGQUEUER_*, no ~/.pgpass.
    env = {"PATH": f"{os.path.dirname(sys.executable)}:/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8",
           "LC_ALL": "C.UTF-8", "TZ": "UTC", "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    children = Children(env, logdir)

    def on_term(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_term)

    pg_dir = os.path.join(a.work, "pg")
    own_pg = False
    sock = a.pg_socket
    pg_version = None
    pg_error = None
    bench = None
    crash = None
    interrupted = False
    started = dt.datetime.now(dt.timezone.utc)
    try:
        needs_pg = "enqueue" in a.only or "dispatch" in a.only
        if needs_pg and not sock:
            print(f"[peers] starting a throwaway PostgreSQL cluster in {pg_dir}", file=sys.stderr, flush=True)
            own_pg = True
            try:
                sock = throwaway_pg.start(pg_dir)
            except throwaway_pg.PgError as e:
                pg_error = str(e)
                sock = None
        if sock:
            try:
                pg_version = throwaway_pg.server_version(sock)
            except throwaway_pg.PgError as e:
                pg_error = str(e)
                sock = None
        bench = Bench(a, children, sock)
        for g in GROUPS:
            if g in a.only:
                getattr(bench, g)()
    except KeyboardInterrupt:
        interrupted = True
        print("[peers] interrupted; stopping workers", file=sys.stderr, flush=True)
    except Exception as e:  # a bug here must still stop the workers and the cluster, and leave a JSON
        traceback.print_exc()
        crash = f"{type(e).__name__}: {e}"
    finally:
        children.kill_all()
        if own_pg:
            try:
                throwaway_pg.stop(pg_dir)
            except throwaway_pg.PgError as e:
                print(f"[peers] {e}", file=sys.stderr)

    results = bench.results if bench else []
    if pg_error:
        for r in results:
            if r.get("error", "").startswith("no PostgreSQL"):
                r["error"] += f": {pg_error}"
    out = {"tool": "peers", "date": started.isoformat(timespec="seconds"),
           "python": platform.python_version(), "packages": bench.vers if bench else {},
           "machine": machine(), "postgres": pg_version or (f"unavailable: {pg_error}" if pg_error else None),
           "work": a.work, "interrupted": interrupted, "results": results}
    if crash:
        out["error"] = crash
    with open(a.json, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"[peers] wrote {a.json}", file=sys.stderr)
    if interrupted:
        return 130
    return 1 if crash or any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
