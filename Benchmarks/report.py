#!/usr/bin/env python3
"""Writes docs/PERFORMANCE.md from one run of `PGModelBenchmarks --compare`.

Standard library only (no matplotlib on the project's machines): the plot is an SVG drawn here.
Called by scripts/benchmark.sh; the inputs are the suite's JSON, its Markdown tables, and the
PostgreSQL settings the script read with SHOW.
"""
import argparse
import datetime
import html
import json
import math
import os
import platform
import subprocess

COLOURS = {"pgmodel": "#1f77b4", "service": "#9467bd", "raw": "#7f7f7f", "fluent": "#2ca02c", "copy": "#d62728"}


def machine():
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory_kb = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                memory_kb = int(line.split()[1])
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": f"{memory_kb / 1024 / 1024:.1f} GiB",
        "kernel": platform.release(),
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


def swift_version():
    try:
        out = subprocess.run(["swift", "--version"], capture_output=True, text=True, timeout=60).stdout
        return out.strip().splitlines()[0] if out.strip() else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def svg_plot(data):
    """Grouped horizontal bars: each workload's time per contender as a multiple of raw PostgresNIO's,
    on a log scale (the contenders differ by up to two orders of magnitude)."""
    medians = data["medians"]
    contenders = [c for c in data["contenders"]]
    rows = []
    for workload in data["workloads"]:
        raw = medians.get("raw", {}).get(workload["key"])
        if not raw:
            continue
        bars = [(c, medians[c["key"]][workload["key"]] / raw, medians[c["key"]][workload["key"]])
                for c in contenders if workload["key"] in medians.get(c["key"], {})]
        rows.append((workload, bars))
    lo, hi = 0.25, 64.0
    for _, bars in rows:
        for _, ratio, _ in bars:
            while ratio < lo:
                lo /= 2
            while ratio > hi:
                hi *= 2
    left, right, top, bar_h, gap = 370, 130, 60, 16, 18
    width = 1040
    plot_w = width - left - right
    height = top + sum(len(b) * bar_h + gap for _, b in rows) + 50

    def x(ratio):
        return left + (math.log(ratio) - math.log(lo)) / (math.log(hi) - math.log(lo)) * plot_w

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="22" font-size="15" font-weight="bold">Time as a multiple of raw PostgresNIO '
           f'({data["rows"]:,} rows, medians of {data["rounds"]} rounds; log scale, lower is better)</text>']
    tick = lo
    while tick <= hi * 1.001:
        tx = x(tick)
        label = f"{tick:g}×"
        out.append(f'<line x1="{tx:.1f}" y1="{top - 8}" x2="{tx:.1f}" y2="{height - 40}" stroke="{"#444" if tick == 1 else "#ddd"}"/>')
        out.append(f'<text x="{tx:.1f}" y="{height - 24}" text-anchor="middle" fill="#444">{label}</text>')
        tick *= 2
    y = top
    for workload, bars in rows:
        block = len(bars) * bar_h
        out.append(f'<text x="{left - 10}" y="{y + block / 2 + 4:.1f}" text-anchor="end">{html.escape(workload["title"])}</text>')
        for contender, ratio, value in bars:
            colour = COLOURS.get(contender["key"], "#17becf")
            x0, x1 = x(lo), x(ratio)
            out.append(f'<rect x="{x0:.1f}" y="{y + 1}" width="{max(1.0, x1 - x0):.1f}" height="{bar_h - 2}" fill="{colour}">'
                       f'<title>{html.escape(contender["title"])}: {value:,.1f} {workload["unit"]} ({ratio:.2f}×)</title></rect>')
            unit = workload["unit"]
            out.append(f'<text x="{x1 + 4:.1f}" y="{y + bar_h - 4}" fill="#222">{value:,.0f} {unit} · {ratio:.2f}×</text>')
            y += bar_h
        y += gap
    lx = left
    for contender in contenders:
        colour = COLOURS.get(contender["key"], "#17becf")
        out.append(f'<rect x="{lx}" y="34" width="12" height="12" fill="{colour}"/>')
        out.append(f'<text x="{lx + 16}" y="44">{html.escape(contender["title"])}</text>')
        lx += 20 + 7 * len(contender["title"]) + 14
    out.append("</svg>")
    return "\n".join(out) + "\n"


