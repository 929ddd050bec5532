#!/usr/bin/python3
"""Chapter 11's training step, side by side: the book's C++ (bench/training_bench, one step of
attn::gpt::train, in each precision it has) against PyTorch 2 on the same model, eager and
torch.compile, float32 and float64, on the same OpenBLAS and the same number of threads.

    cmake --build --preset default --target training_bench
    /usr/bin/python3 bench/compare_training.py                  # 3 rounds (about 12 minutes)
    /usr/bin/python3 bench/compare_training.py --quick          # one round of a few steps
    /usr/bin/python3 bench/compare_training.py --probe-threads  # the thread settings compared

The model is chapter 11's: vocabulary 1024, d_model 96, 4 heads, 4 pre-norm GPT-2 blocks
(biases on Q, K, V, O and the MLP, layer norm eps 1e-5, exact GELU, d_ff 384, causal
attention), 128 learned positions, tied embeddings, no dropout. A step: 16 windows of 129
random tokens (2048 tokens), forward, cross-entropy, backward, clipping to a global norm of 1,
AdamW (beta 0.9 and 0.999, eps 1e-8, weight decay 0.1 on the block matrices only) at a constant
learning rate of 3e-4.

Every contender runs once per round in a fresh process, the contenders of a round in a
shuffled order, each taking --warmup untimed steps and then --steps timed ones; a run's time is
the mean of its timed steps and a contender's the fastest round's (the machine is shared and
noisy). MFU divides a contender's model FLOPs per second (6 N + 12 L d T per token) by the sgemm
rate that training_bench measures at the step's typical shape (2048 x 96 times 96 x 384) on
the same number of threads, in the same rounds.

OpenBLAS chooses its kernel for the CPU it finds unless OPENBLAS_CORETYPE says otherwise: this
script removes OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE from every run it starts and records the
kernel that ran. Writes bench/results/training.csv (every run) and
bench/results/training-tables.md; --probe-threads writes bench/results/training-threads.md. Needs Debian 13's python3-torch (PyTorch 2), python3-numpy,
python3-threadpoolctl, and g++ with python3-dev for torch.compile.
"""
import argparse
import csv
import datetime
import json
import os
import pathlib
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Chapter 11's model and batch (chapters/11_small_gpt/main.cpp, kModel and kTraining).
V, D, HEADS, LAYERS, D_FF, T, BATCH = 1024, 96, 4, 4, 384, 128, 16
TOKENS = BATCH * T  # a step's tokens
PARAMETERS = 558144  # attn::gpt::parameter_count, position table included
# N, the parameters but the position table (a lookup), and the model FLOPs of a step: 6 N per
# token for the weights (forward 2, backward 4) and 12 L d T for attention's two T x T products
# (training_bench.cpp, model_flops_per_step, says it at length and checks N).
N = PARAMETERS - T * D
FLOPS_PER_STEP = 6 * N * TOKENS + 12 * LAYERS * D * T * TOKENS

OURS = "C++ attn::gpt::train"
EAGER = "PyTorch eager"
COMPILED = "torch.compile"
SGEMM = "sgemm 2048x96x384"
DGEMM = "dgemm 2048x96x384"


# --- PyTorch, in a worker process per run ---------------------------------------------------

