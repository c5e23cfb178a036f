"""Compile-time benchmark (issue 35): how long FlyWheel's raising passes take on plain
N-layer transformer models, against `mlir-opt -canonicalize -cse` on the same files.

    .venv/bin/python bench/compile_time.py [--layers 8,16,32,64,128] [--tool target/release/flywheel-opt]
        [--attention plain|dpa] [--timeout 180] [--repeats 3] [--instructions] [--write-test-input]
        [--markdown]

The models: a plain decoder of N layers, generated with JAX and lowered for TPU to
generic-form StableHLO text exactly as test/fixtures/generate.py's `write()` does
(lowering_platforms=("tpu",), print_generic_op_form=True, debug info), cached in
bench/.cache/compile_time/. Each layer: RMSNorm; q, k, v projections `x @ W` reshaped to
heads; RoPE (rotate-half; its cos/sin tables computed once for the model and shared by
every layer, as Hugging Face's Llama does); causal softmax attention written the plain
way (einsum, an iota causal mask in jnp.where, jax.nn.softmax, einsum; `--attention dpa`:
jax.nn.dot_product_attention, implementation="xla"), the same in every layer; the output
projection and residual; RMSNorm; a SwiGLU MLP and residual. Then a final RMSNorm.
Small widths (hidden 256, 4 heads x 64, MLP 512, 128 tokens, batch 1, bf16 weights), so a
file's size is its op count. The 64-layer program (1.25 MB, 7,610 ops) is also written to
test/Inputs/model_64_layers.mlir, which a test raises whole: when it is missing, or with
--write-test-input (default model only, and only under 1.5 MB).

For each N (wall clock, best of --repeats; a run past --timeout is stopped and recorded
as a timeout, and larger N are then skipped):
- raise: `flywheel-opt FILE --pass-pipeline='builtin.module(flywheel-raise-attention,
  flywheel-raise-gated-delta)' -o /dev/null`, with `flywheel-normalize` first when
  `flywheel-opt --list-passes` lists it (the pipeline timed is printed and recorded);
  the attentions raised are counted in the output of one more run written to a file;
- no pass: `flywheel-opt FILE -o /dev/null`, flywheel-opt's own parse and print;
- mlir-opt: `/usr/lib/llvm-22/bin/mlir-opt --allow-unregistered-dialect -canonicalize
  -cse FILE -o /dev/null` (StableHLO is an unregistered dialect there: the cost of
  parsing, walking and printing the program).
- startup: both commands on an empty module, once per run: each tool's fixed cost
  (mlir-opt's is about 30 ms more: it registers every dialect and links libMLIR
  dynamically). "past startup" is the ratio of what each spends beyond it, the cost that
  grows with the program: raising is linear when that ratio stays flat as N grows, which
  the plain ratio cannot show, as mlir-opt's larger fixed cost shrinks in it with N.
Prints the table (layers, file KB, ops, raise s, raise CPU s, no-pass s, mlir-opt s,
raise/mlir-opt, the same past startup, attentions raised; CPU s is the raising run's user + system time, less
disturbed than the wall clock on a busy machine) and merges it into
bench/compile_time.json: one entry per tool binary (its sha256; the binary is copied
first and the copy timed, as it may be rebuilt during a run), pipeline and model, with
the repository's commit (`git rev-parse --short HEAD`; the binary may have been built
from a dirty tree, recorded as `tree_dirty`), the date and the load average, so the
numbers before and after a change stay side by side.
`--instructions` also counts each command's instructions once under valgrind's callgrind
(raise and mlir-opt on each model, both on an empty module): deterministic where the wall
clock of a 2-core machine is not, so the column "Ir past startup", the ratio of the
instructions each spends beyond its startup, reads the cost per op without noise.
`--markdown` prints the tables from the JSON. The goal (issue 35): raise/mlir-opt below
1.0 at 64 layers, and flat as N grows (raising in linear time): read on the ratio past
startup.
"""

