#!/usr/bin/env python3
"""How far a planner that *knows* a life could go on issue 10's goals.

    Benchmarks/feasibility/oracle.py [--bgtask PATH] [--seeds A-B] [--days N] [--knowing K] [--hourly] [LIFE ...]

For each life (the built-in scenarios with launches and docs/lives/*.json by default) and
seed, `bgtask simulate LIFE --days N --seed S --json` gives the user's launches and the
device's conditions (launches and conditions do not depend on the policy). The oracle then
plans every day's refreshes knowing, from the *other* seeds' runs of the same life, how
likely a launch is in each 5-minute slot of that day of the scenario's cycle and how likely
refreshing is allowed there (network, Low Power Mode, battery above 20 % or on power); with
`--knowing K`, from the K seeds after it only (cyclically), so that how much history the
plan needs can be measured; with `--hourly`, at the policy's resolution only (each hour's
launch rate, spread evenly from the hour's onset, the slot by which a tenth of its launches
have come, to its end). It
places the refreshes the budget allows (a quarter of the 15-minute timer's wakeups, less 3 a
day for the clean-up's wakes), never closer than the feed reader's 15 minutes, by dynamic
programming over the day for one objective on every life: the expected number of launches
that find content older than the median goal, plus 0.01 per 5 minutes of age (which keeps
the tail in check). A planned refresh that the device forbids runs at the next allowed
instant before the next planned one. It learns nothing and reacts to nothing: it plans from
knowledge the policy can never have (the distribution the scenario draws from, estimated from
the other seeds). It is not a proof of what no policy can do (its objective is a stand-in for
the median and p90 goals, its distribution an estimate from a few seeds, and a policy that
reacts to a long loss of network could beat its tail), but a goal it misses with that
knowledge is a goal a learning policy should not be expected to hold on that life.

It measures itself against the two timers of `bgtask simulate --compare-baselines`,
replayed here over the same launches and conditions (its timers refresh at the instant they
are due, where the simulator's app takes its run's time, so its staleness figures run about
a minute lower than the simulator's for every planner alike) and prints, per life, median and
p90 staleness at launch against the goals, refreshes a day against the budget, and which
goals hold. Needs Python 3 and numpy. BENCHMARKS.md ("How far a planner that knows the life
could go") shows its figures.
"""
import argparse, bisect, concurrent.futures, datetime, json, os, subprocess, sys
import numpy as np

SLOTS, SLOT, DAY = 288, 300.0, 86400.0
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The built-in scenarios' cycles in days (Sources/BackgroundTasksTesting/Scenarios/BuiltInScenarios.swift);
# a scenario file's cycle is its number of days. always-plugged-server has no launches.
BUILT_IN_CYCLES = {"commuter": 7, "office": 7, "night-charger": 7, "travel": 3}


def timeline(binary, life, seed, days):
    """The launches (seconds from the start) and (instant, refreshing allowed) changes of one run."""
    run = subprocess.run([binary, "simulate", life, "--days", str(days), "--seed", str(seed), "--json"],
                         cwd=ROOT, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"oracle.py: bgtask simulate {life} --seed {seed} failed: {run.stderr.strip()}")
    trace = json.loads(run.stdout)
    instant = lambda text: datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    start = instant(trace["start"])
    launches, changes = [], []
    for event in trace["events"]:
        if event["event"] == "lifecycle" and event["to"] == "active":
            launches.append(instant(event["at"]) - start)
        elif event["event"] == "conditions":
            c = event["conditions"]
            allowed = bool(c.get("networkAvailable")) and not c.get("lowPowerMode") and \
                (bool(c.get("externalPower")) or c.get("batteryLevel", 1) > 0.2)
            changes.append((instant(event["at"]) - start, allowed))
    return launches, changes


class Conditions:
    """Whether the device allows a refresh at an instant, from its changes."""
    def __init__(self, changes):
        self.times = [t for t, _ in changes]
        self.allowed = [a for _, a in changes]

    def allows(self, t):
        i = bisect.bisect_right(self.times, t) - 1
        return self.allowed[i] if i >= 0 else True

    def next_allowed(self, t, before):
        """The first instant at or after `t` and before `before` that allows a refresh, or None."""
        if self.allows(t):
            return t
        i = bisect.bisect_right(self.times, t)
        while i < len(self.times) and self.times[i] < before:
            if self.allowed[i]:
                return self.times[i]
            i += 1
        return None


def ages(launches, refreshes):
    """Minutes since the last refresh at each launch (None before the first)."""
    refreshes = sorted(refreshes)
    result = []
    for launch in launches:
        i = bisect.bisect_right(refreshes, launch)
        result.append((launch - refreshes[i - 1]) / 60 if i else None)
    return result


