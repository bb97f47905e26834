#!/usr/bin/env python3
"""One SGD training step in fusor, PyTensor (C VM and Numba) and JAX.

    python bench/peers/peers.py --bench-bin BUILD/bench/bench_peers [options]
    python bench/peers/peers.py --skip-fusor [options]   # the Python peers alone

Writes the data (.npy) that every implementation reads, checks that all of
them agree after the same first K steps, then times each step call by call in
rounds of rotated order. fusor runs in the C++ program bench_peers, driven
through its stdin/stdout protocol (see bench/bench_peers.cpp). Prints Markdown
to stdout, progress to stderr, and writes every sample to a JSON file.
"""

import os

# One thread everywhere. BLAS, XLA and Numba read these when they load, so they
# are set before anything else is imported; the C++ program gets the same.
THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
    "NUMBA_NUM_THREADS": "1",
}
os.environ.update(THREAD_ENV)

import argparse  # noqa: E402
import gc  # noqa: E402
import importlib.metadata  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

K_AGREE = 50  # steps run before the states are compared
MLP_N, MLP_D, MLP_H, MLP_C, MLP_B, MLP_S = 4096, 784, 128, 10, 64, 512
LR_N, LR_D = 400, 784
LEARNING_RATE = 0.1
LR_L2 = 0.01

MODELS = ("mlp", "lr")
PARAMS = {"mlp": ("W1", "b1", "W2", "b2"), "lr": ("w", "b")}
TOLERANCE = {"mlp": 1e-3, "lr": 1e-9}  # float32, float64

DATA_FILES = {
    "mlp": ("mlp_X", "mlp_labels", "mlp_W1", "mlp_b1", "mlp_W2", "mlp_b2", "mlp_idx"),
    "lr": ("lr_x", "lr_y", "lr_w", "lr_b"),
}


