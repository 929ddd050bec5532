#!/usr/bin/python3
"""Attention at scale, side by side in one run: the book's C++ (bench/attention_bench, Google
Benchmark) against PyTorch 2's fused F.scaled_dot_product_attention (float64 and float32, causal
and not), and against what the articles teach from: their numpy code, a vectorised numpy version
and PyTorch's textbook form. d = 64, the same OpenBLAS and the same number of threads for all.

    cmake --build --preset default --target attention_bench
    /usr/bin/python3 bench/compare.py                   # the full run (about 20 minutes)
    /usr/bin/python3 bench/compare.py --sizes 256 512   # a quick look

Both sides are timed alike, by Google Benchmark's rule. A repeat runs a contender for as many
calls as fill at least MIN_TIME seconds and takes their mean; the number of calls is found in
the first repeat, growing from one call as Google Benchmark grows its iteration count, and kept
for the others. Each time in the tables is the fastest of --repeat repeats, on both sides. The
C++ benchmark is given MIN_TIME and --repeat explicitly (--benchmark_min_time,
--benchmark_repetitions), and applies the rule itself; the Python workers apply it in
repeat_means(). Order: for each thread count, the Python contenders run first, the teaching
forms and then SDPA, each group in a fresh process of its own (OpenBLAS reads its thread count
at start); then the C++ benchmark runs once for all thread counts, its repetitions interleaved
at random. Each Python contender's first call is not timed.

OpenBLAS chooses its kernel for the CPU it finds, unless OPENBLAS_CORETYPE says otherwise (some
machines set it for old OpenBLAS builds). This script removes OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE from every run it starts, so that every contender runs OpenBLAS's own choice,
or sets the one --openblas-coretype names; either way it records the kernel that ran.

Writes bench/results/attention.csv, three figures (time, GFLOP/s against the GEMM rates, peak
memory, each against n), the tables as bench/results/attention-tables.md (chapter 09's page
includes it) and, with --readme README.md, the same tables (less the one of GEMM rates, which is
the chapter's) between the README's "performance" markers. Needs Debian's python3-numpy and
python3-torch (PyTorch 2 for the fused kernel; without it that contender is left out and the
tables say so), and gnuplot for the figures.
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
TEACHING = ["numpy (article)", "numpy (vectorised)", "PyTorch (textbook)"]
FUSED = "PyTorch SDPA"
OURS = "C++ streaming"
# Below this n the memory figure would mislead: a call can reuse memory that the warm-up or an
# earlier size freed, and then adds nothing to the peak although it needs its grids.
MEMORY_FROM = 2048
# Seconds of calls that make one repeat, on both sides: Google Benchmark's default min time
# (0.5 s in 1.7.1, Debian 12's, and in the releases since), passed to it explicitly as well. Every
# release takes it as a plain number of seconds (1.8 and later print a warning, on stderr, that
# they prefer "0.5s"; 1.7.1 refuses that form).
MIN_TIME = 0.5


# --- the Python contenders, run in a worker process per thread count ------------------------

def article_numpy(Q, K, V):
    """Module 2.1's code (article 000): one softmax per row, in a Python loop."""
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


def has_fused_attention():
    import torch.nn.functional as F
    return hasattr(F, "scaled_dot_product_attention")