def percentile(values, q):
    """The nearest-rank q-quantile of the ages that are known, as the simulator takes its
    median and p90 (EnergySummary.percentile: the smallest age at least q of them reach)."""
    known = [v for v in values if v is not None]
    return float(np.quantile(known, q, method="inverted_cdf")) if known else float("nan")


def timer(conditions, interval, days):
    """A timer that refreshes every `interval` seconds, at the first allowed instant once due."""
    refreshes, due, end = [], 0.0, days * DAY
    while due < end:
        at = conditions.next_allowed(due, end)
        if at is None:
            break
        refreshes.append(at)
        due = at + interval
    return refreshes


def equal_budget_timer(conditions, count, days):
    """The timer whose interval makes it refresh `count` times over the run (or as close as
    an interval can), found by bisection on a log scale, as the simulator finds its
    equal-budget timer: an interval of days / count alone refreshes less often wherever
    the device forbids a due refresh, which would flatter the oracle's p90 goal."""
    low, high = 60.0, days * DAY  # low refreshes at least `count` times, high at most once
    if count <= 1:
        return timer(conditions, high, days)
    for _ in range(40):
        middle = (low * high) ** 0.5
        if len(timer(conditions, middle, days)) >= count:
            low = middle
        else:
            high = middle
        if high / low < 1.001:
            break
    return timer(conditions, low, days)