def torch_run(mode, dtype_name, threads, warmup, steps):
    """One run of the PyTorch step: `warmup` untimed steps, then `steps` timed ones; prints
    the mean time of a timed step, the last loss and what threads the process has."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    torch.set_num_threads(threads)
    dtype = getattr(torch, dtype_name)
    torch.manual_seed(11)

    class Block(nn.Module):
        """GPT-2's pre-norm block, with Q, K and V as three matrices, as the book's block."""
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(D, eps=1e-5), nn.LayerNorm(D, eps=1e-5)
            self.q, self.k, self.v, self.o = (nn.Linear(D, D) for _ in range(4))
            self.fc1, self.fc2 = nn.Linear(D, D_FF), nn.Linear(D_FF, D)

        def forward(self, x):
            b, t, _ = x.shape
            a = self.ln1(x)
            q, k, v = (m(a).view(b, t, HEADS, D // HEADS).transpose(1, 2)
                       for m in (self.q, self.k, self.v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.o(y.transpose(1, 2).reshape(b, t, D))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))  # exact (erf) GELU

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(V, D), nn.Embedding(T, D)
            nn.init.normal_(self.wte.weight, std=0.02)
            nn.init.normal_(self.wpe.weight, std=0.02)
            self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
            self.lnf = nn.LayerNorm(D, eps=1e-5)

        def forward(self, idx, targets):
            x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
            for block in self.blocks:
                x = block(x)
            logits = F.linear(self.lnf(x), self.wte.weight)  # tied: the embedding read back
            return F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))

    model = GPT().to(dtype)
    count = sum(p.numel() for p in model.parameters())
    assert count == PARAMETERS, f"the PyTorch model has {count} parameters, not {PARAMETERS}"
    matrices = [m.weight for b in model.blocks for m in (b.q, b.k, b.v, b.o, b.fc1, b.fc2)]
    chosen = {id(p) for p in matrices}
    others = [p for p in model.parameters() if id(p) not in chosen]
    optimizer = torch.optim.AdamW([{"params": matrices, "weight_decay": 0.1},
                                   {"params": others, "weight_decay": 0.0}],
                                  lr=3e-4, betas=(0.9, 0.999), eps=1e-8)
    loss_of = torch.compile(model) if mode == "compile" else model
    generator = torch.Generator().manual_seed(11)
    text = torch.randint(0, V, (1 << 16,), generator=generator)

    def step():
        starts = torch.randint(0, text.numel() - T, (BATCH,), generator=generator).tolist()
        windows = torch.stack([text[s:s + T + 1] for s in starts])
        loss = loss_of(windows[:, :-1], windows[:, 1:])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss.item()

    for _ in range(warmup):
        step()
    times = []
    cpu = os.times()
    for _ in range(steps):
        start = time.perf_counter()
        loss = step()
        times.append(time.perf_counter() - start)
    cpu_seconds = sum(os.times()[:2]) - sum(cpu[:2])  # user and system, all of its threads
    print(json.dumps({"seconds": sum(times) / len(times), "cpu_per_wall": cpu_seconds / sum(times),
                      "loss": loss, "threads_seen": threads_seen(torch)}))


def threads_seen(torch):
    """What the process's thread pools are, as threadpoolctl finds them, and PyTorch's own."""
    seen = {"torch_threads": torch.get_num_threads()}
    try:
        from threadpoolctl import threadpool_info
        for pool in threadpool_info():
            api = pool.get("internal_api")
            if api == "openblas":
                seen.update(openblas_threads=pool.get("num_threads"),
                            openblas_threading=pool.get("threading_layer"),
                            openblas_core=pool.get("architecture"),
                            openblas=pool.get("version"),
                            openblas_file=pool.get("filepath"))
            elif api == "openmp":
                seen.setdefault("openmp", []).append(
                    f"{pathlib.Path(pool.get('filepath', '?')).name}: {pool.get('num_threads')}")
    except ImportError:
        seen["threadpoolctl"] = "not installed"
    return seen


def torch_facts():
    import numpy
    import torch
    cpu = getattr(torch.backends, "cpu", None)
    print(json.dumps({"torch": torch.__version__, "numpy": numpy.__version__,
                      "torch_cpu": cpu.get_cpu_capability() if cpu else "?"}))


# --- the runs -------------------------------------------------------------------------------

# torch.compile's cache of compiled graphs, one per thread count, made new for each run of this
# script. Its key leaves out the thread count, although the C++ that Inductor writes depends on
# it (one thread: no OpenMP at all; more: `#pragma omp parallel num_threads(T)`), so with one
# shared cache a two-thread run reused the one-thread kernels of an earlier run.
INDUCTOR_CACHE = None


def env_for(threads, setting=None):
    """The environment of every run: OpenBLAS's kernel its own choice, OpenBLAS's and OpenMP's
    threads both `threads`, then `setting` (by default FAIR, below)."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    env.update(OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               TORCHINDUCTOR_COMPILE_THREADS="1")  # compiling: one process, no pool left behind
    if INDUCTOR_CACHE:
        env["TORCHINDUCTOR_CACHE_DIR"] = str(pathlib.Path(INDUCTOR_CACHE) / f"threads-{threads}")
    env.update(FAIR if setting is None else setting)
    return env


