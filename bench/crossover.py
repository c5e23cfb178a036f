"""Kernel-or-XLA crossovers: libtpu static cycles of plain jnp attention programs as XLA
compiles them and after `flywheel-tpu{profitability=off}` (every attention a kernel), on
v6e and tpu7x, over sequence length, head dim, kind and dtype.

    .venv/bin/python bench/crossover.py [--targets v6e,tpu7x] [--tokens 128,256,...]

Prints a table (XLA cycles, kernel cycles, kernel speed-up) and, per target, kind, head
dim and dtype, the shortest sequence from which the kernel wins at every measured longer
length. flywheel-tpu's profitability model (passes/src/raise/profitability.rs) keeps XLA
below these lengths; docs/benchmarks.md holds the table. Writes bench/crossover.json.
Profiles are cached in bench/.cache (bench/attention.py's cache), so reruns are fast.
"""

import argparse
import concurrent.futures
import functools
import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import jax
import jax.numpy as jnp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import attention as bench  # noqa: E402  (bench/attention.py: profiles and their cache)

jax.config.update("jax_traceback_in_locations_limit", 0)

ROOT = bench.ROOT
spec_path = ROOT / "test" / "fixtures" / "generate.py"
fixtures_spec = importlib.util.spec_from_file_location("fixtures", spec_path)
fixtures = importlib.util.module_from_spec(fixtures_spec)
fixtures_spec.loader.exec_module(fixtures)

BATCH = 2
# kind: (query heads, key-value heads, einsum_attention options); "mask": a boolean mask
# operand (jax.nn.dot_product_attention's), which the kernel reads.
KINDS = {
    "mha": (4, 4, {}),
    "gqa": (8, 2, {}),
    "causal": (4, 4, {"causal": True}),
    "window": (4, 4, {"causal": True, "window": 128}),
    "mask": (4, 4, None),
}


def program(kind, tokens, head_dim, dtype):
    q_heads, kv_heads, options = KINDS[kind]
    dtype = {"bf16": jnp.bfloat16, "f32": jnp.float32}[dtype]
    shape = lambda heads: jax.ShapeDtypeStruct((BATCH, tokens, heads, head_dim), dtype)
    operands = [shape(q_heads), shape(kv_heads), shape(kv_heads)]
    if options is None:
        mask = jax.ShapeDtypeStruct((BATCH, 1, tokens, tokens), jnp.bool_)
        fn = lambda q, k, v, mask: jax.nn.dot_product_attention(q, k, v, mask=mask, implementation="xla")
        return bench.stablehlo(fn, *operands, mask)
    fn = functools.partial(fixtures.einsum_attention, scale=head_dim ** -0.5, **options)
    return bench.stablehlo(fn, *operands)


def with_kernels(text, target):
    result = subprocess.run([str(bench.FLYWHEEL_OPT), "-", f"--flywheel-tpu=target={target} profitability=off"],
                            input=text, capture_output=True, text=True, check=True)
    assert '"tpu_custom_call"' in result.stdout, "flywheel-tpu raised no kernel"
    return result.stdout


def measure(case):
    target, kind, head_dim, dtype, tokens = case
    original = program(kind, tokens, head_dim, dtype)
    label = f"{kind} {dtype} d{head_dim} t{tokens}"
    xla, _ = bench.profile(original, target, f"XLA {label}")
    if xla is None:
        # libtpu's profiler aborts on XLA's relayout of a boolean mask parameter; with the
        # parameters' layouts chosen by the compiler (as JAX's Layout.AUTO) it profiles.
        xla, _ = bench.profile(original, target, f"XLA {label}", options=("--parameter-layouts", "compiler"))
    kernel, _ = bench.profile(with_kernels(original, target), target, f"kernel {label}")
    return {"target": target, "kind": kind, "head_dim": head_dim, "dtype": dtype, "tokens": tokens,
            "xla": xla, "kernel": kernel}


def mark_undercounts(rows):
    """XLA's estimate of a longer sequence below a shorter one's is no estimate: XLA put
    the attention in a loop, whose body libtpu's static profile counts once. Such rows
    (and rows XLA's profile aborted on) say why instead of a number."""
    for row in rows:
        shorter = [other["xla"] for other in rows if other["xla"] and other["tokens"] < row["tokens"]
                   and all(other[key] == row[key] for key in ("target", "kind", "head_dim", "dtype"))]
        if row["xla"] is None:
            row["why"] = "XLA's profile aborted"
        elif shorter and row["xla"] < max(shorter):
            row["why"] = "XLA undercounted (a loop's body counted once)"


def crossovers(rows):
    """Per (target, kind, head dim, dtype): the shortest measured length from which the
    kernel wins at it and at every longer length with an estimate on both sides (None:
    it never wins)."""
    groups = {}
    for row in rows:
        groups.setdefault((row["target"], row["kind"], row["head_dim"], row["dtype"]), []).append(row)
    result = {}
    for key, group in groups.items():
        group.sort(key=lambda row: row["tokens"])
        crossover = None
        for row in reversed(group):
            if row.get("why"):
                continue
            if row["kernel"] is None or row["kernel"] >= row["xla"]:
                break
            crossover = row["tokens"]
        result[key] = crossover
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="v6e,tpu7x")
    parser.add_argument("--tokens", default="128,256,512,1024,2048")
    parser.add_argument("--head-dims", default="64,128")
    parser.add_argument("--kinds", default=",".join(KINDS))
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "--bin", "flywheel-opt", "--bin", "flywheel"],
                   cwd=ROOT, check=True)
    cases = [(target, kind, head_dim, dtype, tokens)
             for target in args.targets.split(",")
             for kind in args.kinds.split(",")
             for head_dim in map(int, args.head_dims.split(","))
             for dtype in (["bf16", "f32"] if kind == "mha" else ["bf16"])
             for tokens in map(int, args.tokens.split(","))]
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        rows = list(pool.map(measure, cases))
    mark_undercounts(rows)
    (ROOT / "bench" / "crossover.json").write_text(json.dumps(rows, indent=1) + "\n")
    print("| target | kind | dtype | head dim | tokens | XLA | kernel | kernel speed-up |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    for row in rows:
        if row.get("why"):
            speedup = row["why"]
        else:
            speedup = f"{row['xla'] / row['kernel']:.2f}x" if row["kernel"] else "kernel's profile aborted"
        print(f"| {row['target']} | {row['kind']} | {row['dtype']} | {row['head_dim']} | {row['tokens']} | "
              f"{row['xla'] or '-'} | {row['kernel'] or '-'} | {speedup} |")
    print()
    print("| target | kind | dtype | head dim | kernel wins from (tokens) |")
    print("|---|---|---|---:|---:|")
    found = crossovers(rows)
    for (target, kind, head_dim, dtype), tokens in found.items():
        print(f"| {target} | {kind} | {dtype} | {head_dim} | {tokens or 'not in the measured range'} |")
    print()
    print("flywheel-tpu's bf16 crossovers (passes/src/raise/profitability.rs): the longest over the kinds")
    print("| target | mask operand | head dim | kernel from (tokens) |")
    print("|---|---|---:|---:|")
    for target, masked, head_dim in sorted({(key[0], key[1] == "mask", key[2]) for key in found if key[3] == "bf16"}):
        lengths = [tokens for (t, kind, d, dtype), tokens in found.items()
                   if (t, kind == "mask", d, dtype) == (target, masked, head_dim, "bf16")]
        longest = None if None in lengths else max(lengths)
        print(f"| {target} | {'yes' if masked else 'no'} | {head_dim} | {longest or 'never (XLA kept)'} |")


if __name__ == "__main__":
    main()
