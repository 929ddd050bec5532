#!/usr/bin/python3
"""Attention at scale, side by side in one run: the book's C++ (bench/attention_bench, Google
Benchmark) against the article's numpy code, a vectorised numpy version and PyTorch, all in
float64 with d = 64, on the same OpenBLAS and the same number of threads.

    cmake --build --preset default --target attention_bench
    /usr/bin/python3 bench/compare.py                   # the full run (about 15 minutes)
    /usr/bin/python3 bench/compare.py --sizes 256 512   # a quick look

Writes bench/results/attention.csv, three figures (time, GFLOP/s, peak memory, each against n)
and, with --readme README.md, the table between the README's "performance" markers. Each time
is the minimum over --repeat runs (the machine is shared and noisy). Needs Debian's
python3-numpy and python3-torch, and gnuplot for the figures.
"""
import argparse
import csv
import json
import os
import pathlib
import platform
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
D = 64


# --- the Python contenders, run in a worker process per thread count ------------------------

def article_numpy(Q, K, V):
    """Article 000's code: one softmax per row, in a Python loop."""
    import numpy as np

    def softmax(x):
        e = np.exp(x - np.max(x))
        return e / e.sum()
    scores = (Q @ K.T) / np.sqrt(K.shape[1])
    weights = np.array([softmax(row) for row in scores])
    return weights @ V


def vectorised_numpy(Q, K, V):
    """The same, with the softmax over all rows at once (article 004's axis=-1 form)."""
    import numpy as np
    scores = (Q @ K.T) / np.sqrt(K.shape[1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ V


def peak_reset():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def resident_mb(field):
    """VmRSS (now) or VmHWM (the peak since the last reset), in MB."""
    with open("/proc/self/status") as f:
        return int(re.search(field + r":\s+(\d+) kB", f.read()).group(1)) * 1024 / 1e6


def worker(threads, sizes, repeat):
    import numpy as np
    import torch
    torch.set_num_threads(threads)
    rng = np.random.default_rng(7)
    for n in sizes:
        Q, K, V = (rng.standard_normal((n, D)) for _ in range(3))
        tq, tk, tv = (torch.from_numpy(a) for a in (Q, K, V))
        contenders = {
            "numpy (article)": lambda: article_numpy(Q, K, V),
            "numpy (vectorised)": lambda: vectorised_numpy(Q, K, V),
            "PyTorch": lambda: torch.softmax(tq @ tk.T / 8.0, dim=-1) @ tv,
        }
        for name, run in contenders.items():
            peak_reset()
            baseline = resident_mb("VmRSS")
            best = min(timed(run) for _ in range(repeat))
            print(json.dumps({"contender": name, "threads": threads, "n": n, "seconds": best,
                              "added_mb": resident_mb("VmHWM") - baseline}), flush=True)


def timed(run):
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


# --- the C++ benchmark --------------------------------------------------------------------

def cpp(bench, threads, sizes, reference_sizes, repeat):
    """The C++ benchmark's runs at these sizes and thread counts, in one process, repetitions
    interleaved at random so that a noisy spell hits every contender alike: the minimum time
    of each. (The benchmark sets OpenMP's and OpenBLAS's thread counts itself, per run.)"""
    def names(ns):
        return "|".join(str(n) for n in ns)
    pattern = (f"^((Gemm|Streaming)/n:({names(sizes)})|Reference/n:({names(reference_sizes)}))"
               f"/threads:({names(threads)})/")
    out = subprocess.run([str(bench), f"--benchmark_filter={pattern}", "--benchmark_format=json",
                          f"--benchmark_repetitions={repeat}",
                          "--benchmark_enable_random_interleaving=true"], check=True,
                         capture_output=True, text=True, env=env_for(max(threads))).stdout
    best = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        m = re.match(r"(\w+)/n:(\d+)/threads:(\d+)", b["name"])
        key = ({"Gemm": "GEMM", "Reference": "C++ reference",
                "Streaming": "C++ streaming"}[m.group(1)], int(m.group(3)), int(m.group(2)))
        seconds = b["real_time"] / 1e3  # ms
        if key not in best or seconds < best[key]["seconds"]:
            best[key] = {"contender": key[0], "threads": key[1], "n": key[2], "seconds": seconds,
                         "added_mb": b["added_MB"]}
    return list(best.values())


def env_for(threads):
    return dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))