# The setting every run gets, found fair with --probe-threads (bench/results/training-threads.md).
# PyTorch runs its own operations on OpenMP threads (libgomp) and its GEMMs on OpenBLAS's
# (pthreads), and each pool keeps its idle threads spinning for a while before they sleep:
# libgomp's for 300,000 spins, OpenBLAS's for 2^28 cycles (about 0.13 s at 2.1 GHz), so in a
# step, which calls OpenBLAS every few milliseconds, its idle thread hardly ever sleeps. With
# both pools on T threads a process has 2T - 1 threads; on two cores a spinning thread of one
# pool takes a core from a working thread of the other, and PyTorch eager on two threads ran
# slower than on one. Telling both pools to sleep at once when idle lets the second thread help
# PyTorch. It is not free for ours: an idle OpenBLAS thread that sleeps must be woken for the
# next product, and in the probe our two-thread steps were about a tenth slower with it (float64
# 388 against 425 ms, float32 74 against 80); the same setting for every contender leans the
# two-thread rows that much against ours, not for it.
FAIR = {"OMP_WAIT_POLICY": "PASSIVE", "OPENBLAS_THREAD_TIMEOUT": "4"}


def first_line_of_error(stderr):
    """The line that names a failed run's error: the last that looks like one."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        if "Error" in line or "error" in line:
            return line[:300]
    return lines[-1][:300] if lines else "no output"


def run_torch(mode, dtype, threads, warmup, steps, setting=None, torch_threads=None):
    done = subprocess.run([sys.executable, __file__, "--worker", mode, "--dtype", dtype,
                           "--threads", str(torch_threads or threads), "--warmup", str(warmup),
                           "--steps", str(steps)], capture_output=True, text=True,
                          env=env_for(threads, setting))
    if done.returncode != 0:
        return {"error": first_line_of_error(done.stderr)}
    return json.loads(done.stdout.splitlines()[-1])


def run_bench(bench, pattern, threads, extra=(), setting=None):
    done = subprocess.run([str(bench), f"--benchmark_filter={pattern}", "--benchmark_format=json",
                           *extra], capture_output=True, text=True, env=env_for(threads, setting))
    if done.returncode != 0:
        return None, {"error": first_line_of_error(done.stderr)}
    out = json.loads(done.stdout)
    return out["context"], [b for b in out["benchmarks"] if b.get("run_type") == "iteration"]


def run_ours(bench, precision, threads, warmup, steps, setting=None):
    context, runs = run_bench(bench, f"^TrainStep/{precision}/threads:{threads}/", threads,
                              [f"--timed_steps={steps}", f"--warmup_steps={warmup}"], setting)
    if context is None:
        return runs
    if len(runs) != 1 or runs[0].get("error_occurred"):
        return {"error": runs[0].get("error_message", "?") if runs else "no such benchmark"}
    b = runs[0]
    if round(b["flops_per_step"]) != FLOPS_PER_STEP:
        sys.exit(f"compare_training: training_bench counts {b['flops_per_step']} FLOPs a step, "
                 f"this script {FLOPS_PER_STEP}")
    return {"seconds": b["real_time"] / 1e3, "loss": b["loss"], "context": context}


def run_gemm(bench, threads):
    """The GEMM rates at the step's shape, GFLOP/s: {"float32": sgemm, "float64": dgemm}."""
    context, runs = run_bench(bench, f"^(Gemm|GemmF32)/m:2048/k:96/n:384/threads:{threads}/",
                              threads)
    if context is None:
        return runs
    return {"rates": {("float32" if b["name"].startswith("GemmF32") else "float64"): b["GFLOPs"]
                      for b in runs},
            "context": context}