def knowledge(runs, cycle, days, hourly=False):
    """Per day of the cycle and 5-minute slot: expected launches (smoothed with its neighbours, ±5 min) and
    the share of days on which refreshing is allowed, over the given runs; `hourly`: each
    hour's launches spread evenly from its onset (a tenth of them before it) to its end."""
    launches = np.zeros((cycle, SLOTS))
    allowed = np.zeros((cycle, SLOTS))
    seen = np.zeros(cycle)
    for times, conditions in runs:
        for day in range(days):
            seen[day % cycle] += 1
            allowed[day % cycle] += [conditions.allows(day * DAY + (i + 0.5) * SLOT) for i in range(SLOTS)]
        for t in times:
            launches[int(t // DAY) % cycle, int(t % DAY // SLOT)] += 1
    # A day of the cycle the runs never reached (--days shorter than the cycle): nothing known.
    seen = np.maximum(seen, 1)
    launches /= seen[:, None]
    allowed /= seen[:, None]
    if hourly:
        per_hour = SLOTS // 24
        for row in launches:
            for hour in range(24):
                part = row[hour * per_hour:(hour + 1) * per_hour]
                total = part.sum()
                if total > 0:
                    onset = int(np.argmax(np.cumsum(part) >= 0.1 * total))
                    part[:] = 0
                    part[onset:] = total / (per_hour - onset)
    kernel = np.array([1, 2, 1]) / 4
    launches = np.array([np.convolve(np.concatenate([row[-1:], row, row[:1]]), kernel, mode="valid") for row in launches])
    return launches, allowed


def plan(density, allowed, count, cost, gap=3, pre=36):
    """The slots of `count` refreshes over one day minimising the expected cost of the
    launches' ages (`cost` of an age in slots), refreshes at least `gap` slots apart and only
    in slots allowed on at least half the days. The day is cut at its quietest hour; launches
    before the first refresh are taken as `pre` slots older than the day's start."""
    window = np.convolve(np.concatenate([density, density[:11]]), np.ones(12), mode="valid")
    cut = int(np.argmin(window))
    lam = np.roll(density, -cut)
    usable = np.roll(allowed, -cut) >= 0.5
    costs = cost(np.arange(SLOTS) + 0.5)
    serve = np.full((SLOTS + 1, SLOTS + 1), np.inf)  # serve[i, j]: a refresh at i serves slots i..<j
    for i in range(SLOTS):
        if usable[i]:
            serve[i, i + 1:] = np.cumsum(lam[i:] * costs[:SLOTS - i])
            serve[i, i + 1:min(SLOTS, i + gap)] = np.inf
    before = np.concatenate([[0], np.cumsum(lam * cost(np.arange(SLOTS) + 0.5 + pre))])
    first = np.where(usable[:, None], before[:SLOTS, None] + serve[:SLOTS, :], np.inf)
    first_at = np.argmin(first, axis=0)
    best = first[first_at, np.arange(SLOTS + 1)]
    choices = []
    for _ in range(1, count):
        total = best[:SLOTS, None] + serve[:SLOTS, :]
        at = np.argmin(total, axis=0)
        best = total[at, np.arange(SLOTS + 1)]
        choices.append(at)
    slots, j = [], SLOTS
    for at in reversed(choices):
        j = int(at[j])
        slots.append(j)
    slots.append(int(first_at[j]))
    return sorted({(s + cut) % SLOTS for s in slots if s < SLOTS})


def oracle(conditions, density, allowed, cycle, count, cost, days, gap=3):
    refreshes, plans = [], {}
    for day in range(days):
        phase = day % cycle
        if phase not in plans:
            plans[phase] = plan(density[phase], allowed[phase], count, cost, gap)
        planned = [day * DAY + s * SLOT for s in plans[phase]]
        for k, at in enumerate(planned):
            following = planned[k + 1] if k + 1 < len(planned) else (day + 1) * DAY
            if refreshes and at < refreshes[-1] + gap * SLOT:
                at = refreshes[-1] + gap * SLOT
            if at >= following:
                continue
            actual = conditions.next_allowed(at, following)
            if actual is not None:
                refreshes.append(actual)
    return refreshes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bgtask", default=os.path.join(ROOT, ".build/release/bgtask"))
    parser.add_argument("--seeds", default="1-5", help="A-B, at least two seeds (default 1-5)")
    parser.add_argument("--days", type=int, default=28)
    parser.add_argument("--knowing", type=int, help="learn each seed's life from this many other seeds (default: all the others)")
    parser.add_argument("--hourly", action="store_true", help="know only each hour's launch rate and onset (the policy's resolution)")
    parser.add_argument("lives", nargs="*")
    args = parser.parse_args()
    first, _, last = args.seeds.partition("-")
    if not (first.isdigit() and (last or first).isdigit()):
        parser.error(f"--seeds expects A-B (whole numbers), found {args.seeds!r}")
    seeds = list(range(int(first), int(last or first) + 1))
    if len(seeds) < 2:
        parser.error("--seeds needs at least two seeds: the oracle learns each seed's life from the others")
    if not os.access(args.bgtask, os.X_OK):
        parser.error(f"--bgtask {args.bgtask}: no executable there (build it: swift build -c release --product bgtask)")
    if not 1 <= args.days <= 366:
        parser.error("--days must be 1 to 366")
    knowing = len(seeds) - 1 if args.knowing is None else args.knowing
    if not 1 <= knowing < len(seeds):
        parser.error(f"--knowing must be 1 to {len(seeds) - 1} (the other seeds)")
    lives = args.lives or list(BUILT_IN_CYCLES) + sorted(
        "docs/lives/" + f for f in os.listdir(os.path.join(ROOT, "docs/lives")) if f.endswith(".json"))
    jobs = [(life, seed) for life in lives for seed in seeds]
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        runs = dict(zip(jobs, pool.map(lambda job: timeline(args.bgtask, job[0], job[1], args.days), jobs)))
    held_lives, held_goals = 0, [0, 0, 0]
    print(f"{'life':24s} {'median min':>14s} {'p90 min':>16s} {'refreshes/day':>15s}  goals (wakeups, median, p90)")
    for life in lives:
        name = os.path.basename(life).removesuffix(".json")
        cycle = BUILT_IN_CYCLES.get(name) or len(json.load(open(os.path.join(ROOT, life)))["days"])
        sample = {seed: (runs[life, seed][0], Conditions(runs[life, seed][1])) for seed in seeds}
        policy_ages, timer_ages, equal_ages, refreshes, timer_refreshes = [], [], [], 0, 0
        for seed in seeds:
            launches, conditions = sample[seed]
            timer15 = timer(conditions, 900, args.days)
            timer_refreshes += len(timer15)
            timer_ages += ages(launches, timer15)
        budget = timer_refreshes / len(seeds) / args.days / 4
        median_goal = 1.25 * percentile(timer_ages, 0.5)
        goal_slots = median_goal * 60 / SLOT
        cost = lambda age: (age > goal_slots).astype(float) + 0.01 * age
        count = max(1, int(budget - 3))
        for seed in seeds:
            launches, conditions = sample[seed]
            position = seeds.index(seed)
            others = [seeds[(position + k) % len(seeds)] for k in range(1, knowing + 1)]
            density, allowed = knowledge([sample[s] for s in others], cycle, args.days, args.hourly)
            planned = oracle(conditions, density, allowed, cycle, count, cost, args.days)
            refreshes += len(planned)
            policy_ages += ages(launches, planned)
            equal_ages += ages(launches, equal_budget_timer(conditions, len(planned), args.days))
        per_day = refreshes / len(seeds) / args.days
        median, p90, equal_p90 = percentile(policy_ages, 0.5), percentile(policy_ages, 0.9), percentile(equal_ages, 0.9)
        goals = (per_day + 3 <= budget, median <= median_goal, p90 <= equal_p90)
        held_lives += all(goals)
        held_goals = [a + b for a, b in zip(held_goals, goals)]
        print(f"{name:24s} {median:6.1f} / {median_goal:5.1f} {p90:7.1f} / {equal_p90:6.1f} {per_day:6.1f} / {budget:5.1f}   "
              + " ".join("held" if g else "MISS" for g in goals))
    print(f"all three goals on {held_lives} of {len(lives)} lives; held: wakeups {held_goals[0]}, median {held_goals[1]}, p90 {held_goals[2]}")


if __name__ == "__main__":
    main()