def worker(group, threads, sizes, repeat):
    """One group of Python contenders on `threads` threads: "teaching" (numpy and PyTorch's
    textbook form, whose threads are OpenBLAS's) or "fused" (PyTorch's SDPA, whose threads are
    PyTorch's own, each calling OpenBLAS on one thread, as the C++ streaming form does)."""
    import numpy as np
    import torch
    torch.set_num_threads(threads)
    rng = np.random.default_rng(7)
    # One large GEMM in each precision before any timing, as the C++ benchmark does: on some
    # machines OpenBLAS's small GEMMs run several times slower until a large one has run.
    for dtype in (torch.float64, torch.float32):
        warm = torch.ones(2048, 2048, dtype=dtype)
        torch.mm(warm, warm)

    def measure(name, dtype, causal, n, run):
        run()  # untimed: the first call may set things up
        peak_reset()
        baseline = resident_mb("VmRSS")
        best = min(repeat_means(run, repeat))
        print(json.dumps({"contender": name, "dtype": dtype, "causal": causal, "threads": threads,
                          "n": n, "seconds": best, "added_mb": resident_mb("VmHWM") - baseline}),
              flush=True)

    for n in sizes:
        Q, K, V = (rng.standard_normal((n, D)) for _ in range(3))
        tq, tk, tv = (torch.from_numpy(a) for a in (Q, K, V))
        if group == "teaching":
            measure("numpy (article)", "float64", False, n, lambda: article_numpy(Q, K, V))
            measure("numpy (vectorised)", "float64", False, n, lambda: vectorised_numpy(Q, K, V))
            measure("PyTorch (textbook)", "float64", False, n,
                    lambda: torch.softmax(tq @ tk.T / 8.0, dim=-1) @ tv)
        elif has_fused_attention():
            import torch.nn.functional as F
            for dtype in ("float64", "float32"):
                q, k, v = (t.to(getattr(torch, dtype)).reshape(1, 1, n, D) for t in (tq, tk, tv))
                for causal in (False, True):
                    measure(FUSED, dtype, causal, n,
                            lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))


def repeat_means(run, repeat):
    """Seconds per call of `repeat` repeats, by Google Benchmark's rule: a repeat is the mean of
    as many calls as fill at least MIN_TIME. The first repeat finds that number: it starts with
    one call, and while the calls take less than MIN_TIME it runs again with more of them (ten
    times as many while they take under a tenth of MIN_TIME, otherwise enough for 1.4 MIN_TIME
    at the rate just seen); the tries that fell short are dropped. The other repeats keep that
    number of calls."""
    calls, means = 1, []
    while len(means) < repeat:
        start = time.perf_counter()
        for _ in range(calls):
            run()
        elapsed = time.perf_counter() - start
        if means or elapsed >= MIN_TIME:
            means.append(elapsed / calls)
            continue
        grow = 1.4 * MIN_TIME / max(elapsed, 1e-9) if elapsed > 0.1 * MIN_TIME else 10.0
        calls = max(round(calls * grow), calls + 1)
    return means


def python_facts():
    """Versions and the OpenBLAS kernel of the Python side, printed by a worker process."""
    import numpy
    import torch
    cpu = getattr(torch.backends, "cpu", None)  # PyTorch 2 has it, 1.13 does not
    facts = {"numpy": numpy.__version__, "torch": torch.__version__,
             "torch_cpu": cpu.get_cpu_capability() if cpu else "?",
             "fused": has_fused_attention()}
    try:
        from threadpoolctl import threadpool_info
        blas = [i for i in threadpool_info() if i.get("internal_api") == "openblas"]
        if blas:
            facts["openblas"] = blas[0].get("version")
            facts["openblas_core"] = blas[0].get("architecture")
    except ImportError:
        pass
    print(json.dumps(facts))


# --- the C++ benchmark --------------------------------------------------------------------

CPP_NAMES = {"Gemm": ("GEMM", "float64"), "GemmF32": ("GEMM", "float32"),
             "Reference": ("C++ reference", "float64"), "Streaming": (OURS, "float64"),
             "StreamingF32": (OURS, "float32")}