def gflops(row):
    flops = 2.0 * row["n"] ** 3 if row["contender"] == "GEMM" else 4.0 * row["n"] ** 2 * D
    return flops / row["seconds"] / 1e9


def machine():
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.machine())
    import numpy
    import torch
    return (f"{cpu}, {os.cpu_count()} cores, Debian {open('/etc/debian_version').read().strip()}, "
            f"OpenBLAS (Debian), numpy {numpy.__version__}, PyTorch {torch.__version__}")


COLOURS = {"C++ streaming": "#0072B2", "C++ reference": "#009E73", "numpy (article)": "#D55E00",
           "numpy (vectorised)": "#E69F00", "PyTorch": "#CC79A7"}


def plots(rows, out):
    """Three figures with gnuplot: time, GFLOP/s and added memory against n. One colour per
    contender; one thread solid, two threads dashed."""
    series = sorted({(r["contender"], r["threads"]) for r in rows if r["contender"] != "GEMM"})
    data = out / "attention.dat"
    with open(data, "w") as f:
        for contender, threads in series:
            f.write(f'# "{contender}, {threads} thread{"s" if threads > 1 else ""}"\n')
            for r in sorted((r for r in rows if (r["contender"], r["threads"]) == (contender, threads)),
                            key=lambda r: r["n"]):
                f.write(f'{r["n"]} {r["seconds"]} {gflops(r)} {max(r["added_mb"], 0.1)}\n')
            f.write("\n\n")
    gemm = {r["threads"]: gflops(r) for r in rows if r["contender"] == "GEMM"}
    common = ("set terminal pngcairo size 1000,560 font 'DejaVu Sans,11'\n"
              "set key outside right top\nset logscale x 2\nset xlabel 'n (tokens), d = 64'\n"
              "set grid\n")
    figures = {
        "attention-time": ("set logscale y 10\nset ylabel 'seconds (minimum of repeats)'\n"
                           "set title 'Attention, float64: time against n (log-log)'\n", 2, ""),
        "attention-gflops": ("set ylabel 'GFLOP/s (4 n^2 d flops per call)'\n"
                             "set title 'Achieved rate against the GEMM rate of the same run'\n",
                             3, "".join(f", {v} with lines lc rgb '#555555' dashtype {1 if t == 1 else 2} "
                                        f"lw 1 title 'GEMM rate, {t} thread{'s' if t > 1 else ''}'"
                                        for t, v in gemm.items())),
        "attention-memory": ("set logscale y 10\nset ylabel 'MB added at the peak, inputs excluded "
                             "(0.1: none)'\nset title 'Memory a call needs beyond its inputs, "
                             "against n'\n", 4,
                             f", 3 * x**2 * 8 / 1e6 with lines lc rgb '#555555' dashtype 2 title "
                             f"'3 n^2 doubles (the grids)', x * {D} * 8 / 1e6 with lines "
                             f"lc rgb '#555555' dashtype 3 title 'n d doubles (the output)'"),
    }
    for name, (setup, column, extra) in figures.items():
        curves = ", ".join(
            f"'{data}' index {i} using 1:{column} with linespoints lw 2 pt 7 ps 0.8 "
            f"lc rgb '{COLOURS[c]}' dashtype {1 if t == 1 else 2} "
            f"title '{c}, {t} thread{'s' if t > 1 else ''}'" for i, (c, t) in enumerate(series))
        script = common + setup + f"set output '{out / (name + '.png')}'\nplot {curves}{extra}\n"
        subprocess.run(["gnuplot"], input=script, text=True, check=True)
    data.unlink()


