#!/usr/bin/env bash
# Benchmarks/compare.sh: our figures side by side with the job queues a user would pick
# instead, and with the machine's limits, in one run (BENCHMARKS.md explains every row).
#
#   Benchmarks/compare.sh [--rounds N] [--quick] [--out DIR] [--no-install] [--keep]
#
# Installs what it needs (Debian packages with apt-get when missing; the Python peers from
# PyPI into .build/peers-venv), builds in release mode, starts one throwaway PostgreSQL
# server that our store and the PostgreSQL peers share, runs bgtask-bench and
# Benchmarks/peers/peers.py, and writes DIR/results.json and DIR/results.md (default
# Benchmarks/results). With the default DIR it also rewrites the generated tables of
# README.md and BENCHMARKS.md from results.json (`swift test` checks they agree).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

usage() {
  cat <<'EOF'
usage: Benchmarks/compare.sh [--rounds N] [--quick] [--out DIR] [--no-install] [--keep]
  --rounds N     rounds of the figures compared pair by pair (enqueue, in-process dispatch); default 3, 1-10
  --quick        reduced iterations everywhere (a smoke test: figures are noisy; written to
                 .build/compare-quick unless --out is given, never into README.md)
  --out DIR      where results.json and results.md go (default Benchmarks/results; only then
                 are README.md's and BENCHMARKS.md's generated tables rewritten)
  --no-install   install nothing (the packages and the virtual environment must be there)
  --keep         keep the run's directory of raw JSON and logs (its path is printed)
EOF
}