def cpp(bench, threads, sizes, reference_sizes, repeat, env):
    """The C++ benchmark's runs at these sizes and thread counts, in one process, repetitions
    interleaved at random so that a noisy spell hits every contender alike: the fastest
    repetition of each (a repetition's time is its mean over as many iterations as fill
    MIN_TIME), and the run's context (the OpenBLAS kernel among it)."""
    def names(ns):
        return "|".join(str(n) for n in ns)
    pattern = (f"^((Gemm|GemmF32)/n:2048/threads:({names(threads)})/|"
               f"(Streaming|StreamingF32)/n:({names(sizes)})/threads:({names(threads)})/|"
               f"Reference/n:({names(reference_sizes)})/threads:({names(threads)})/)")
    out = json.loads(subprocess.run(
        [str(bench), f"--benchmark_filter={pattern}", "--benchmark_format=json",
         f"--benchmark_min_time={MIN_TIME}", f"--benchmark_repetitions={repeat}",
         "--benchmark_enable_random_interleaving=true"],
        check=True, capture_output=True, text=True, env=env).stdout)
    best = {}
    for b in out["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        m = re.match(r"(\w+)/n:(\d+)/threads:(\d+)(?:/causal:(\d))?", b["name"])
        contender, dtype = CPP_NAMES[m.group(1)]
        key = (contender, dtype, m.group(4) == "1", int(m.group(3)), int(m.group(2)))
        seconds = b["real_time"] / 1e3  # ms
        if key not in best or seconds < best[key]["seconds"]:
            best[key] = {"contender": contender, "dtype": dtype, "causal": key[2],
                         "threads": key[3], "n": key[4], "seconds": seconds,
                         "added_mb": b["added_MB"]}
    return list(best.values()), out["context"]


def env_for(threads, coretype, blas_threads=None):
    """The environment of every run: the thread counts (OpenBLAS's, unless given apart, equal to
    OpenMP's), and OpenBLAS's own kernel choice unless a core type is asked for."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    env.update(OPENBLAS_NUM_THREADS=str(blas_threads or threads), OMP_NUM_THREADS=str(threads))
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    return env


def flops(row):
    if row["contender"] == "GEMM":
        return 2.0 * row["n"] ** 3
    return 4.0 * row["n"] ** 2 * D * (0.5 if row["causal"] else 1.0)


def gflops(row):
    return flops(row) / row["seconds"] / 1e9


def machine(facts, context):
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.machine())
    kernel = context.get("openblas_core", "?")
    python_kernel = facts.get("openblas_core")
    if python_kernel and python_kernel.lower() != kernel.lower():
        kernel += f" (Python's OpenBLAS: {python_kernel})"
    blas = context.get("openblas_config", "OpenBLAS").split()
    return (f"{cpu}, {os.cpu_count()} cores, Debian {open('/etc/debian_version').read().strip()}, "
            f"{' '.join(blas[:2])}, kernel {kernel}, numpy {facts['numpy']}, "
            f"PyTorch {facts['torch']} ({facts['torch_cpu']})")


COLOURS = {OURS: "#0072B2", FUSED: "#CC79A7", "C++ reference": "#009E73",
           "numpy (article)": "#D55E00", "numpy (vectorised)": "#E69F00",
           "PyTorch (textbook)": "#999999"}


def label(contender, dtype, causal, threads):
    return (f"{contender} {dtype}{', causal' if causal else ''}, {threads} "
            f"thread{'s' if threads > 1 else ''}")


def plots(rows, out):
    """Three figures with gnuplot, against n: time (every non-causal contender, one and two
    threads), GFLOP/s of the two fused contenders on one thread with the dgemm and sgemm rates
    of the same run (the roofline: a kernel made of GEMMs cannot beat them), and added memory.
    One colour per contender; float64 solid, float32 dashed; filled points one thread, open
    points two; causal runs drawn thin."""
    data = out / "attention.dat"

    def series(keep):
        """The rows a figure draws (those `keep` accepts, GEMMs apart), one series per
        contender, precision, mask and thread count."""
        kept = [r for r in rows if r["contender"] != "GEMM" and keep(r)]
        return kept, sorted({(r["contender"], r["dtype"], r["causal"], r["threads"]) for r in kept})
    figures = {
        "attention-time": (series(lambda r: not r["causal"]), 2,
                           "set logscale y 10\nset ylabel 'seconds (minimum of repeats)'\n"
                           "set title 'Attention, d = 64: time against n, not causal (log-log)'\n", ""),
        "attention-gflops": (series(lambda r: r["contender"] in (OURS, FUSED) and r["threads"] == 1), 3,
                             "set ylabel 'GFLOP/s (4 n^2 d flops per call, half when causal)'\n"
                             "set yrange [0:*]\nset title 'One thread: the fused kernels against "
                             "the GEMM rates of the same run'\n",
                             "".join(f", {gflops(r)} with lines lc rgb '#555555' dashtype "
                                     f"{1 if r['dtype'] == 'float64' else 2} lw 1 title "
                                     f"'{'dgemm' if r['dtype'] == 'float64' else 'sgemm'}, 1 thread'"
                                     for r in rows if r["contender"] == "GEMM" and r["threads"] == 1)),
        "attention-memory": (series(lambda r: not r["causal"] and r["threads"] == 1
                                    and r["n"] >= MEMORY_FROM), 4,
                             "set logscale y 10\nset ylabel 'MB added at the peak, inputs excluded "
                             "(0.1: none)'\nset title 'Memory a call needs beyond its inputs, "
                             f"against n (one thread, n ≥ {MEMORY_FROM})'\n",
                             f", 3 * x**2 * 8 / 1e6 with lines lc rgb '#555555' dashtype 2 title "
                             f"'3 n^2 doubles (the grids)', x * {D} * 8 / 1e6 with lines "
                             f"lc rgb '#555555' dashtype 3 title 'n d doubles (the output)'"),
    }
    common = ("set terminal pngcairo size 1000,600 font 'DejaVu Sans,11'\n"
              "set key outside right top font ',9'\nset logscale x 2\n"
              "set xlabel 'n (tokens), d = 64'\nset grid\n")
    for name, ((kept, chosen), column, setup, extra) in figures.items():
        with open(data, "w") as f:
            for key in chosen:
                for r in sorted((r for r in kept if (r["contender"], r["dtype"], r["causal"],
                                                     r["threads"]) == key), key=lambda r: r["n"]):
                    f.write(f'{r["n"]} {r["seconds"]} {gflops(r)} {max(r["added_mb"], 0.1)}\n')
                f.write("\n\n")
        curves = ", ".join(
            f"'{data}' index {i} using 1:{column} with linespoints "
            f"lw {1 if causal else 2} pt {7 if threads == 1 else 6} ps 0.8 lc rgb '{COLOURS[c]}' "
            f"dashtype {1 if dtype == 'float64' else 2} title '{label(c, dtype, causal, threads)}'"
            for i, (c, dtype, causal, threads) in enumerate(chosen))
        script = common + setup + f"set output '{out / (name + '.png')}'\nplot {curves}{extra}\n"
        subprocess.run(["gnuplot"], input=script, text=True, check=True)
    data.unlink()


def tables(rows, sizes):
    """The tables, each a caption, its lines, and whether the README shows it (chapter 09's page
    shows them all): ours against PyTorch 2's fused kernel on one thread, both precisions,
    causal and not; the same on two threads; the teaching contenders, float64, not causal; and
    both fused kernels against the GEMM rates (the chapter's). Each column's ratio goes one way,
    said in its header. Also the one-thread GEMM rates, by precision."""
    at = {(r["contender"], r["dtype"], r["causal"], r["threads"], r["n"]): r for r in rows}
    gemm = {r["dtype"]: gflops(r) for r in rows if r["contender"] == "GEMM" and r["threads"] == 1}

    def ms(key):
        return f"{at[key]['seconds'] * 1e3:.1f} ms" if key in at else "–"

    def ratio(slow, fast):
        return f"{at[slow]['seconds'] / at[fast]['seconds']:.2f}x" if slow in at and fast in at else "–"

    def of_gemm(key):
        dtype = key[1]
        return (f"{gflops(at[key]) / gemm[dtype]:.0%}" if key in at and dtype in gemm else "–")

    def rows_of(cells):
        """One row per size and mask; `cells` gives the row's cells from a key maker."""
        lines = []
        for n in sizes:
            for causal in (False, True):
                def key(contender, dtype, threads=1):
                    return (contender, dtype, causal, threads, n)
                lines.append(f"| {n} | {'causal' if causal else 'none'} | "
                             + " | ".join(cells(key)) + " |")
        return lines

    faster = "(>1: ours faster)"
    one = ([f"| n | mask | ours f64 | SDPA f64 | SDPA ÷ ours, f64 {faster} | ours f32 | SDPA f32 "
            f"| SDPA ÷ ours, f32 {faster} | ours f64, of dgemm | ours f32, of sgemm |",
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
           + rows_of(lambda key: [ms(key(OURS, "float64")), ms(key(FUSED, "float64")),
                                  ratio(key(FUSED, "float64"), key(OURS, "float64")),
                                  ms(key(OURS, "float32")), ms(key(FUSED, "float32")),
                                  ratio(key(FUSED, "float32"), key(OURS, "float32")),
                                  of_gemm(key(OURS, "float64")), of_gemm(key(OURS, "float32"))]))
    two = ([f"| n | mask | ours f64, speed-up | ours f32, speed-up | SDPA f64, speed-up "
            f"| SDPA f32, speed-up | SDPA ÷ ours, f64 {faster} | SDPA ÷ ours, f32 {faster} |",
            "|---:|---|---:|---:|---:|---:|---:|---:|"]
           + rows_of(lambda key: [ratio(key(c, d), key(c, d, 2)) for c in (OURS, FUSED)
                                  for d in ("float64", "float32")]
                     + [ratio(key(FUSED, d, 2), key(OURS, d, 2)) for d in ("float64", "float32")]))
    rates = (["| n | mask | ours f64, of dgemm | SDPA f64, of dgemm | ours f32, of sgemm "
              "| SDPA f32, of sgemm |", "|---:|---|---:|---:|---:|---:|"]
             + rows_of(lambda key: [of_gemm(key(c, d)) for d in ("float64", "float32")
                                    for c in (OURS, FUSED)]))
    teaching = ["| n | numpy (article) | numpy (vectorised) | PyTorch (textbook) | C++ reference "
                "| C++ streaming | article ÷ streaming (>1: streaming faster) "
                "| textbook PyTorch ÷ streaming (>1: streaming faster) |",
                "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n in sizes:
        def key(c):
            return (c, "float64", False, 1, n)
        teaching.append(
            f"| {n} | {' | '.join(ms(key(c)) for c in TEACHING + ['C++ reference', OURS])} "
            f"| {ratio(key('numpy (article)'), key(OURS))} "
            f"| {ratio(key('PyTorch (textbook)'), key(OURS))} |")
    return [("One thread: ours against PyTorch 2's fused `scaled_dot_product_attention` (SDPA), "
             "the time of one call; \"of dgemm\" is ours in GFLOP/s over the same run's dgemm "
             "rate (sgemm for f32):", one, True),
            ("Two threads, on one (n, 64) problem (batch × heads = 1; PyTorch shares out batch × "
             "heads × blocks of queries, so here only the blocks of queries). A speed-up is a "
             "kernel's one-thread time over its own two-thread time (2x is perfect); SDPA ÷ ours "
             "divides the two-thread times:", two, True),
            ("Against what the articles teach from, float64, not causal, one thread:", teaching,
             True),
            ("One thread, both fused kernels against the machine: GFLOP/s (4 n² d flops a call, "
             "half when causal) over the same run's dgemm rate (f64) or sgemm rate (f32):",
             rates, False)], gemm


def measure(args):
    """Every contender, side by side, each timed as the fastest of args.repeat repeats by the
    same rule (see repeat_means): for each thread count, the Python contenders in fresh
    processes (OpenBLAS reads its thread count at start); then the C++ benchmark."""
    rows = []
    facts = json.loads(subprocess.run([sys.executable, __file__, "--facts"], check=True,
                                      capture_output=True, text=True,
                                      env=env_for(1, args.openblas_coretype)).stdout)
    # The teaching forms give their threads to OpenBLAS. A fused kernel runs its blocks on
    # threads of its own and calls OpenBLAS on one thread from each, as the C++ streaming form
    # does (letting OpenBLAS start threads of its own inside them oversubscribes the cores).
    for threads in args.threads:
        for group, blas_threads in (("teaching", threads), ("fused", 1)):
            print(f"compare: Python contenders ({group}), {threads} thread(s)", file=sys.stderr)
            run = subprocess.run([sys.executable, __file__, "--worker", group, "--threads",
                                  str(threads), "--repeat", str(args.repeat),
                                  "--sizes", *map(str, args.sizes)],
                                 check=True, capture_output=True, text=True,
                                 env=env_for(threads, args.openblas_coretype, blas_threads))
            rows += [json.loads(line) for line in run.stdout.splitlines()]
    print(f"compare: C++ benchmark, {' and '.join(map(str, args.threads))} thread(s)", file=sys.stderr)
    streaming = sorted(set(args.sizes) | {n for n in (2 ** k for k in range(8, 15))
                                          if args.sizes[0] <= n <= args.streaming_up_to})
    cpp_rows, context = cpp(args.bench, args.threads, streaming,
                            [n for n in args.sizes if n <= args.reference_up_to],
                            args.repeat, env_for(max(args.threads), args.openblas_coretype))
    return rows + cpp_rows, facts, context


COLUMNS = ["contender", "dtype", "causal", "threads", "n", "seconds", "gflops", "added_mb"]


def write_csv(path, heading, rows):
    with open(path, "w", newline="") as f:
        f.write(f"# {heading}\n")
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for r in sorted(rows, key=lambda r: (r["contender"], r["dtype"], r["causal"], r["threads"],
                                             r["n"])):
            w.writerow([r["contender"], r["dtype"], int(r["causal"]), r["threads"], r["n"],
                        f"{r['seconds']:.6g}", f"{gflops(r):.4g}", f"{r['added_mb']:.1f}"])


def read_csv(path):
    with open(path, newline="") as f:
        heading = f.readline()[2:].strip()
        rows = [{"contender": r["contender"], "dtype": r["dtype"], "causal": r["causal"] == "1",
                 "threads": int(r["threads"]), "n": int(r["n"]), "seconds": float(r["seconds"]),
                 "added_mb": float(r["added_mb"])} for r in csv.DictReader(f)]
    return heading, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024, 2048, 4096, 8192])
    ap.add_argument("--streaming-up-to", type=int, default=16384)
    ap.add_argument("--reference-up-to", type=int, default=8192,
                    help="the C++ reference's largest n (at 16384 its grids take 6.4 GB)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=5,
                    help="repeats of every contender, on both sides; each time is the fastest")
    ap.add_argument("--openblas-coretype", default="",
                    help="run every contender on this OpenBLAS kernel (default: OpenBLAS's choice)")
    ap.add_argument("--bench", default=str(ROOT / "build" / "bench" / "attention_bench"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--readme", help="README to update between its performance markers")
    ap.add_argument("--from-csv", action="store_true",
                    help="measure nothing: redraw the figures and the tables from OUT/attention.csv")
    ap.add_argument("--worker", choices=["teaching", "fused"], help=argparse.SUPPRESS)
    ap.add_argument("--facts", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.facts:
        return python_facts()
    if args.worker:
        return worker(args.worker, args.threads[0], args.sizes, args.repeat)

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.from_csv:
        heading, rows = read_csv(out / "attention.csv")
    else:
        rows, facts, context = measure(args)
        heading = (f"Measured on {machine(facts, context)}; d = 64. Every time, C++ and Python "
                   f"alike, is the fastest of {args.repeat} repeats, a repeat being the mean of as "
                   f"many calls as fill at least {MIN_TIME} s (Google Benchmark's rule); the Python "
                   f"contenders ran first, in processes of their own, then the C++ benchmark. "
                   f"Threads: {' and '.join(map(str, args.threads))}, the same for every "
                   f"contender (the fused kernels' own, each holding OpenBLAS to one inside; "
                   f"OpenBLAS's for the others).")
        if not facts["fused"]:
            heading += " This PyTorch has no scaled_dot_product_attention (PyTorch 2 has)."
        write_csv(out / "attention.csv", heading, rows)
    plots(rows, out)
    sections, gemm = tables(rows, sorted({r["n"] for r in rows if r["contender"] == OURS
                                          and r["n"] in args.sizes}))
    rates = ", ".join(f"{'dgemm' if d == 'float64' else 'sgemm'} {v:.1f} GFLOP/s"
                      for d, v in sorted(gemm.items(), reverse=True))
    first = f"{heading} GEMM rates in the same run, one thread: {rates}."

    def body(for_readme):
        return "\n\n".join(caption + "\n\n" + "\n".join(lines)
                            for caption, lines, in_readme in sections
                            if in_readme or not for_readme)
    text = first + "\n\n" + body(True)
    print(first + "\n\n" + body(False))
    # Chapter 09's page includes these tables (\includedoc), so that page and README agree; the
    # page has one more, of the GEMM rates. Doxygen runs an included file's first two
    # paragraphs together; its \n keeps them apart.
    (out / "attention-tables.md").write_text(first + "\n\\n\n" + body(False) + "\n",
                                             encoding="utf-8")
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