def table(rows, sizes):
    """The README's table: one thread, then the 1 to 2 thread speed-up."""
    at = {(r["contender"], r["threads"], r["n"]): r for r in rows}
    gemm1 = next(gflops(r) for r in rows if r["contender"] == "GEMM" and r["threads"] == 1)
    lines = ["| n | numpy (article) | numpy (vectorised) | PyTorch | C++ reference | C++ streaming "
             "| streaming vs article / PyTorch | streaming GFLOP/s (of GEMM) | 2 threads: speed-up |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n in sizes:
        def ms(c, t=1):
            r = at.get((c, t, n))
            return f"{r['seconds'] * 1e3:.1f} ms" if r else "–"
        s1, s2 = at.get(("C++ streaming", 1, n)), at.get(("C++ streaming", 2, n))
        a1, p1 = at.get(("numpy (article)", 1, n)), at.get(("PyTorch", 1, n))
        ratio = (f"{a1['seconds'] / s1['seconds']:.1f}x / {p1['seconds'] / s1['seconds']:.1f}x"
                 if s1 and a1 and p1 else "–")
        rate = f"{gflops(s1):.1f} ({gflops(s1) / gemm1:.0%})" if s1 else "–"
        speedup = f"{s1['seconds'] / s2['seconds']:.2f}x" if s1 and s2 else "–"
        lines.append(f"| {n} | {ms('numpy (article)')} | {ms('numpy (vectorised)')} | {ms('PyTorch')} "
                     f"| {ms('C++ reference')} | {ms('C++ streaming')} | {ratio} | {rate} | {speedup} |")
    return lines, gemm1


def measure(args):
    """Every contender, side by side: for each thread count, the Python contenders in a fresh
    process (OpenBLAS reads its thread count at start); then the C++ benchmark, at least five
    repetitions of each run since they are cheap."""
    rows = []
    streaming = sorted(set(args.sizes) | {n for n in (2 ** k for k in range(8, 15))
                                          if args.sizes[0] <= n <= args.streaming_up_to})
    for threads in args.threads:
        print(f"compare: Python contenders, {threads} thread(s)", file=sys.stderr)
        run = subprocess.run([sys.executable, __file__, "--worker", str(threads), "--repeat",
                              str(args.repeat), "--sizes", *map(str, args.sizes)],
                             check=True, capture_output=True, text=True, env=env_for(threads))
        rows += [json.loads(line) for line in run.stdout.splitlines()]
    print(f"compare: C++ benchmark, {' and '.join(map(str, args.threads))} thread(s)", file=sys.stderr)
    rows += cpp(args.bench, args.threads, sorted(set(streaming) | {2048}),
                [n for n in args.sizes if n <= args.reference_up_to], max(args.repeat, 5))
    return rows


def write_csv(path, heading, rows):
    with open(path, "w", newline="") as f:
        f.write(f"# {heading}\n")
        w = csv.writer(f)
        w.writerow(["contender", "threads", "n", "seconds", "gflops", "added_mb"])
        for r in sorted(rows, key=lambda r: (r["contender"], r["threads"], r["n"])):
            w.writerow([r["contender"], r["threads"], r["n"], f"{r['seconds']:.6g}",
                        f"{gflops(r):.4g}", f"{r['added_mb']:.1f}"])


def read_csv(path):
    with open(path, newline="") as f:
        heading = f.readline()[2:].strip()
        rows = [{"contender": r["contender"], "threads": int(r["threads"]), "n": int(r["n"]),
                 "seconds": float(r["seconds"]), "added_mb": float(r["added_mb"])}
                for r in csv.DictReader(f)]
    return heading, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024, 2048, 4096, 8192])
    ap.add_argument("--streaming-up-to", type=int, default=16384)
    ap.add_argument("--reference-up-to", type=int, default=8192,
                    help="the C++ reference's largest n (at 16384 its grids take 6.4 GB)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bench", default=str(ROOT / "build" / "bench" / "attention_bench"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--readme", help="README to update between its performance markers")
    ap.add_argument("--from-csv", action="store_true",
                    help="measure nothing: redraw the figures and the table from OUT/attention.csv")
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.sizes, args.repeat)

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.from_csv:
        heading, rows = read_csv(out / "attention.csv")
    else:
        rows = measure(args)
        heading = (f"Measured on {machine()}; d = 64, float64, minimum of {args.repeat} runs "
                   f"(C++: of {max(args.repeat, 5)}).")
        write_csv(out / "attention.csv", heading, rows)
    plots(rows, out)
    lines, gemm1 = table(rows, sorted({r["n"] for r in rows if r["contender"] == "C++ streaming"}))
    text = "\n".join([f"{heading} GEMM rate in the same run: {gemm1:.1f} GFLOP/s on one thread.",
                      ""] + lines)
    print(text)
    if args.readme:
        readme = pathlib.Path(args.readme)
        old = readme.read_text(encoding="utf-8")
        new, count = re.subn(r"(<!-- performance:begin -->\n)(?:.*?\n)?(<!-- performance:end -->)",
                             lambda m: m.group(1) + text + "\n" + m.group(2), old, flags=re.S)
        if count != 1:
            sys.exit("compare: the README has no <!-- performance:begin/end --> markers")
        readme.write_text(new, encoding="utf-8")


if __name__ == "__main__":
    main()
