"""CPU time and context switches of a process tree, from /proc (Linux only).

A TreeSampler is sampled every ~100 ms over a window. Every thread of the root
process and of its descendants is tracked by (pid, tid); a thread or process
that exits during the window counts up to its last sample. Threads and
processes born during the window count from zero.
"""

from __future__ import annotations

import os

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None


def children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        s = _read(f"/proc/{name}/stat")
        if not s:
            continue
        rest = s[s.rindex(")") + 2:].split()
        kids.setdefault(int(rest[1]), []).append(int(name))
    return kids


def tree(root: int) -> list[int]:
    kids = children_map()
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def proc_cpu_ticks(pid: int) -> int | None:
    s = _read(f"/proc/{pid}/stat")
    if not s:
        return None
    rest = s[s.rindex(")") + 2:].split()
    return int(rest[11]) + int(rest[12])  # utime + stime of all its threads, dead ones included


def thread_switches(pid: int) -> dict[int, tuple[str, int, int]]:
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except (FileNotFoundError, ProcessLookupError):
        return out
    for tid in tids:
        st = _read(f"/proc/{pid}/task/{tid}/status")
        comm = (_read(f"/proc/{pid}/task/{tid}/comm") or "?").strip()
        if not st:
            continue
        vol = nonvol = 0
        for line in st.splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                vol = int(line.split()[1])
            elif line.startswith("nonvoluntary_ctxt_switches:"):
                nonvol = int(line.split()[1])
        out[int(tid)] = (comm, vol, nonvol)
    return out


class TreeSampler:
    def __init__(self, root: int):
        self.root = root
        self.cpu_base: dict[int, int] = {}
        self.cpu_last: dict[int, int] = {}
        self.sw_base: dict[tuple[int, int], tuple[int, int]] = {}
        self.sw_last: dict[tuple[int, int], tuple[str, int, int]] = {}
        self.started = False
        self.samples = 0

    def sample(self) -> None:
        first = not self.started
        self.started = True
        self.samples += 1
        for pid in tree(self.root):
            t = proc_cpu_ticks(pid)
            if t is not None:
                if pid not in self.cpu_base:
                    self.cpu_base[pid] = t if first else 0
                self.cpu_last[pid] = t
            for tid, (comm, vol, nonvol) in thread_switches(pid).items():
                key = (pid, tid)
                if key not in self.sw_base:
                    self.sw_base[key] = (vol, nonvol) if first else (0, 0)
                self.sw_last[key] = (comm, vol, nonvol)

    def result(self, window_s: float) -> dict:
        cpu_ticks = sum(self.cpu_last[p] - self.cpu_base[p] for p in self.cpu_last)
        cpu_s = cpu_ticks / CLK_TCK
        threads = []
        total = 0
        for key, (comm, vol, nonvol) in sorted(self.sw_last.items()):
            bv, bn = self.sw_base[key]
            v, n = vol - bv, nonvol - bn
            total += v + n
            threads.append({"pid": key[0], "tid": key[1], "comm": comm, "voluntary": v, "nonvoluntary": n,
                            "per_min": (v + n) * 60.0 / window_s})
        return {"cpu_s": cpu_s, "cpu_percent_of_core": 100.0 * cpu_s / window_s,
                "wakeups_per_min": total * 60.0 / window_s, "context_switches": total,
                "processes": sorted(self.cpu_last), "threads": threads, "samples": self.samples}