def our_precisions(bench):
    """The precisions training_bench times (f64; f32 once the GPT layer has a float32 step)."""
    names = subprocess.run([str(bench), "--benchmark_list_tests=true",
                            "--benchmark_filter=^TrainStep/"], check=True, capture_output=True,
                           text=True).stdout.split()
    return sorted({name.split("/")[1] for name in names}, reverse=True)


def measure(args):
    """Every contender once per round, each in a fresh process, in a shuffled order."""
    dtype = {"f64": "float64", "f32": "float32"}
    jobs = []
    for threads in args.threads:
        jobs += [("gemm", None, threads)]
        jobs += [(OURS, dtype[p], threads) for p in our_precisions(args.bench)]
        jobs += [(c, d, threads) for c in (EAGER, COMPILED) for d in ("float32", "float64")]
    rows, contexts, gemm = [], [], []
    for round_ in range(1, args.repeat + 1):
        order = jobs[:]
        random.shuffle(order)
        for contender, dt, threads in order:
            print(f"compare_training: round {round_} of {args.repeat}: {contender} "
                  f"{dt or ''} {threads} thread(s)", file=sys.stderr, flush=True)
            # when it started and the load then, to tell a run that shared the cores
            when = {"started": time.strftime("%H:%M:%S"), "load": loadavg()}
            if contender == "gemm":
                result = run_gemm(args.bench, threads)
                if "error" in result:
                    sys.exit(f"compare_training: the GEMM run failed: {result['error']}")
                contexts.append(result["context"])
                for d, rate in result["rates"].items():
                    gemm.append({"round": round_, "contender": SGEMM if d == "float32" else DGEMM,
                                 "dtype": d, "threads": threads, "gflops": rate, **when})
                continue
            if contender == OURS:
                result = run_ours(args.bench, {"float64": "f64", "float32": "f32"}[dt], threads,
                                  args.warmup, args.steps)
                if "context" in result:
                    contexts.append(result.pop("context"))
            else:
                result = run_torch("eager" if contender == EAGER else "compile", dt, threads,
                                   args.warmup, args.steps)
            rows.append({"round": round_, "contender": contender, "dtype": dt,
                         "threads": threads, **when, **result})
    return rows, gemm, contexts


# --- which settings are fair on two threads ------------------------------------------------

# The settings --probe-threads compares on two threads (name, environment, PyTorch's threads if
# not the count): PyTorch runs its own operations on OpenMP threads (libgomp) and its GEMMs on
# OpenBLAS's (pthreads), two pools that each wait for work by spinning for a while.
PROBE = [
    ("OpenBLAS and OpenMP on 2 threads, nothing else", {}, None),
    ("and OMP_WAIT_POLICY=PASSIVE", {"OMP_WAIT_POLICY": "PASSIVE"}, None),
    ("and OPENBLAS_THREAD_TIMEOUT=4", {"OPENBLAS_THREAD_TIMEOUT": "4"}, None),
    ("and both", {"OMP_WAIT_POLICY": "PASSIVE", "OPENBLAS_THREAD_TIMEOUT": "4"}, None),
    ("OpenBLAS on 1 thread, PyTorch's OpenMP on 2", {"OPENBLAS_NUM_THREADS": "1"}, None),
    ("PyTorch's OpenMP on 1 thread, OpenBLAS on 2", {"OMP_NUM_THREADS": "1"}, 1),
]