def goals(data):
    """The project's speed targets beside this run's figures, as ratios, so a run on any machine shows
    which ones hold."""
    med = data["medians"]
    keys = {w["key"].split(" ")[0]: w["key"] for w in data["workloads"]}
    insert, fetch, pages, point = (keys["insert"], keys["fetch"], keys["100"], keys["point"])

    def get(contender, workload):
        return med.get(contender, {}).get(workload)

    rows = []

    def add(goal, actual, target, ok):
        rows.append(f"| {goal} | {actual} | {target} | {'yes' if ok else 'no'} |")

    pg, raw, copy = get("pgmodel", insert), get("raw", insert), get("copy", insert)
    if pg and copy:
        startup = get("copy-startup", insert)
        net = f" ({(copy - startup) / pg * 100:.0f}% without psql's start-up)" if startup and startup < copy else ""
        add("insert: share of `\\copy`'s rows/s", f"{copy / pg * 100:.0f}%{net}", "≥ 50%", copy / pg >= 0.5)
    if pg and raw:
        add("insert: × raw unnest", f"{pg / raw:.2f}×", "≤ 2.5×", pg / raw <= 2.5)
    for label, workload, limit in (("fetch all", fetch, 1.3), ("pages", pages, 1.3), ("point fetch", point, 1.15)):
        a, b = get("pgmodel", workload), get("raw", workload)
        if a and b:
            add(f"{label}: × raw PostgresNIO", f"{a / b:.2f}×", f"≤ {limit}×", a / b <= limit)
    a, b = get("service", fetch), get("pgmodel", fetch)
    if a and b:
        add("service: fetch all × direct store", f"{a / b:.2f}×", "≤ 2×", a / b <= 2)
    a, b = get("service", point), get("pgmodel", point)
    if a and b:
        add("service: point fetch over the direct store", f"{a - b:+,.0f} µs", "≤ +100 µs", a - b <= 100)
    a, b = get("line-server-floor", point), get("line-server-floor-driver", point)
    if a and b:
        rows.append(f"| (the floor under that: a bare NIO line server running the driver's select, over the select alone) | {a - b:+,.0f} µs | | |")
    large = data.get("enumerate")
    if large and large.get("enumerate_ms") and large.get("fetch_ms"):
        e, f = sorted(large["enumerate_ms"]), sorted(large["fetch_ms"])
        em, fm = e[len(e) // 2], f[len(f) // 2]
        add(f"enumerate {large['rows']:,} rows: × one fetch", f"{em / fm:.2f}×", "≤ 1.5×", em / fm <= 1.5)
        if large.get("enumerate_peak_kb"):
            mb = large["enumerate_peak_kb"] / 1024
            add(f"enumerate {large['rows']:,} rows: peak RSS", f"{mb:.0f} MB", "< 100 MB (for 1,000,000 rows)", mb < 100)
    save = data.get("save")
    if save and save.get("peak_kb"):
        mb = save["peak_kb"] / 1024
        add(f"one save() of {save['rows']:,} models: peak RSS", f"{mb:.0f} MB", "< 150 MB (for 100,000)", mb < 150)
    if not rows:
        return ""
    return ("| target | this run | limit | met |\n|---|---:|---:|:---:|\n" + "\n".join(rows) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", required=True)
    parser.add_argument("--tables", required=True)
    parser.add_argument("--settings", required=True, help="lines of name=value read with SHOW")
    parser.add_argument("--out", required=True)
    parser.add_argument("--svg", required=True)
    parser.add_argument("--command", required=True)
    parser.add_argument("--commit", default="unknown")
    args = parser.parse_args()

    with open(args.json) as f:
        data = json.load(f)
    with open(args.tables) as f:
        tables = f.read().strip()
    settings = []
    with open(args.settings) as f:
        for line in f:
            if "=" in line:
                settings.append(line.rstrip("\n").split("=", 1))
    with open(args.svg, "w") as f:
        f.write(svg_plot(data))

    m = machine()
    svg_name = os.path.relpath(args.svg, os.path.dirname(os.path.abspath(args.out)))
    # "Other benchmarks" is written by hand (what each of the other modes measures, and its latest
    # figures): a rerun of the suite replaces everything else and keeps that section.
    others = ""
    if os.path.exists(args.out):
        with open(args.out) as f:
            previous = f.read()
        start = previous.find("\n## Other benchmarks")
        end = previous.find("\n## Machine and database")
        if 0 <= start < end:
            others = previous[start + 1:end].strip() + "\n\n"

    doc = f"""# Performance

PGModel side by side with the raw driver, Fluent 4 and `psql \\copy` on one table, in one run on one
machine, then the project's other benchmarks. Every figure comes from `scripts/benchmark.sh` or the
benchmark binary it builds; compare a change against these numbers on the same machine, and where the
comparison matters, in the same run.

The suite's figures were measured {datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")} on library commit `{args.commit}` with

    {args.command}

## What is measured

- One table of ten columns: `id` (uuid), `name`, `category` (text), `price`, `score` (double precision),
  `quantity`, `rank` (bigint), `created` (timestamptz), `active` (boolean), `note` (nullable text), with an
  index on `rank`; {data["rows"]:,} rows, identical for every contender (ranks are a permutation, so a range of
  ranks is scattered over the table). PGModel's table also has its own `entity` and `owner_id` columns.
- Contenders: **PGModel (postgres://)**, the direct store, through SwiftData's synchronous API with a fresh
  `ModelContext` per operation; **PGModel (pgmodel://)**, the same calls through the line-protocol service
  run in-process on loopback, logged in as a user whose rows the row-level security policies let through;
  **raw PostgresNIO**, hand-written SQL on one connection, rows decoded as tuples into structs, inserts as
  one `INSERT … SELECT FROM unnest(…)`; **Fluent 4** (FluentKit and FluentPostgresDriver, without Vapor's
  HTTP layer), one pooled connection; **`psql \\copy`** of a CSV file of the same rows, timed from the
  psql process's launch to its exit.
- Each round makes a fresh schema per contender, then runs each workload for every contender before the
  next workload; the contenders' order rotates every round. Figures are medians of {data["rounds"]} rounds
  (point fetches: the median over rounds of each round's p50 of {data["point_calls"]:,} calls on random ranks,
  taken call by call: each rank is fetched by every contender in turn, in an order that rotates each call).
- The floor under a service's point fetch: the raw contender's point select behind a bare NIO line server
  (`PointFloor`) that runs it on a PostgreSQL connection bound to its own event loop, against the same
  select on that connection without the server, alternately, on the round's ranks after the contenders'
  point fetches.
- `enumerate` runs over a larger table of PGModel's, alternating with one `fetch` of the same rows and the
  raw driver's read of them; peak memory is read from `VmHWM` in `/proc/self/status` of a child process
  that does only that one operation.

## Results

{tables}

![Time as a multiple of raw PostgresNIO]({svg_name})

### Against the targets

{goals(data)}
{others}## Machine and database

| | |
|---|---|
| CPU | {m["cpu"]} |
| cores | {m["cores"]} |
| memory | {m["memory"]} |
| kernel | {m["kernel"]} |
| load average at the end of the run | {m["load"]} |
| Swift | {swift_version()} (release build) |
""" + "".join(f"| PostgreSQL `{name}` | {value} |\n" for name, value in settings) + """
The machine is shared (other builds may run on its two cores), which is why every figure is a ratio
taken within one run with the contenders interleaved: absolute times move between runs, ratios much less.
PostgreSQL is the embedded cluster from `scripts/lib.sh` (or the server of `DATABASE_URL`) on loopback; on
the embedded cluster the suite runs in a fresh database, `pgmodel_bench`, created at the start and dropped at
the end, so no earlier run's tables or history slow it down.

## Running it

    scripts/benchmark.sh                 # the full suite: writes this file and performance.svg
    scripts/benchmark.sh --quick         # a smoke run: small sizes, report in a temporary directory
    scripts/benchmark.sh --rows 50000 --rounds 7 --large 1000000 --save-rows 100000
    scripts/benchmark.sh --observers     # the other benchmarks: observers (or --point, --rls, --history, --migration)

The benchmark package is `Benchmarks/` (a separate SwiftPM package, built in release mode against this
checkout); the suite's code is `Benchmarks/Sources/PGModelBenchmarks/ComparisonSuite.swift` and the
contender files beside it.

To see where a workload's time goes, run the release binary directly (`DATABASE_URL` set, as
`scripts/pg.sh env` prints it), under `perf record` if need be:

    Benchmarks/.build/release/PGModelBenchmarks --fetch [--direct-only] [--quick]   # fetches, split by step
    Benchmarks/.build/release/PGModelBenchmarks --phases [--quick]                  # a point fetch, step by step
    Benchmarks/.build/release/PGModelBenchmarks --wire [--quick]                    # the table line alone
    Benchmarks/.build/release/PGModelBenchmarks --service-table [--remote-only]     # the stores' tables, direct and through the service
    Benchmarks/.build/release/PGModelBenchmarks --service-point [--models] [--remote-only | --direct-only] [--service-binary PATH]
                                                  # point fetches call by call; PATH: a release `pgmodel`, the service as deployed
"""
    with open(args.out, "w") as f:
        f.write(doc)


if __name__ == "__main__":
    main()