import argparse
import datetime
import hashlib
import json
import math
import os
import pathlib
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache" / "compile_time"
RESULTS = ROOT / "bench" / "compile_time.json"
TEST_INPUT = ROOT / "test" / "Inputs" / "model_64_layers.mlir"
TEST_INPUT_LAYERS = 64
TEST_INPUT_LIMIT = 1_500_000  # bytes
MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"
RAISERS = ["flywheel-raise-attention", "flywheel-raise-gated-delta"]
NORMALIZE = "flywheel-normalize"

# The model's widths: small, so the file size is dominated by the op count.
MODEL = {"hidden": 256, "heads": 4, "head_dim": 64, "mlp": 512, "seq": 128, "batch": 1,
         "dtype": "bfloat16", "attention": "plain"}

# One op in generic form: "dialect.op"(
OP = re.compile(r'"[A-Za-z_][\w$]*\.[\w$.]+"\(')


# ---- the model -----------------------------------------------------------------------


def decoder(config):
    """The N-layer decoder as a function of (x, [per-layer weights], final norm)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    heads, head_dim = config["heads"], config["head_dim"]

    def rms_norm(x, weight, eps=1e-6):
        x32 = x.astype(jnp.float32)
        x32 = x32 * lax.rsqrt(jnp.mean(x32 * x32, axis=-1, keepdims=True) + eps)
        return (x32 * weight).astype(x.dtype)

    def rope_tables(t, half, base=10000.0):
        freq = base ** (-jnp.arange(half, dtype=jnp.float32) / half)
        angle = jnp.arange(t).astype(jnp.float32)[:, None] * freq[None, :]
        return jnp.cos(angle)[None, :, None, :], jnp.sin(angle)[None, :, None, :]

    def rope(x, tables):
        """Rotary embedding on [B,T,N,D] (rotate-half form)."""
        cos, sin = tables
        half = x.shape[-1] // 2
        x1, x2 = x[..., :half].astype(jnp.float32), x[..., half:].astype(jnp.float32)
        return jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1).astype(x.dtype)

    def plain_attention(q, k, v):
        """Causal softmax attention, q, k, v: [B,T,N,D]."""
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k).astype(jnp.float32) * head_dim ** -0.5
        t = s.shape[-1]
        row = lax.broadcasted_iota(jnp.int32, (t, t), 0)
        col = lax.broadcasted_iota(jnp.int32, (t, t), 1)
        s = jnp.where(col <= row, s, jnp.finfo(jnp.float32).min)
        p = jax.nn.softmax(s, axis=-1).astype(v.dtype)
        return jnp.einsum("bhqk,bkhd->bqhd", p, v)

    def dpa_attention(q, k, v):
        return jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation="xla")

    attention = {"plain": plain_attention, "dpa": dpa_attention}[config["attention"]]

    def layer(x, tables, wq, wk, wv, wo, w_gate, w_up, w_down, norm1, norm2):
        b, t, _ = x.shape
        h = rms_norm(x, norm1)
        q = (h @ wq).reshape(b, t, heads, head_dim)
        k = (h @ wk).reshape(b, t, heads, head_dim)
        v = (h @ wv).reshape(b, t, heads, head_dim)
        q, k = rope(q, tables), rope(k, tables)
        x = x + attention(q, k, v).reshape(b, t, heads * head_dim) @ wo
        h = rms_norm(x, norm2)
        return x + (jax.nn.silu(h @ w_gate) * (h @ w_up)) @ w_down

    def model(x, layers, final_norm):
        tables = rope_tables(x.shape[1], head_dim // 2)
        for weights in layers:
            x = layer(x, tables, *weights)
        return rms_norm(x, final_norm)

    return model


def program(layers, config):
    """The generic-form StableHLO text of the `layers`-layer model, cached by the model,
    this script and the JAX version."""
    import jax
    key = hashlib.sha256(json.dumps([layers, config, jax.__version__]).encode()
                         + pathlib.Path(__file__).read_bytes()).hexdigest()[:16]
    path = CACHE / f"model_{layers}_layers_{key}.mlir"
    if path.exists():
        return path
    import jax.numpy as jnp
    spec = jax.ShapeDtypeStruct
    dtype = jnp.dtype(config["dtype"])
    hidden, width, mlp = config["hidden"], config["heads"] * config["head_dim"], config["mlp"]
    weights = (spec((hidden, width), dtype), spec((hidden, width), dtype), spec((hidden, width), dtype),
               spec((width, hidden), dtype), spec((hidden, mlp), dtype), spec((hidden, mlp), dtype),
               spec((mlp, hidden), dtype), spec((hidden,), jnp.float32), spec((hidden,), jnp.float32))
    x = spec((config["batch"], config["seq"], hidden), dtype)
    # As test/fixtures/generate.py's write(): lowered for TPU, generic form, debug info.
    lowered = jax.jit(decoder(config)).trace(x, [weights] * layers, spec((hidden,), jnp.float32)).lower(
        lowering_platforms=("tpu",))
    text = lowered.compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True, enable_debug_info=True)
    header = f"// Generated by bench/compile_time.py ({layers} layers, {describe(config)}); do not edit.\n"
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_text(header + text)
    return path


def describe(config):
    return (f"hidden {config['hidden']}, {config['heads']} heads x {config['head_dim']}, MLP {config['mlp']}, "
            f"{config['seq']} tokens, batch {config['batch']}, {config['dtype']}, {config['attention']} attention")


def write_test_input(path, replace):
    """test/Inputs/model_64_layers.mlir: the 64-layer program, if under TEST_INPUT_LIMIT;
    an existing one only if `replace` (its debug locations name lines of this script, so
    any edit here would change it)."""
    size = path.stat().st_size
    if size > TEST_INPUT_LIMIT:
        print(f"not written: {TEST_INPUT.relative_to(ROOT)} would be {size:,} bytes (limit {TEST_INPUT_LIMIT:,})",
              file=sys.stderr)
        return
    text = path.read_text()
    if not TEST_INPUT.exists() or (replace and TEST_INPUT.read_text() != text):
        TEST_INPUT.write_text(text)
        print(f"wrote {TEST_INPUT.relative_to(ROOT)} ({size:,} bytes)", file=sys.stderr)


# ---- timing --------------------------------------------------------------------------


class Timeout(Exception):
    pass


def run(command, timeout):
    """Wall-clock seconds of `command` and its CPU seconds (user + system); Timeout if it
    runs past `timeout` (it is killed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Timeout from None
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(map(str, command))}\n{result.stderr[-4000:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def best(command, repeats, timeout):
    """The best of `repeats` runs of `command`, wall clock and CPU time (each its own
    minimum), or (None, None) if one timed out."""
    times = []
    for _ in range(repeats):
        try:
            times.append(run(command, timeout))
        except Timeout:
            return None, None
    return min(t for t, _ in times), min(c for _, c in times)


def instructions(command, timeout):
    """The instructions `command` executes, counted by valgrind's callgrind."""
    counted = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command]
    # Callgrind runs a program some 50 times slower than it runs alone.
    try:
        result = subprocess.run(counted, capture_output=True, text=True, timeout=timeout * 100)
    except FileNotFoundError:
        sys.exit("--instructions needs valgrind (apt install valgrind)")
    refs = re.search(r"I\s+refs:\s+([\d,]+)", result.stderr)
    if result.returncode != 0 or not refs:
        sys.exit(f"failed under valgrind ({result.returncode}): {' '.join(map(str, command))}\n{result.stderr[-4000:]}")
    return int(refs.group(1).replace(",", ""))


def pipeline_for(tool):
    """The raising pipeline, with flywheel-normalize first when the tool has it."""
    listed = subprocess.run([str(tool), "--list-passes"], capture_output=True, text=True, check=True).stdout
    passes = set(re.findall(r"^\s{2}(flywheel-[\w-]+)\s", listed, re.MULTILINE))
    missing = [name for name in RAISERS if name not in passes]
    if missing:
        sys.exit(f"{tool} lists no {', '.join(missing)}")
    return f"builtin.module({','.join(([NORMALIZE] if NORMALIZE in passes else []) + RAISERS)})"


def measure(layers, path, tool, pipeline, repeats, timeout, count_instructions):
    """One row of the table for the program at `path`."""
    text = path.read_text()
    row = {"layers": layers, "file_bytes": len(text.encode()), "ops": len(OP.findall(text)),
           "raise_s": None, "raise_cpu_s": None, "raise_status": "ok", "no_pass_s": None,
           "mlir_opt_s": None, "mlir_opt_cpu_s": None, "ratio": None, "attentions": None, "repeats": repeats,
           "timeout_s": timeout}
    print(f"  {layers} layers: raising ({row['file_bytes'] / 1000:.0f} KB, {row['ops']:,} ops)...", file=sys.stderr,
          flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        output = pathlib.Path(scratch) / "raised.mlir"
        try:
            run([str(tool), str(path), f"--pass-pipeline={pipeline}", "-o", str(output)], timeout)
        except Timeout:
            row["raise_status"] = f"timeout ({timeout:g} s)"
        else:
            row["attentions"] = output.read_text().count('"flywheel.attention"(')
    if row["raise_status"] == "ok":
        raising = [str(tool), str(path), f"--pass-pipeline={pipeline}", "-o", "/dev/null"]
        row["raise_s"], row["raise_cpu_s"] = best(raising, repeats, timeout)
        if row["raise_s"] is None:
            row["raise_status"] = f"timeout ({timeout:g} s)"
    row["no_pass_s"], _ = best([str(tool), str(path), "-o", "/dev/null"], repeats, timeout)
    mlir_opt = [MLIR_OPT, "--allow-unregistered-dialect", "-canonicalize", "-cse", str(path), "-o", "/dev/null"]
    row["mlir_opt_s"], row["mlir_opt_cpu_s"] = best(mlir_opt, repeats, timeout)
    if count_instructions and row["raise_status"] == "ok":
        row["raise_instructions"] = instructions(raising, timeout)
        row["mlir_opt_instructions"] = instructions(mlir_opt, timeout)
    row["load_average"] = os.getloadavg()[0]
    if row["raise_s"] and row["mlir_opt_s"]:
        row["ratio"] = row["raise_s"] / row["mlir_opt_s"]
    return row


def startup(tool, pipeline, repeats, timeout, count_instructions):
    """Each command on an empty module: {"startup_s": (raise s, mlir-opt s)}, and with
    `count_instructions` "startup_instructions" likewise."""
    with tempfile.TemporaryDirectory() as scratch:
        empty = pathlib.Path(scratch) / "empty.mlir"
        empty.write_text("module {}\n")
        raising = [str(tool), str(empty), f"--pass-pipeline={pipeline}", "-o", "/dev/null"]
        mlir_opt = [MLIR_OPT, "--allow-unregistered-dialect", "-canonicalize", "-cse", str(empty), "-o", "/dev/null"]
        costs = {"startup_s": (best(raising, repeats, timeout)[0], best(mlir_opt, repeats, timeout)[0])}
        if count_instructions:
            costs["startup_instructions"] = (instructions(raising, timeout), instructions(mlir_opt, timeout))
    return costs


def past_startup(row, entry, unit="s"):
    """raise/mlir-opt on what each spends beyond its startup, in seconds ("s") or
    instructions ("instructions"), or None."""
    raising, mlir_opt = entry.get(f"startup_{unit}") or (None, None)
    row_raise, row_mlir_opt = row.get(f"raise_{unit}"), row.get(f"mlir_opt_{unit}")
    if not (row_raise and row_mlir_opt and raising is not None and row_mlir_opt > mlir_opt):
        return None
    return (row_raise - raising) / (row_mlir_opt - mlir_opt)


# ---- tables --------------------------------------------------------------------------


def seconds(value, status="ok"):
    return f"{value:.3f}" if value is not None else (status if status != "ok" else "—")


def cells(row, entry):
    ratio = lambda value: f"{value:.2f}" if value is not None else "—"
    return [str(row["layers"]), f"{row['file_bytes'] / 1000:,.0f}", f"{row['ops']:,}",
            seconds(row["raise_s"], row.get("raise_status", "ok")), seconds(row.get("raise_cpu_s")),
            seconds(row.get("no_pass_s")), seconds(row["mlir_opt_s"]), ratio(row["ratio"]),
            ratio(past_startup(row, entry)), ratio(past_startup(row, entry, "instructions")),
            str(row["attentions"]) if row["attentions"] is not None else "—"]


HEADER = ["layers", "file KB", "ops", "raise s", "raise CPU s", "no-pass s", "mlir-opt s", "raise/mlir-opt",
          "past startup", "Ir past startup", "attentions raised"]


def startup_line(entry):
    if not entry.get("startup_s"):
        return None
    raising, mlir_opt = entry["startup_s"]
    line = f"startup (an empty module): raise {raising:.3f} s, mlir-opt {mlir_opt:.3f} s"
    if entry.get("startup_instructions"):
        raising, mlir_opt = entry["startup_instructions"]
        line += f"; raise {raising / 1e6:.1f}M instructions, mlir-opt {mlir_opt / 1e6:.1f}M"
    return line


def growth(rows):
    """The exponent of raise time in layers between the two largest timed models (1.0:
    linear), or None."""
    timed = [r for r in sorted(rows, key=lambda r: r["layers"]) if r["raise_s"]]
    if len(timed) < 2:
        return None
    first, last = timed[-2], timed[-1]
    exponent = math.log(last["raise_s"] / first["raise_s"]) / math.log(last["layers"] / first["layers"])
    return exponent, first["layers"], last["layers"]


def report(entry):
    widths = [6, 8, 8, 14, 11, 10, 10, 14, 12, 15, 17]
    print(f"pipeline timed: {entry['pipeline']}")
    if startup_line(entry):
        print(startup_line(entry))
    print("  ".join(f"{h:>{w}}" for h, w in zip(HEADER, widths)))
    for row in sorted(entry["rows"], key=lambda r: r["layers"]):
        print("  ".join(f"{c:>{w}}" for c, w in zip(cells(row, entry), widths)))
    fitted = growth(entry["rows"])
    if fitted:
        print(f"raise time grows as layers^{fitted[0]:.2f} from {fitted[1]} to {fitted[2]} layers (1.0 is linear)")


def markdown():
    """bench/compile_time.json's tables, one per tool binary, pipeline and model."""
    for entry in json.loads(RESULTS.read_text()):
        dirty = " (tree dirty)" if entry.get("tree_dirty") else ""
        repeats = "/".join(str(r) for r in sorted({row["repeats"] for row in entry["rows"]}))
        timeouts = "/".join(f"{t:g}" for t in sorted({row["timeout_s"] for row in entry["rows"]}))
        print(f"{entry['date']}, commit {entry['commit']}{dirty}, `{entry['pipeline']}`; "
              f"model: {describe(entry['model'])}; best of {repeats}, timeout {timeouts} s, "
              f"load average {entry['load_average']:.2f} on {entry['cpus']} CPUs\n")
        print("| " + " | ".join(HEADER) + " |")
        print("| ---: " * len(HEADER) + "|")
        for row in sorted(entry["rows"], key=lambda r: r["layers"]):
            print("| " + " | ".join(cells(row, entry)) + " |")
        fitted = growth(entry["rows"])
        if fitted:
            print(f"\nRaise time grows as layers^{fitted[0]:.2f} from {fitted[1]} to {fitted[2]} layers (1.0 is linear).")
        if startup_line(entry):
            print(f"{startup_line(entry)[0].upper()}{startup_line(entry)[1:]}.")
        print()


def record(entry):
    """Merges `entry` into bench/compile_time.json: rows replace those of the same layers
    in the entry of the same tool binary, pipeline and model (whose date, commit and load
    become this run's); other entries are kept."""
    entries = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    key = lambda e: (e["tool_sha256"], e["pipeline"], e["model"])
    for previous in entries:
        if key(previous) == key(entry):
            run_layers = {row["layers"] for row in entry["rows"]}
            previous_rows = [row for row in previous["rows"] if row["layers"] not in run_layers]
            previous.update(entry, rows=sorted(previous_rows + entry["rows"], key=lambda r: r["layers"]))
            break
    else:
        entries.append(entry)
    RESULTS.write_text(json.dumps(entries, indent=1) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", default="8,16,32,64,128", help="Comma-separated layer counts")
    parser.add_argument("--tool", default=str(ROOT / "target" / "release" / "flywheel-opt"))
    parser.add_argument("--attention", choices=["plain", "dpa"], default="plain",
                        help="Each layer's attention: einsum with an iota causal mask (plain) or "
                        "jax.nn.dot_product_attention (dpa)")
    parser.add_argument("--pipeline", help="The pass pipeline to time, instead of the default: the raisers, "
                        "flywheel-normalize first when the tool lists it")
    parser.add_argument("--repeats", type=int, default=3, help="Runs per command; the best is reported")
    parser.add_argument("--timeout", type=float, default=180, help="Seconds after which a run is stopped")
    parser.add_argument("--instructions", action="store_true",
                        help="Also count each command's instructions once under valgrind (callgrind)")
    parser.add_argument("--write-test-input", action="store_true",
                        help=f"Replace {TEST_INPUT.relative_to(ROOT)} by this run's 64-layer program (default model); "
                        "without it the file is written only if missing")
    parser.add_argument("--markdown", action="store_true", help="Print the tables of bench/compile_time.json; run nothing")
    arguments = parser.parse_args()
    if arguments.markdown:
        markdown()
        return
    tool = pathlib.Path(arguments.tool).resolve()
    layer_counts = sorted({int(n) for n in arguments.layers.split(",")})
    config = dict(MODEL, attention=arguments.attention)
    # Timed from a copy: the binary may be rebuilt while a run is under way.
    scratch = tempfile.TemporaryDirectory()
    copy = pathlib.Path(scratch.name) / tool.name
    shutil.copy2(tool, copy)
    pipeline = arguments.pipeline or pipeline_for(copy)
    print(f"pipeline timed: {pipeline}", file=sys.stderr)
    git = lambda *args: subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    entry = {"commit": git("rev-parse", "--short", "HEAD"),
             "tree_dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
             "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
             "tool": os.path.relpath(tool, ROOT),
             "tool_sha256": hashlib.sha256(copy.read_bytes()).hexdigest()[:16],
             "tool_built": datetime.datetime.fromtimestamp(copy.stat().st_mtime).astimezone().isoformat(timespec="seconds"),
             "pipeline": pipeline,
             "mlir_opt": f"{MLIR_OPT} --allow-unregistered-dialect -canonicalize -cse FILE -o /dev/null",
             "model": config, "load_average": os.getloadavg()[0], "cpus": os.cpu_count(), "rows": []}
    entry.update(startup(copy, pipeline, arguments.repeats, arguments.timeout, arguments.instructions))
    timed_out = None
    for layers in layer_counts:
        if timed_out:
            print(f"  {layers} layers: skipped ({timed_out} layers timed out)", file=sys.stderr)
            continue
        path = program(layers, config)
        if layers == TEST_INPUT_LAYERS and config == MODEL:
            write_test_input(path, arguments.write_test_input)
        row = measure(layers, path, copy, pipeline, arguments.repeats, arguments.timeout, arguments.instructions)
        entry["rows"].append(row)
        if row["raise_status"] != "ok":
            timed_out = layers
        # Written after each N, so a run cut short still leaves what finished.
        record(entry)
    report(entry)


if __name__ == "__main__":
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    main()