def probe_threads(args):
    """PyTorch eager float32 and ours (each precision training_bench has) on two threads under
    each setting of PROBE, against one thread with none, each run a fresh process, rounds
    shuffled: which setting lets a second thread help, and what it costs the others."""
    sides = ["PyTorch eager f32"] + [f"ours {p}" for p in our_precisions(args.bench)]
    jobs = [(side, "one thread", 1, {}, None) for side in sides]
    for name, setting, torch_threads in PROBE:
        for side in sides:
            # ours sets its own thread counts: the settings that change them are PyTorch's
            if side.startswith("PyTorch") or not ("OMP_NUM_THREADS" in setting
                                                  or "OPENBLAS_NUM_THREADS" in setting):
                jobs.append((side, name, 2, setting, torch_threads))
    best_run = {}
    for round_ in range(1, args.repeat + 1):
        order = jobs[:]
        random.shuffle(order)
        for side, name, threads, setting, torch_threads in order:
            print(f"compare_training: probe, round {round_} of {args.repeat}: {side}, {name}",
                  file=sys.stderr, flush=True)
            if side.startswith("PyTorch"):
                r = run_torch("eager", "float32", threads, args.warmup, args.steps, setting,
                              torch_threads)
            else:
                r = run_ours(args.bench, side.split()[1], threads, args.warmup, args.steps,
                             setting)
            key = (side, name)
            if "seconds" in r and (key not in best_run
                                   or r["seconds"] < best_run[key]["seconds"]):
                best_run[key] = r

    def seconds(side, name):
        return best_run.get((side, name), {}).get("seconds")

    def cells(side, name):
        t, one = seconds(side, name), seconds(side, "one thread")
        if t is None:
            return ["–", "–"]
        return [f"{t * 1e3:.0f}", f"{one / t:.2f}x" if one else "–"]
    ones = ", ".join(f"{side} {seconds(side, 'one thread') * 1e3:.0f} ms"
                     for side in sides if seconds(side, "one thread"))
    busy = best_run.get(("PyTorch eager f32", "one thread"), {}).get("cpu_per_wall", 0)
    lines = [f"Two threads against one, by setting: the fastest of {args.repeat} rounds of a "
             f"{args.steps}-step mean (after {args.warmup} untimed), each run a fresh process; "
             f"{datetime.date.today().isoformat()}, load average {loadavg()} at the end. One "
             f"thread, nothing set: {ones} a step (PyTorch's CPU time ÷ wall time {busy:.2f}).",
             "", "| setting (2 threads) | PyTorch eager f32, ms | speed-up over 1 thread "
             "| its CPU time ÷ wall time | " +
             " | ".join(f"{side}, ms | speed-up over 1 thread" for side in sides[1:]) + " |",
             "|---|" + "---:|" * (1 + 2 * len(sides))]
    for name, _, _ in PROBE:
        torch_busy = best_run.get(("PyTorch eager f32", name), {}).get("cpu_per_wall")
        row = cells("PyTorch eager f32", name) + [f"{torch_busy:.2f}" if torch_busy else "–"]
        for side in sides[1:]:
            row += cells(side, name)
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    text = "\n".join(lines)
    print(text)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "training-threads.md").write_text(text + "\n", encoding="utf-8")


# --- the tables -----------------------------------------------------------------------------

def best(rows):
    """Each contender's fastest round (and the failures of those that never ran)."""
    out = {}
    for r in rows:
        key = (r["contender"], r["dtype"], r["threads"])
        if "seconds" in r:
            if key not in out or "seconds" not in out[key] or r["seconds"] < out[key]["seconds"]:
                out[key] = r
        elif key not in out:
            out[key] = r
    return out


def machine(torch_facts_, context):
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.machine())
    blas = context.get("openblas_config", "OpenBLAS").split()
    return (f"{cpu}, {os.cpu_count()} cores, Debian {open('/etc/debian_version').read().strip()}, "
            f"{' '.join(blas[:2])}, PyTorch {torch_facts_['torch']} "
            f"({torch_facts_['torch_cpu']}), numpy {torch_facts_['numpy']}")