def log(msg):
    print(f"peers: {msg}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------- data

def make_data(seed):
    """Every array, by name; the draws are in a fixed order so a seed is a data set."""
    rng = np.random.default_rng(seed)
    d = {}
    centres = rng.normal(0.0, 0.15, (MLP_C, MLP_D))
    labels = rng.integers(0, MLP_C, MLP_N, dtype=np.int64)
    noise = rng.standard_normal((MLP_N, MLP_D))
    d["mlp_X"] = (centres[labels] + noise).astype(np.float32)
    d["mlp_labels"] = labels
    d["mlp_W1"] = rng.normal(0.0, np.sqrt(2.0 / MLP_D), (MLP_D, MLP_H)).astype(np.float32)
    d["mlp_b1"] = np.zeros(MLP_H, np.float32)
    d["mlp_W2"] = rng.normal(0.0, np.sqrt(1.0 / MLP_H), (MLP_H, MLP_C)).astype(np.float32)
    d["mlp_b2"] = np.zeros(MLP_C, np.float32)
    # Epochs of shuffled rows: S * B = 8 * N, so each minibatch has distinct rows
    # and every row is seen equally often.
    epochs = MLP_S * MLP_B // MLP_N
    d["mlp_idx"] = np.concatenate([rng.permutation(MLP_N) for _ in range(epochs)]
                                  ).astype(np.int64).reshape(MLP_S, MLP_B)
    d["lr_x"] = rng.standard_normal((LR_N, LR_D))
    d["lr_y"] = rng.integers(0, 2, LR_N).astype(np.float64)
    d["lr_w"] = rng.normal(0.0, 0.01, LR_D)
    d["lr_b"] = np.array(0.0, np.float64)
    return d


def write_data(datadir, seed, reuse):
    names = [n for m in MODELS for n in DATA_FILES[m]]
    paths = {n: os.path.join(datadir, n + ".npy") for n in names}
    if reuse and all(os.path.exists(p) for p in paths.values()):
        log(f"reusing the data in {datadir}")
        return
    os.makedirs(datadir, exist_ok=True)
    for name, arr in make_data(seed).items():
        # Not ascontiguousarray: it makes lr_b's rank 0 a rank 1.
        np.save(paths[name], np.require(arr, requirements="C"))
    log(f"wrote the data (seed {seed}) to {datadir}")


def load_data(datadir, model):
    data = {n[len(model) + 1:]: np.load(os.path.join(datadir, n + ".npy"))
            for n in DATA_FILES[model]}
    want = {"mlp": {"X": (MLP_N, MLP_D), "labels": (MLP_N,), "W1": (MLP_D, MLP_H), "b1": (MLP_H,),
                    "W2": (MLP_H, MLP_C), "b2": (MLP_C,), "idx": (MLP_S, MLP_B)},
            "lr": {"x": (LR_N, LR_D), "y": (LR_N,), "w": (LR_D,), "b": ()}}[model]
    for k, shape in want.items():
        if data[k].shape != shape:
            sys.exit(f"peers: {model}_{k}.npy has shape {data[k].shape}, not {shape}: "
                     "write the data again (without --reuse-data)")
    return data


def idx_rows(data):
    """The minibatch rows, each a contiguous int64 array of its own, made once:
    a timed call gets exactly what trust_input expects, with no slicing."""
    return [np.array(r, dtype=np.int64, order="C") for r in data["idx"]]


def param_state(cost, params):
    """The numbers `state` answers: the cost, then each parameter's sum and sum of |.|."""
    out = [float(cost)]
    for p in params:
        p = np.asarray(p)
        out += [float(np.sum(p, dtype=np.float64)), float(np.sum(np.abs(p), dtype=np.float64))]
    return out


# ------------------------------------------------------------ implementations
# Each implementation has: name, compile_s (None when built ahead of time),
# reset(), steps(n) -> list of ns per call, state() -> list of floats.

def cpu_seconds(pid=None):
    """CPU time (all threads) of this process or of a child, in seconds.

    A child's comes from the scheduler's per-thread nanoseconds, since the
    clock ticks of /proc/PID/stat are too coarse for a round of fast calls.
    """
    if pid is None:
        return time.process_time()
    total = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")
    return total / 1e9


class FusorProcess:
    """The C++ program, one line in and one line out per command."""

    def __init__(self, binary, datadir):
        self.proc = subprocess.Popen([binary, datadir], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1,
                                     env=dict(os.environ))

    def ask(self, line):
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass  # reported below, with the exit status
        answer = self.proc.stdout.readline()
        if not answer:
            rc = self.proc.wait()
            sys.exit(f"peers: bench_peers ended (exit status {rc}) on '{line}'")
        answer = answer.strip()
        if answer.startswith("error"):
            sys.exit(f"peers: bench_peers answered '{answer}' to '{line}'")
        return answer

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
            self.proc.wait(timeout=30)


class Fusor:
    def __init__(self, proc, impl, name):
        self.proc, self.impl, self.name = proc, impl, name
        self.compile_s = None  # compiled with the C++ program
        self.pid = proc.proc.pid

    def reset(self):
        if self.proc.ask(f"reset {self.impl}") != "ok":
            sys.exit(f"peers: bench_peers did not answer 'ok' to 'reset {self.impl}'")

    def steps(self, n):
        times = [int(t) for t in self.proc.ask(f"steps {self.impl} {n}").split()]
        if len(times) != n:
            sys.exit(f"peers: bench_peers answered {len(times)} times to 'steps {self.impl} {n}'")
        return times

    def state(self):
        return [float(v) for v in self.proc.ask(f"state {self.impl}").split()]


class PyTensorStep:
    def __init__(self, model, data, mode):
        self.model, self.data = model, data
        self.name = "PyTensor " + {"CVM": "CVM (C)", "NUMBA": "Numba"}[mode]
        t0 = time.perf_counter()
        import pytensor
        import pytensor.tensor as pt

        self.shared = {p: pytensor.shared(data[p].copy(), name=p) for p in PARAMS[model]}
        if model == "mlp":
            X = pytensor.shared(data["X"], name="X")
            labels = pytensor.shared(data["labels"], name="labels")
            idx = pt.vector("idx", dtype="int64")
            W1, b1, W2, b2 = (self.shared[p] for p in PARAMS[model])
            x = X[idx]
            y = pt.eq(labels[idx][:, None], pt.arange(MLP_C)).astype("float32")
            h = pt.maximum(x @ W1 + b1, np.float32(0))
            z = h @ W2 + b2
            zm = z - pt.max(z, axis=1, keepdims=True)
            log_p = zm - pt.log(pt.sum(pt.exp(zm), axis=1, keepdims=True))
            cost = -pt.mean(pt.sum(y * log_p, axis=1))
            inputs = [idx]
        else:
            x = pytensor.shared(data["x"], name="x")
            y = pytensor.shared(data["y"], name="y")
            w, b = self.shared["w"], self.shared["b"]
            p = pt.sigmoid(x @ w + b)
            cost = pt.mean(-y * pt.log(p) - (1 - y) * pt.log(1 - p)) + LR_L2 * pt.sum(w * w)
            inputs = []
        params = [self.shared[p] for p in PARAMS[model]]
        grads = pytensor.grad(cost, params)
        # The rate in the parameter's dtype, so a float32 update stays float32.
        updates = [(v, v - np.asarray(LEARNING_RATE, v.dtype) * g) for v, g in zip(params, grads)]
        self.f = pytensor.function(inputs, cost, updates=updates, mode=mode)
        self.f.trust_input = True  # no input checks or conversions per call
        self.rows = idx_rows(data) if model == "mlp" else None
        self.reset()
        self.steps(1)  # the first call is part of the build (lazy set-up, caches)
        self.compile_s = time.perf_counter() - t0
        self.reset()

    def reset(self):
        for p, v in self.shared.items():
            v.set_value(self.data[p].copy(), borrow=True)
        self.s, self.cost = 0, float("nan")

    def steps(self, n):
        f, clock, out = self.f, time.perf_counter_ns, [0] * n
        if self.model == "mlp":
            rows, s = self.rows, self.s
            for k in range(n):
                i = rows[s % MLP_S]
                t0 = clock()
                c = f(i)
                out[k] = clock() - t0
                s += 1
            self.s = s
        else:
            for k in range(n):
                t0 = clock()
                c = f()
                out[k] = clock() - t0
            self.s += n
        self.cost = c
        return out

    def state(self):
        return param_state(self.cost, [v.get_value(borrow=True) for v in self.shared.values()])


class JaxStep:
    def __init__(self, model, data):
        self.model, self.data, self.name = model, data, "JAX"
        t0 = time.perf_counter()
        import jax
        import jax.numpy as jnp

        self.jnp = jnp
        if model == "mlp":
            def loss(params, X, labels, idx):
                W1, b1, W2, b2 = params
                x = X[idx]
                y = jax.nn.one_hot(labels[idx], MLP_C, dtype=jnp.float32)
                h = jnp.maximum(x @ W1 + b1, 0)
                z = h @ W2 + b2
                zm = z - jnp.max(z, axis=1, keepdims=True)
                log_p = zm - jnp.log(jnp.sum(jnp.exp(zm), axis=1, keepdims=True))
                return -jnp.mean(jnp.sum(y * log_p, axis=1))
            self.args = (jax.device_put(data["X"]), jax.device_put(data["labels"]))
        else:
            def loss(params, x, y):
                w, b = params
                p = jax.nn.sigmoid(x @ w + b)
                return jnp.mean(-y * jnp.log(p) - (1 - y) * jnp.log(1 - p)) + LR_L2 * jnp.sum(w * w)
            self.args = (jax.device_put(data["x"]), jax.device_put(data["y"]))

        def step(params, *args):
            cost, grads = jax.value_and_grad(loss)(params, *args)
            return tuple(p - LEARNING_RATE * g for p, g in zip(params, grads)), cost

        # The parameters are donated: XLA may write the new ones over the old.
        self.f = jax.jit(step, donate_argnums=(0,))
        # idx goes in as a host array each call, as PyTensor and fusor get it.
        self.rows = idx_rows(data) if model == "mlp" else None
        self.reset()
        self.steps(1)  # jit compiles on the first call
        self.compile_s = time.perf_counter() - t0
        for p, q in zip(self.params, PARAMS[model]):
            assert p.dtype == data[q].dtype, (q, p.dtype)
        self.reset()

    def reset(self):
        # Fresh copies: the donated buffers of the last call are gone, and a
        # buffer that aliased numpy memory must not be donated.
        self.params = tuple(self.jnp.array(self.data[p], copy=True) for p in PARAMS[self.model])
        self.s, self.cost = 0, float("nan")

    def steps(self, n):
        f, clock, out, params, args = self.f, time.perf_counter_ns, [0] * n, self.params, self.args
        if self.model == "mlp":
            rows, s = self.rows, self.s
            for k in range(n):
                i = rows[s % MLP_S]
                t0 = clock()
                params, c = f(params, *args, i)
                # Dispatch is asynchronous; the outputs of one executable are
                # ready together, so waiting for the cost waits for the step.
                c.block_until_ready()
                out[k] = clock() - t0
                s += 1
            self.s = s
        else:
            for k in range(n):
                t0 = clock()
                params, c = f(params, *args)
                c.block_until_ready()
                out[k] = clock() - t0
            self.s += n
        self.params, self.cost = params, c
        return out

    def state(self):
        return param_state(self.cost, [np.asarray(p) for p in self.params])


def build(model, data, fusor):
    """The implementations of one model, fusor's first (fusor-grad is the reference)."""
    impls = []
    if fusor is not None:
        impls += [Fusor(fusor, f"{model}_grad", "fusor grad"), Fusor(fusor, f"{model}_hand", "fusor hand")]
    for mode in ("CVM", "NUMBA"):
        log(f"{model}: compiling PyTensor {mode}")
        impls.append(PyTensorStep(model, data, mode))
        log(f"{model}: {impls[-1].name}: {impls[-1].compile_s:.2f} s")
    log(f"{model}: compiling JAX")
    impls.append(JaxStep(model, data))
    log(f"{model}: JAX: {impls[-1].compile_s:.2f} s")
    return impls


# ------------------------------------------------------------------ agreement

def agreement(model, impls, k):
    """Same start, same k steps; every pair within the model's tolerance."""
    tol, names = TOLERANCE[model], PARAMS[model]
    states = {}
    for im in impls:
        im.reset()
        im.steps(k)
        st = im.state()
        if len(st) != 1 + 2 * len(names):
            sys.exit(f"peers: {im.name} answered {len(st)} numbers to state, not {1 + 2 * len(names)}")
        states[im.name] = st
        im.reset()

    def deviation(a, b):
        """Worst relative difference: the cost by its size, a sum by the sum of |.|."""
        devs = [abs(a[0] - b[0]) / max(abs(a[0]), abs(b[0]), 1e-300)]
        for j in range(len(names)):
            s_a, s_b = a[1 + 2 * j], b[1 + 2 * j]
            devs.append(abs(s_a - s_b) / max(a[2 + 2 * j], b[2 + 2 * j], 1e-300))
        # max() would drop a NaN; any non-finite number is a disagreement.
        if not all(math.isfinite(v) for v in a + b):
            return math.nan
        return max(devs)

    ref = impls[0].name
    failures = []
    for i, a in enumerate(impls):
        for b in impls[i + 1:]:
            d = deviation(states[a.name], states[b.name])
            if not d <= tol:  # NaN fails too
                failures.append(f"{a.name} vs {b.name}: {d:.3g} > {tol:g}")

    print(f"\n### Agreement: {model}, {k} steps from the same start (tolerance {tol:g})\n")
    head = ["implementation", "cost"] + [f"sum {n}" for n in names] + [f"deviation from {ref}"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for im in impls:
        st = states[im.name]
        cells = [im.name, f"{st[0]:.10g}"] + [f"{st[1 + 2 * j]:.10g}" for j in range(len(names))]
        cells.append(f"{deviation(states[ref], st):.2g}")
        print("| " + " | ".join(cells) + " |")
    sys.stdout.flush()
    return states, failures


# --------------------------------------------------------------------- timing

def timing(model, impls, rounds, calls, warmup):
    for im in impls:
        im.reset()
        im.steps(warmup)
    samples = {im.name: [] for im in impls}
    # CPU time over wall time while an implementation runs: about 1 when it
    # really uses one thread, more when some library ignored the settings.
    busy = {im.name: [0.0, 0.0] for im in impls}
    orders = []
    gc_was_enabled = gc.isenabled()
    gc.disable()  # as timeit does: a collection inside a timed call is the harness's, not the library's
    try:
        for r in range(rounds):
            start = r % len(impls)
            order = impls[start:] + impls[:start]
            orders.append([im.name for im in order])
            for im in order:
                # Each round times the same steps 0..calls-1 from the initial
                # parameters, so no implementation meets a later stage of training.
                im.reset()
                pid = getattr(im, "pid", None)
                c0, w0 = cpu_seconds(pid), time.perf_counter()
                samples[im.name].append(im.steps(calls))
                busy[im.name][0] += cpu_seconds(pid) - c0
                busy[im.name][1] += time.perf_counter() - w0
            log(f"{model}: round {r + 1}/{rounds}")
    finally:
        if gc_was_enabled:
            gc.enable()
    return samples, orders, {k: c / w for k, (c, w) in busy.items()}


def summarise(impls, samples, busy, have_fusor):
    summary = {}
    for im in impls:
        flat = np.concatenate([np.asarray(s, np.float64) for s in samples[im.name]]) / 1e3
        summary[im.name] = {"median_us": float(np.median(flat)), "min_us": float(np.min(flat)),
                            "calls": int(flat.size), "compile_s": im.compile_s,
                            "cpu_over_wall": busy[im.name]}
    if have_fusor:
        ref = summary[impls[0].name]
        for v in summary.values():
            v["fusor_grad_over_this_median"] = ref["median_us"] / v["median_us"]
            v["fusor_grad_over_this_min"] = ref["min_us"] / v["min_us"]
    return summary


# -------------------------------------------------------------------- reports

# The CPU model as the benchmark suite's report names it (bench/report.py).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from report import cpu_model  # noqa: E402


def versions():
    out = {"python": platform.python_version()}
    for p in ("numpy", "pytensor", "jax", "jaxlib", "numba", "llvmlite"):
        try:
            out[p] = importlib.metadata.version(p)
        except importlib.metadata.PackageNotFoundError:
            out[p] = None
    return out


def print_table(results, have_fusor):
    print("\n### Time per training step (µs per call)\n")
    head = ["model", "implementation", "median µs", "min µs",
            "fusor grad ÷ this (median)", "fusor grad ÷ this (min)", "compile s", "CPU ÷ wall"]
    print("| " + " | ".join(head) + " |")
    print("|---|---|" + "---:|" * (len(head) - 2))
    for model, res in results.items():
        for name, v in res["summary"].items():
            ratio = lambda k: f"{v[k]:.2f}" if have_fusor else "—"  # noqa: E731
            comp = "—" if v["compile_s"] is None else f"{v['compile_s']:.2f}"
            print(f"| {model} | {name} | {v['median_us']:.1f} | {v['min_us']:.1f} | "
                  f"{ratio('fusor_grad_over_this_median')} | {ratio('fusor_grad_over_this_min')} | {comp} | {v['cpu_over_wall']:.2f} |")
    if have_fusor:
        print("\nA ratio below 1 means fusor grad takes less time than that implementation.")
    print("Compile s: building the function and its first call (fusor's is compiled with the C++ "
          "program). CPU ÷ wall: CPU time over wall time while timing: about 1 for one thread, "
          "more when a library ran more threads, less when the process waited for a busy CPU.")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench-bin", help="the C++ program bench_peers (required unless --skip-fusor)")
    ap.add_argument("--skip-fusor", action="store_true", help="run only the Python peers")
    ap.add_argument("--data-dir", default=os.path.join("build-peers", "data"),
                    help="where the .npy files go (default: build-peers/data)")
    ap.add_argument("--reuse-data", action="store_true", help="keep the data files when all exist")
    ap.add_argument("--seed", type=int, default=20240611, help="seed of the data (default: %(default)s)")
    ap.add_argument("--models", default="mlp,lr", help="comma-separated, of: mlp, lr (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=15, help="timing rounds (default: %(default)s)")
    ap.add_argument("--calls", type=int, default=200, help="steps per implementation and round (default: %(default)s)")
    ap.add_argument("--warmup", type=int, default=100, help="untimed steps before the rounds, at least 50 (default: %(default)s)")
    ap.add_argument("--json", help="output file (default: DATA_DIR/../peers.json)")
    args = ap.parse_args()

    if not args.skip_fusor and not args.bench_bin:
        ap.error("--bench-bin is required unless --skip-fusor is given")
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    for m in models:
        if m not in MODELS:
            ap.error(f"unknown model '{m}' (known: {', '.join(MODELS)})")
    if args.rounds < 1 or args.calls < 1:
        ap.error("--rounds and --calls must be at least 1")
    warmup = max(args.warmup, 50)
    datadir = args.data_dir
    json_path = args.json or os.path.normpath(os.path.join(datadir, os.pardir, "peers.json"))

    write_data(datadir, args.seed, args.reuse_data)

    fusor = None
    if not args.skip_fusor:
        if not os.access(args.bench_bin, os.X_OK):
            sys.exit(f"peers: {args.bench_bin} is not an executable program")
        fusor = FusorProcess(args.bench_bin, datadir)

    vers = versions()
    threads = " ".join(f"{k}={v!r}" if " " in v else f"{k}={v}" for k, v in THREAD_ENV.items())
    header = (f"CPU: {cpu_model()}; Python {vers['python']}, numpy {vers['numpy']}, "
              f"pytensor {vers['pytensor']}, jax {vers['jax']} (jaxlib {vers['jaxlib']}), "
              f"numba {vers['numba']}; threads: {threads}")
    print(header)
    # Set on some machines against old OpenBLAS bugs; they select a slower kernel.
    blas_env = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}
    if blas_env:
        print(f"Note: {', '.join(f'{k}={v}' for k, v in blas_env.items())} is set in the environment.")

    # Imported here so that no compile time below includes an import.
    import jax
    import pytensor

    # Without BLAS flags PyTensor's C code falls back to slower NumPy-based
    # matrix products: worth knowing when reading the CVM row.
    blas_ldflags = pytensor.config.blas__ldflags
    if not blas_ldflags:
        print("Note: PyTensor found no BLAS to link (blas__ldflags is empty); its C VM uses NumPy's.")
    sys.stdout.flush()

    results, failed = {}, []
    try:
        # For lr's float64, once for the process whatever --models says, so the
        # mlp runs the same either way: its arrays are float32 and its
        # constants weakly typed, so it stays float32 (the asserts in JaxStep).
        jax.config.update("jax_enable_x64", True)
        for model in models:
            data = load_data(datadir, model)
            impls = build(model, data, fusor)
            states, failures = agreement(model, impls, K_AGREE)
            if failures:
                failed += [f"{model}: {f}" for f in failures]
                results[model] = {"agreement": states, "failures": failures}
                continue
            samples, orders, busy = timing(model, impls, args.rounds, args.calls, warmup)
            results[model] = {"agreement": states, "failures": [], "orders": orders,
                              "samples_ns": samples,
                              "summary": summarise(impls, samples, busy, fusor is not None)}
    finally:
        if fusor is not None:
            fusor.close()

    timed = {m: r for m, r in results.items() if "summary" in r}
    if timed:
        print_table(timed, fusor is not None)

    report = {
        "header": header,
        "meta": {"cpu": cpu_model(), "versions": vers, "threads": THREAD_ENV, "blas_env": blas_env,
                 "pytensor_blas_ldflags": blas_ldflags,
                 "seed": args.seed, "rounds": args.rounds, "calls": args.calls, "warmup": warmup,
                 "agreement_steps": K_AGREE, "tolerance": TOLERANCE, "fusor": fusor is not None,
                 "gc_disabled_while_timing": True, "time_unit": "ns per call",
                 "date": time.strftime("%Y-%m-%dT%H:%M:%S%z")},
        "models": results,
    }
    os.makedirs(os.path.dirname(os.path.abspath(json_path)), exist_ok=True)
    with open(json_path, "w") as f:
        json.dump(report, f)
    log(f"wrote {json_path}")

    if failed:
        print("\nDisagreement:\n" + "\n".join(f"- {f}" for f in failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
