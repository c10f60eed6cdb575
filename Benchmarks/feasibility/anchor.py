#!/usr/bin/env python3
"""Is a user's day better predicted by the clock or by when the day began?

    Benchmarks/feasibility/anchor.py [--bgtask PATH] [--gap HOURS] [--seeds A-B] [--days N] [LIFE ...]

Issue 10's lives that miss most (shift work, a traveller seven hours ahead, a student up
between 07:15 and 12:30) have days whose shape may hold while the clock time moves. This
asks, before building anything, whether launches are better foreseen by the hours since
the day's first launch (an *anchor*: a launch after GAP hours or more without one) than by
the hour of the day, using the launches of `bgtask simulate LIFE --days N --seed S --json`
(launches do not depend on the policy).

Both models are learned online from the run itself, as a policy would learn them: for
every hour of the run, the probability of at least one launch in it is predicted from
decayed counts (half-life 14 days, as the usage model's) of earlier hours, either of the
same hour of the day (clock) or of the same number of whole hours since the latest anchor
(anchor), each shrunk toward 0.2 by half an observation. Only the hours 0-19 after an
anchor are scored (the hours the anchor model can speak for); the score is the mean
Bernoulli log-loss per hour (lower is better). `mix` weighs the two predictions by their
recent log-loss (exponentially, over about the last 30 scored hours), as a policy choosing
between them per device would.

It is a question about the lives, not about the policy: the clock model here knows no
kind of day, so it is weaker than the usage model's. docs/scenarios.md ("Looked at on
2026-12-07 (session 47)") has what it found.
"""
import argparse, concurrent.futures, datetime, json, math, os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bgtask", default=os.path.join(ROOT, ".build/release/bgtask"))
    parser.add_argument("--gap", type=float, default=5.0, help="hours without a launch before an anchor (default 5)")
    parser.add_argument("--seeds", default="1-5")
    parser.add_argument("--days", type=int, default=28)
    parser.add_argument("lives", nargs="*")
    arguments = parser.parse_args()
    first, _, last = arguments.seeds.partition("-")
    arguments.seed_range = range(int(first), int(last or first) + 1)
    if not arguments.lives:
        lives_directory = os.path.join(ROOT, "docs/lives")
        arguments.lives = ["commuter", "office", "night-charger", "travel"] + sorted(
            os.path.join(lives_directory, name) for name in os.listdir(lives_directory) if name.endswith(".json"))
    return arguments


def instant(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def launch_hours(bgtask, life, seed, days):
    """The hours since the run's start at which the user opened the app."""
    result = subprocess.run([bgtask, "simulate", life, "--days", str(days), "--seed", str(seed), "--json", "--no-progress"],
                            capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"anchor.py: bgtask simulate {life} --seed {seed} failed: {result.stderr.strip()}")
    trace = json.loads(result.stdout)
    start = instant(trace["start"])
    return sorted((instant(event["at"]) - start) / 3600 for event in trace["events"]
                  if event["event"] == "lifecycle" and event.get("to") == "active" and event.get("from") != "active")


def bernoulli_loss(probability, happened):
    probability = min(max(probability, 1e-3), 1 - 1e-3)
    return -math.log(probability if happened else 1 - probability)


def score(launches, days, gap):
    """Summed log-loss of the clock, anchor and mixed predictions, and the hours scored."""
    hours = days * 24
    launched = [0] * hours
    for at in launches:
        launched[int(at)] = 1
    anchors = [at for index, at in enumerate(launches) if index == 0 or at - launches[index - 1] >= gap]
    decay = 0.5 ** (1 / (14 * 24.0))  # a half-life of 14 days, per hour
    clock = [[0.0, 0.0] for _ in range(24)]      # [launched, observed] per hour of the day
    since = [[0.0, 0.0] for _ in range(24)]      # per whole hour since the anchor
    recent_clock = recent_anchor = 0.0
    totals = [0.0, 0.0, 0.0]
    scored = 0
    next_anchor, anchor = 0, None
    for hour in range(hours):
        while next_anchor < len(anchors) and anchors[next_anchor] < hour:
            anchor = anchors[next_anchor]
            next_anchor += 1
        happened = launched[hour]
        counts = clock[hour % 24]
        by_clock = (counts[0] + 0.1) / (counts[1] + 0.5)
        if anchor is not None and 0 <= hour - anchor < 20:
            counts = since[int(hour - anchor)]
            by_anchor = (counts[0] + 0.1) / (counts[1] + 0.5)
            weight_clock, weight_anchor = math.exp(-recent_clock / 10), math.exp(-recent_anchor / 10)
            mixed = (weight_clock * by_clock + weight_anchor * by_anchor) / (weight_clock + weight_anchor)
            losses = [bernoulli_loss(p, happened) for p in (by_clock, by_anchor, mixed)]
            totals = [total + loss for total, loss in zip(totals, losses)]
            scored += 1
            recent_clock = recent_clock * 0.97 + losses[0]
            recent_anchor = recent_anchor * 0.97 + losses[1]
            counts[0] += happened
            counts[1] += 1
        for table in (clock, since):
            for counts in table:
                counts[0] *= decay
                counts[1] *= decay
        clock[hour % 24][0] += happened
        clock[hour % 24][1] += 1
    return totals, scored


def main():
    arguments = parse_arguments()

    def one(life):
        totals, scored = [0.0, 0.0, 0.0], 0
        for seed in arguments.seed_range:
            launches = launch_hours(arguments.bgtask, life, seed, arguments.days)
            life_totals, life_scored = score(launches, arguments.days, arguments.gap)
            totals = [a + b for a, b in zip(totals, life_totals)]
            scored += life_scored
        return os.path.basename(life).removesuffix(".json"), [total / max(scored, 1) for total in totals], scored

    print(f"| life | clock | anchor | mix | hours scored |\n|---|---|---|---|---|")
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for name, (by_clock, by_anchor, mixed), scored in pool.map(one, arguments.lives):
            print(f"| {name} | {by_clock:.3f} | {by_anchor:.3f} | {mixed:.3f} | {scored} |")


if __name__ == "__main__":
    main()