def tables(rows, gemm, args, facts, contexts, load):
    at = best(rows)
    sgemm = {}
    for g in gemm:
        if g["dtype"] == "float32":
            sgemm[g["threads"]] = max(sgemm.get(g["threads"], 0), g["gflops"])
    dgemm = {}
    for g in gemm:
        if g["dtype"] == "float64":
            dgemm[g["threads"]] = max(dgemm.get(g["threads"], 0), g["gflops"])
    kernels = sorted({c.get("openblas_core", "?") for c in contexts})
    torch_kernels = sorted({r["threads_seen"].get("openblas_core", "?") for r in rows
                            if "threads_seen" in r})
    head = ["| contender | dtype | threads | ms/step | tokens/s | speed against PyTorch eager "
            "f32 | model GFLOP/s | MFU (of sgemm) | runs |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    body, failures = [], []
    order = [OURS, EAGER, COMPILED]
    for threads in args.threads:
        reference = at.get((EAGER, "float32", threads), {}).get("seconds")
        for key in sorted((k for k in at if k[2] == threads),
                          key=lambda k: (order.index(k[0]), k[1])):
            r = at[key]
            ran = sum(1 for x in rows if (x["contender"], x["dtype"], x["threads"]) == key
                      and "seconds" in x)
            tried = sum(1 for x in rows if (x["contender"], x["dtype"], x["threads"]) == key)
            if "seconds" not in r:
                body.append(f"| {key[0]} | {key[1]} | {threads} | failed | – | – | – | – "
                            f"| 0 of {tried} |")
                failures.append(f"{key[0]} {key[1]}, {threads} thread(s): {r['error']}")
                continue
            s = r["seconds"]
            ratio = f"{reference / s:.2f}x" if reference else "–"  # its time ÷ this one
            mfu = f"{FLOPS_PER_STEP / s / 1e9 / sgemm[threads]:.0%}" if threads in sgemm else "–"
            body.append(f"| {key[0]} | {key[1]} | {threads} | {s * 1e3:.1f} | {TOKENS / s:,.0f} "
                        f"| {ratio} | {FLOPS_PER_STEP / s / 1e9:.1f} | {mfu} | {ran} of {tried} |")
    rates = "; ".join(f"{t} thread(s): sgemm {sgemm[t]:.1f}, dgemm {dgemm.get(t, 0):.1f}"
                      for t in sorted(sgemm))
    pools = sorted({json.dumps(r["threads_seen"], sort_keys=True) for r in rows
                    if "threads_seen" in r})
    seen = []
    for p in map(json.loads, pools):
        seen.append(f"torch {p.get('torch_threads')} / OpenBLAS {p.get('openblas_threads')} "
                    f"({p.get('openblas_threading')}, {p.get('openblas_file', '?')}) / OpenMP "
                    f"{', '.join(p.get('openmp', []))}")
    heading = (f"Measured {datetime.date.today().isoformat()} on {machine(facts, contexts[0])}; "
               f"OpenBLAS kernel {', '.join(kernels)} (C++), {', '.join(torch_kernels)} "
               f"(PyTorch's, as threadpoolctl reports it). {args.repeat} round(s), each contender "
               f"once per round in a fresh process, in a shuffled order; a run's time is the mean "
               f"of {args.steps} steps after {args.warmup} untimed ones, and the table gives the "
               f"fastest round's. Load average {load[0]} before the run, {load[1]} after.")
    notes = [
        f"Model FLOPs a step: 6 N + 12 L d T per token, N = {N:,} parameters without the "
        f"position table, 2048 tokens: {FLOPS_PER_STEP / 1e9:.2f} GFLOP. MFU: those per "
        f"second over the sgemm rate at the step's typical shape (2048 × 96 times 96 × 384) "
        f"on the same threads, measured in the same rounds (GFLOP/s, best round: {rates}). "
        f"float64 runs are held to the sgemm rate too, which dgemm reaches only about half "
        f"of. Speed "
        f"against PyTorch eager f32: its time on the same threads ÷ the contender's (above 1: "
        f"faster).",
        f"Threads: every run had OPENBLAS_NUM_THREADS and OMP_NUM_THREADS equal to its thread "
        f"count, PyTorch torch.set_num_threads as well, ours openblas_set_num_threads and "
        f"omp_set_num_threads (its float64 step runs its products on OpenBLAS's threads, its "
        f"float32 step its loops and products on OpenMP's, OpenBLAS held to one thread in "
        f"each); OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE "
        f"unset; {', '.join(f'{k}={v}' for k, v in FAIR.items())} for every contender"
        f" (the setting that `compare_training.py --probe-threads` found fair, which writes "
        f"bench/results/training-threads.md: with "
        f"nothing set, PyTorch's OpenMP threads and OpenBLAS's each spin while idle, and on two "
        f"cores they take turns from each other's work; PyTorch eager ran slower on two threads "
        f"than on one; the same setting made our two-thread steps about a tenth slower there, "
        f"so it leans against ours). PyTorch's pools as threadpoolctl saw them: {'; '.join(seen)}.",
        "PyTorch: the same model as an nn.Module (Q, K, V, O, MLP as nn.Linear with biases, "
        "F.scaled_dot_product_attention with is_causal=True, F.gelu exact, tied embedding via "
        "F.linear), torch.optim.AdamW with its defaults on a CPU (no foreach, no fused) and two "
        "parameter groups, clip_grad_norm_, zero_grad(set_to_none=True); torch.compile compiles "
        "the model and its loss (forward and backward), the optimizer step runs eager. Each "
        "step draws its 16 windows from 65,536 random tokens on both sides.",
    ]
    if failures:
        notes.append("Failed: " + "; ".join(failures) + ".")
    return heading, head + body, notes


def write_csv(path, heading, rows, gemm):
    with open(path, "w", newline="") as f:
        f.write(f"# {heading}\n")
        w = csv.writer(f)
        w.writerow(["round", "started", "load_1min", "contender", "dtype", "threads",
                    "seconds_per_step", "tokens_per_s", "gflops", "loss", "error"])
        for r in sorted(rows, key=lambda r: (r["contender"], r["dtype"], r["threads"], r["round"])):
            s = r.get("seconds")
            w.writerow([r["round"], r["started"], r["load"], r["contender"], r["dtype"],
                        r["threads"], f"{s:.6g}" if s else "", f"{TOKENS / s:.1f}" if s else "",
                        f"{FLOPS_PER_STEP / s / 1e9:.3f}" if s else "",
                        f"{r['loss']:.4f}" if "loss" in r else "", r.get("error", "")])
        for g in sorted(gemm, key=lambda g: (g["contender"], g["threads"], g["round"])):
            w.writerow([g["round"], g["started"], g["load"], g["contender"], g["dtype"],
                        g["threads"], "", "", f"{g['gflops']:.3f}", "", ""])


def loadavg():
    return open("/proc/loadavg").read().split()[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    ap.add_argument("--repeat", type=int, default=3, help="rounds")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps of each run")
    ap.add_argument("--steps", type=int, default=10, help="timed steps of each run")
    ap.add_argument("--quick", action="store_true", help="one round of 1 + 2 steps")
    ap.add_argument("--bench", default=str(ROOT / "build" / "bench" / "training_bench"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--probe-threads", action="store_true",
                    help="compare the thread settings on two threads instead (training-threads.md)")
    ap.add_argument("--worker", choices=["eager", "compile"], help=argparse.SUPPRESS)
    ap.add_argument("--dtype", help=argparse.SUPPRESS)
    ap.add_argument("--facts", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.threads = [int(t) for t in str(args.threads).split(",")]
    if args.facts:
        return torch_facts()
    if args.worker:
        return torch_run(args.worker, args.dtype, args.threads[0], args.warmup, args.steps)
    if args.quick:
        args.repeat, args.warmup, args.steps = 1, 1, 2
    if args.probe_threads:
        return probe_threads(args)

    global INDUCTOR_CACHE
    INDUCTOR_CACHE = tempfile.mkdtemp(prefix="compare_training-inductor-")
    facts = json.loads(subprocess.run([sys.executable, __file__, "--facts"], check=True,
                                      capture_output=True, text=True,
                                      env=env_for(1)).stdout)
    before = loadavg()
    try:
        rows, gemm, contexts = measure(args)
    finally:
        shutil.rmtree(INDUCTOR_CACHE, ignore_errors=True)
    heading, table, notes = tables(rows, gemm, args, facts, contexts, (before, loadavg()))
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "training.csv", heading, rows, gemm)
    text = "\n".join([heading, "", *table, "", *(f"- {n}" for n in notes)])
    print(text)
    (out / "training-tables.md").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