rounds=3
quick=""
out="Benchmarks/results"
out_given=""
install=1
keep=""
seen=""
while (($#)); do
  case "$1" in
    --rounds|--out)
      [[ " $seen " == *" $1 "* ]] && { echo "compare.sh: $1 given twice" >&2; usage >&2; exit 64; }
      seen="$seen $1"
      [[ $# -ge 2 && -n "$2" && "$2" != --* ]] || { echo "compare.sh: $1 needs a value" >&2; usage >&2; exit 64; }
      if [[ "$1" == --rounds ]]; then
        [[ "$2" =~ ^[0-9]{1,2}$ ]] && (( 10#$2 >= 1 && 10#$2 <= 10 )) || { echo "compare.sh: --rounds must be a whole number from 1 to 10, not '$2'" >&2; exit 64; }
        rounds=$((10#$2))
      else
        out="$2"; out_given=1
      fi
      shift 2 ;;
    --quick) quick="--quick"; shift ;;
    --no-install) install=""; shift ;;
    --keep) keep=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "compare.sh: unknown argument '$1'" >&2; usage >&2; exit 64 ;;
  esac
done

# A smoke test must not replace the committed figures: --quick writes elsewhere.
if [[ -n "$quick" && -z "$out_given" ]]; then out=".build/compare-quick"; out_given=1; fi
# What a fresh machine lacks (Debian packages), installed in step 1.
packages=(libsqlite3-dev libpq-dev postgresql pkg-config python3 python3-venv util-linux)
missing=()
if [[ -n "$install" ]]; then
  for package in "${packages[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  if ((${#missing[@]})) && [[ $(id -u) -ne 0 ]]; then
    echo "compare.sh: Debian packages are missing (${missing[*]}) and installing them needs root (run as root, or install them and pass --no-install)" >&2
    exit 1
  fi
fi

started=$(date +%s)
say() { printf '[compare %4ds] %s\n' "$(( $(date +%s) - started ))" "$*"; }

# 1. What a fresh machine lacks.
if ((${#missing[@]})); then
  say "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
venv="$root/.build/peers-venv"
if [[ -n "$install" ]]; then
  if [[ ! -x "$venv/bin/python" ]]; then
    say "creating $venv"
    python3 -m venv "$venv"
  fi
  if ! "$venv/bin/pip" install --disable-pip-version-check -q -r Benchmarks/peers/requirements.txt; then
    echo "compare.sh: pip could not install Benchmarks/peers/requirements.txt into $venv (is PyPI reachable?)" >&2
    exit 1
  fi
fi
[[ -x "$venv/bin/python" ]] || { echo "compare.sh: no virtual environment at $venv (run without --no-install)" >&2; exit 1; }

# 2. Release builds of the bench, the daemon and the app it launches.
work=$(mktemp -d /tmp/bgtask-compare.XXXXXX)
chmod 755 "$work"
pg="$work/pg"
# The server (once started) is stopped and the run directory removed on any exit.
cleanup() {
  "$venv/bin/python" "$root/Benchmarks/peers/throwaway_pg.py" stop "$pg" >/dev/null 2>&1 || true
  if [[ -n "$keep" ]]; then echo "raw results and logs kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
for product in bgtask-bench bgtaskd bgtask-bench-app; do
  say "swift build -c release --product $product"
  swift build -c release --product "$product" > "$work/build-$product.log" 2>&1 \
    || { echo "compare.sh: the release build of $product failed:" >&2; tail -n 30 "$work/build-$product.log" >&2; exit 1; }
done
bench="$root/.build/release/bgtask-bench"

# 3. One PostgreSQL server for ours and the peers; removed on any exit.
say "starting a throwaway PostgreSQL server in $pg"
socket=$("$venv/bin/python" Benchmarks/peers/throwaway_pg.py start "$pg")
export BGTASK_BENCH_POSTGRES_SOCKET="$socket"

peers() { "$venv/bin/python" "$root/Benchmarks/peers/peers.py" --pg-socket "$socket" --work "$work/peers-work" "$@"; }
if [[ -n "$quick" ]]; then
  peer_sizes=(--count 200 --dispatch-samples 5 --idle-seconds 10)
else
  peer_sizes=()
fi

# 4. Rounds: the figures whose ratios are taken pair by pair, ours and the peers' minutes apart.
for ((round = 1; round <= rounds; round++)); do
  dir="$work/round-$round"; mkdir -p "$dir"
  say "round $round of $rounds: bgtask-bench a, c', o (enqueue, in-process dispatch)"
  "$bench" $quick --only "a,c',o" --json "$dir/ours.json" > "$dir/ours.log" 2>&1 \
    || { echo "compare.sh: bgtask-bench failed in round $round; its output:" >&2; tail -n 30 "$dir/ours.log" >&2; exit 1; }
  say "round $round of $rounds: peers' enqueue"
  peers --only enqueue --rounds 1 "${peer_sizes[@]}" --json "$dir/peers.json" > "$dir/peers.log" 2>&1 \
    || say "  a peer failed (its row says why); log: $dir/peers.log"
  # A row that failed is in the file; no file at all (peers.py itself failed) is not a result.
  [[ -s "$dir/peers.json" ]] \
    || { echo "compare.sh: peers.py wrote no $dir/peers.json in round $round; its output:" >&2; tail -n 30 "$dir/peers.log" >&2; exit 1; }
done

# 5. Once: the figures that are slow, or compared with the machine within their own run.
dir="$work/once"; mkdir -p "$dir"
say "once: peers' dispatch latency and idle cost"
peers --only dispatch,idle "${peer_sizes[@]}" --json "$dir/peers.json" > "$dir/peers.log" 2>&1 \
  || say "  a peer failed (its row says why); log: $dir/peers.log"
say "once: bgtask-bench b, r, d, e, f, g, h, i, j, k, t, l, s, m, n, p"
"$bench" $quick --only "b,r,d,e,f,g,h,i,j,k,t,l,s,m,n,p" --json "$dir/ours.json" > "$dir/ours.log" 2>&1 \
  || { echo "compare.sh: bgtask-bench failed; its output:" >&2; tail -n 30 "$dir/ours.log" >&2; exit 1; }

# 6. The report.
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
# Changed or new files of the code that was measured (the results directory is output, not code).
if ! git diff --quiet HEAD -- Sources Benchmarks Package.swift ':!Benchmarks/results' 2>/dev/null \
   || [[ -n "$(git ls-files --others --exclude-standard -- Sources Benchmarks ':!Benchmarks/results' 2>/dev/null)" ]]; then
  commit="$commit+changes"
fi
command="Benchmarks/compare.sh${quick:+ --quick}"
if ((rounds != 3)); then command="$command --rounds $rounds"; fi
python3 Benchmarks/report.py combine "$work" --out "$out" --commit "$commit" --command "$command" --seconds "$(( $(date +%s) - started ))"
if [[ -z "$out_given" ]]; then
  python3 Benchmarks/report.py update "$out/results.json" README.md BENCHMARKS.md
fi
say "done: $out/results.md"
