"""Gated DeltaNet prefill benchmark: libtpu static cycles for FlyWheel's chunked kernel and
XLA's plain-jnp forms, Qwen3-Next-like heads (16 query/key heads, 32 value heads, head
dims 128, bf16), on v6e and tpu7x (deviceless compiles, cached in bench/.cache like
bench/attention.py).

    .venv/bin/python bench/gated_delta.py [--lengths 512,2048,8192,32768] [--targets v6e,tpu7x] [--ablation] [--flywheel-only]
    .venv/bin/python bench/gated_delta.py --markdown   # docs/benchmarks.md's table from the JSON

Rows are merged into bench/gated_delta.json (a run replaces only the rows it measures;
with --flywheel-only it measures FlyWheel's rows alone and keeps XLA's).

Rows:
- XLA, per-token scan: the recurrence (generate.py's gdn_recurrent) as XLA compiles one
  token step: (cycles of 16 unrolled tokens - cycles of 8) / 8, times the length (a full
  8192-step unroll does not compile in reasonable time); q and k repeated to the value
  heads.
- XLA, chunked jnp: the chunked (WY) form in plain jnp (generate.py's gdn_chunked,
  chunks of 64, its scan over chunks unrolled since XLA's profile counts a while body
  once), from a 2 key / 4 value head slice scaled like SLICED below (at all 32 heads
  libtpu's profile of it passed this machine's 24 GiB and was killed already at 512
  tokens); tpu7x gives its fusions 0 cycles (no estimate).
- FlyWheel: `flywheel-tpu`'s chain for GDN (flywheel-tile, flywheel-pipeline,
  flywheel-tri-inverse, lowering); with --ablation also each step towards it: forward
  substitution alone, + tri-inverse (blocks of 8 by substitution), + stacked heads, +
  bf16x3 products, + doubling, + shared operands, + 2 and + 4 chunks per grid step (the
  state handed on in registers, so a chunk's chunk-parallel work can overlap the previous
  chunk's state products), + the stacked heads' inverses solved side by side
  (flywheel-tri-inverse's side-by-side, off in the rows above it; each product in lane
  groups of 128), + 8 value heads per step (flywheel-tile's default rows on v6e and
  tpu7x; the rows above it set 4), all those with the step's chunk-parallel tiles whole
  (gdn-block-rows=0), + diagonal blocks of 128 rows (flywheel-tile's default: two heads
  each, their inverses solved together by flywheel-tri-inverse), + flywheel-pipeline
  (each chunk's parallel work issued before the previous chunk's state update, so the
  chunks' inverses are solved together too), + the output written token-major
  (flywheel-tile's default gdn-token-major=output; the rows above it set none), + 16
  value heads per step (flywheel-tile's default rows on v6e, 1024; the rows from "+ 8
  value heads per step" on set 8, tpu7x's default), then flywheel-tpu itself for the
  target, which on v6e also takes the inverse's products in one bf16 pass and a Newton
  step on diagonal blocks of 4 where sixteen inverses are solved together, as here
  (flywheel-tri-inverse{refine-from=16}), and five
  options measured and left off: q, k and v read token-major too (gdn-token-major=all),
  gates in base 2 (`gdn-exp2`: it saved nothing), the products after the inverse in one
  bf16 pass (`gdn-single-pass` as it was when measured, V''s products included: over the
  1e-3 error budget; today's is the DEFAULT row's split), Kᵀ for the state update
  from a copy of K transposed in HBM (`flywheel-layout{gdn-state-keys=transposed-copy}`:
  slower than a transpose per chunk) and flywheel-tpu's chain with each inverse solved
  where its loop was (`flywheel-tri-inverse{interleave=false}`). Without --ablation, the
  default and the default with one value head per step
  (not stacked), which libtpu estimates at 8192 tokens.
Lengths: libtpu 0.0.50.1's profile gives FlyWheel's stacked kernel an estimate of 0
cycles for the kernel op (the rest of the module is estimated), though it compiles,
from 4096 tokens on v6e with 4 value heads per grid step and from 1024 on tpu7x; with
one head per step it estimates 8192 tokens. A row whose kernel op has no estimate is
reported as such, never as a result. The profile stops estimating past an amount of
simulated work (on one grid step's heads, v6e: 8192 tokens estimate, 16384 do not;
tpu7x: 2048 do, 4096 did not with four chunks a step), so one more row estimates every
length: SLICED, the default kernel on one
grid step's heads (v6e 8 key and 16 value heads, tpu7x 4 and 8; heads are a parallel grid axis, run one
after another on a TensorCore), profiled at the two longest lengths that estimate (v6e
4096 and 8192 tokens, tpu7x 1024 and 2048), the line through them read at the length,
times the steps' head blocks (32 value heads / 16 or 8). Where the full kernel
estimates, the two rows side by side check the slice. Past 8192 tokens only the slice is
profiled (one head per step would simulate 16,384 grid steps).
SLICED_DEFAULT is SLICED for the op saying its source's products asked DEFAULT precision
(`precision = "DEFAULT"`, as a plain jnp program's do): U, W and the state readouts in one
bf16 pass, as the source's are on a TPU (docs/kernels/gated_delta.md, the precision
contract); the other rows are the op without it, HIGHEST.
Efficiency = the chunked flop count at C = 64 (per chunk and value head: K Kᵀ, Q Kᵀ,
T [βV | βe^γK], W S, Q S, P V', Kᵀ V') / (cycles x 524,288). tpu-inference's GDN kernel
is not measured (docs/design.md: libtpu 0.0.50.1's static profiler aborts on it, "No DMA issue
node found for sync flag", and its grid size comes from runtime data).
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "test" / "fixtures"))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from attention import FLYWHEEL_OPT, PEAK, cycles, stablehlo  # noqa: E402
from generate import gdn_chunked, gdn_recurrent  # noqa: E402

KEY_HEADS, VALUE_HEADS, DIM, CHUNK = 16, 32, 128, 64
RESULTS = ROOT / "bench" / "gated_delta.json"

XLA = "XLA, per-token scan (8-token difference x length)"
LOWER = "flywheel-lower-to-mosaic"
SLICED = "FlyWheel (flywheel-tpu) from one grid step's heads, scaled to 32"
SLICED_DEFAULT = ("FlyWheel (flywheel-tpu), the op at DEFAULT precision (U, W and the state readouts in one bf16 "
                  "pass), from one grid step's heads, scaled to 32")
DEFAULT = "FlyWheel (flywheel-tpu: + on v6e the inverse's products in one bf16 pass and a Newton step, blocks of 4)"
ONE_HEAD = "FlyWheel, defaults with one value head per step"
CHUNKED = "XLA, chunked jnp (WY) from a 4-head slice, x 8"
# Each slice's (key, value) heads per target: for FlyWheel one grid step's heads of the
# default kernel; and the two lengths its line is drawn through: for FlyWheel the longest
# that libtpu estimates; for XLA's chunked form the longest whose unrolled scan profiles
# in this machine's memory (2048 tokens needs more than 12 GB).
SLICE_HEADS = {SLICED: {"v6e": (8, 16), "tpu7x": (4, 8)}, SLICED_DEFAULT: {"v6e": (8, 16), "tpu7x": (4, 8)},
               CHUNKED: {"v6e": (2, 4), "tpu7x": (2, 4)}}
SLICE_LENGTHS = {SLICED: {"v6e": (4096, 8192), "tpu7x": (1024, 2048)},
                 SLICED_DEFAULT: {"v6e": (4096, 8192), "tpu7x": (1024, 2048)},
                 CHUNKED: {"v6e": (512, 1024), "tpu7x": (512, 1024)}}
# The longest length at which the full kernels (not only the slice) are profiled.
LONGEST_FULL = 8192
# (name, passes through tiling, passes between tiling and lowering)
FLYWHEEL = [
    ("FlyWheel, forward substitution", "flywheel-tile{gdn-token-major=none gdn-heads=1 gdn-precision=fp32 gdn-chunks-per-step=1}", ""),
    ("FlyWheel, + tri-inverse", "flywheel-tile{gdn-token-major=none gdn-heads=1 gdn-precision=fp32 gdn-chunks-per-step=1}", "flywheel-tri-inverse{block=8 diagonal=substitution},"),
    ("FlyWheel, + stacked heads", "flywheel-tile{gdn-token-major=none gdn-heads=4 gdn-block-rows=0 gdn-precision=fp32 gdn-chunks-per-step=1}", "flywheel-tri-inverse{block=8 diagonal=substitution side-by-side=false},"),
    ("FlyWheel, + bf16x3 products", "flywheel-tile{gdn-token-major=none gdn-heads=4 gdn-block-rows=0 gdn-chunks-per-step=1}", "flywheel-tri-inverse{block=8 diagonal=substitution side-by-side=false},"),
    ("FlyWheel, + doubling", "flywheel-tile{gdn-token-major=none gdn-heads=4 gdn-block-rows=0 gdn-chunks-per-step=1}", "flywheel-tri-inverse{side-by-side=false},"),
    ("FlyWheel, + shared operands", "flywheel-layout,flywheel-tile{gdn-token-major=none gdn-heads=4 gdn-block-rows=0 gdn-chunks-per-step=1}", "flywheel-tri-inverse{side-by-side=false},"),
    ("FlyWheel, + shared operands, + exp2 gates (not taken)", "flywheel-layout,flywheel-tile{gdn-token-major=none gdn-heads=4 gdn-block-rows=0 gdn-chunks-per-step=1 gdn-exp2=true}", "flywheel-tri-inverse{side-by-side=false},"),
    ("FlyWheel, + 2 chunks per step", "flywheel-layout,flywheel-tile{gdn-token-major=none gdn-heads=4 gdn-block-rows=0 gdn-chunks-per-step=2}", "flywheel-tri-inverse{side-by-side=false},"),
    ("FlyWheel, + 4 chunks per step", "flywheel-layout,flywheel-tile{gdn-token-major=none gdn-heads=4 gdn-block-rows=0 gdn-chunks-per-step=4}", "flywheel-tri-inverse{side-by-side=false},"),
    ("FlyWheel, + the heads' inverses side by side (products in lane groups of 128)", "flywheel-layout,flywheel-tile{gdn-token-major=none gdn-heads=4 gdn-block-rows=0 gdn-chunks-per-step=4}", "flywheel-tri-inverse,"),
    ("FlyWheel, + single-pass bf16 products after the inverse (not taken)", "flywheel-layout,flywheel-tile{gdn-token-major=none gdn-heads=4 gdn-block-rows=0 gdn-chunks-per-step=4 gdn-single-pass=true}", "flywheel-tri-inverse,"),
    ("FlyWheel, + Kᵀ from a copy transposed in HBM (not taken)", "flywheel-layout{gdn-state-keys=transposed-copy},flywheel-tile{gdn-token-major=none gdn-heads=4 gdn-block-rows=0 gdn-chunks-per-step=4}", "flywheel-tri-inverse,"),
    ("FlyWheel, + 8 value heads per step", "flywheel-layout,flywheel-tile{gdn-token-major=none gdn-heads=8 gdn-block-rows=0 gdn-chunks-per-step=4}", "flywheel-tri-inverse,"),
    ("FlyWheel, + diagonal blocks of 128 rows, their inverses solved together (tpu7x: 2 chunks per step)", "flywheel-layout,flywheel-tile{gdn-token-major=none gdn-heads=8}", "flywheel-tri-inverse,"),
    ("FlyWheel, + flywheel-pipeline (each chunk's parallel work before the previous chunk's state update, the chunks' inverses solved together)",
     "flywheel-layout,flywheel-tile{gdn-token-major=none gdn-heads=8}", "flywheel-pipeline,flywheel-tri-inverse,"),
    ("FlyWheel, + the output written token-major", "flywheel-layout,flywheel-tile{gdn-heads=8}", "flywheel-pipeline,flywheel-tri-inverse,"),
    ("FlyWheel, flywheel-tpu's chain with q, k and v read token-major too (not taken)", "flywheel-layout,flywheel-tile{gdn-token-major=all}", "flywheel-pipeline,flywheel-tri-inverse,"),
    ("FlyWheel, flywheel-tpu's chain with each inverse solved apart (not taken)", "flywheel-layout,flywheel-tile", "flywheel-pipeline,flywheel-tri-inverse{interleave=false},"),
    (ONE_HEAD, "flywheel-layout,flywheel-tile{gdn-heads=1}", "flywheel-pipeline,flywheel-tri-inverse,"),
    ("FlyWheel (flywheel-tpu: + 16 value heads per step on v6e)", "flywheel-layout,flywheel-tile",
     "flywheel-pipeline,flywheel-tri-inverse,"),
    # flywheel-tpu itself, for the target.
    (DEFAULT, "flywheel-tpu", ""),
]


def chunked_flops(length):
    c, dk, dv = CHUNK, DIM, DIM
    per_chunk = 2 * c * c * dk * 2 + 2 * c * c * (dk + dv) + 2 * c * dk * dv * 3 + 2 * c * c * dv
    return VALUE_HEADS * (length // c) * per_chunk


def inputs(length, key_heads=KEY_HEADS, value_heads=VALUE_HEADS):
    spec = jax.ShapeDtypeStruct
    return (spec((1, length, key_heads, DIM), jnp.bfloat16), spec((1, length, key_heads, DIM), jnp.bfloat16),
            spec((1, length, value_heads, DIM), jnp.bfloat16), spec((1, length, value_heads), jnp.float32),
            spec((1, length, value_heads), jnp.float32))


def repeated(fn):
    """fn on q and k repeated to the value heads (value head h reads key head h / 2)."""
    def wrapped(q, k, v, g, beta):
        group = VALUE_HEADS // KEY_HEADS
        return fn(jnp.repeat(q, group, axis=2), jnp.repeat(k, group, axis=2), v, g, beta)
    return wrapped


def with_target(tiling, target):
    """`tiling` with flywheel-tile's target option set."""
    if "flywheel-tile{" in tiling:
        return tiling.replace("flywheel-tile{", f"flywheel-tile{{target={target} ")
    return tiling.replace("flywheel-tile", f"flywheel-tile{{target={target}}}")


def flywheel_program(length, tiling, passes, target, key_heads=KEY_HEADS, value_heads=VALUE_HEADS, precision=None):
    """The GDN op at `length` tokens (saying its source's products asked `precision`, if
    given; else HIGHEST) through `tiling` (flywheel-tile for `target`, whose rows per grid
    step set the default value heads), `passes` and the Mosaic lowering; or through
    flywheel-tpu for `target` when `tiling` is "flywheel-tpu"."""
    tensor = lambda *dims: "tensor<" + "x".join(map(str, dims)) + ">"
    q = tensor(1, length, key_heads, DIM, "bf16")
    v = tensor(1, length, value_heads, DIM, "bf16")
    gate = tensor(1, length, value_heads, "f32")
    state = tensor(1, value_heads, DIM, DIM, "f32")
    text = (
        f"func.func @main(%q: {q}, %k: {q}, %v: {v}, %g: {gate}, %beta: {gate}) -> ({v}, {state}) {{\n"
        f'  %o, %s = "flywheel.gated_delta"(%q, %k, %v, %g, %beta) {{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>, '
        f'scale = {DIM ** -0.5} : f32, chunk_size = {CHUNK} : i64, layout = "BTNH"'
        + (f', precision = "{precision}"' if precision else "")
        + f'}} : ({q}, {q}, {v}, {gate}, {gate}) -> ({v}, {state})\n'
        f"  return %o, %s : {v}, {state}\n}}\n"
    )
    if tiling == "flywheel-tpu":
        pipeline = f"builtin.module(flywheel-tpu{{target={target}}})"
    else:
        pipeline = f"builtin.module({with_target(tiling, target)},{passes}{LOWER})"
    return subprocess.run([str(FLYWHEEL_OPT), "-", f"--pass-pipeline={pipeline}"], input=text, capture_output=True,
                          text=True, check=True).stdout


def per_token_cycles(target):
    """XLA's cycles per token of the per-token scan: unrolled 16 tokens minus 8, over 8."""
    totals = []
    for length in (8, 16):
        fn = repeated(lambda q, k, v, g, beta: gdn_recurrent(q, k, v, g, beta, unroll=True))
        totals.append(cycles(stablehlo(fn, *inputs(length)), target, f"per-token scan, {length} tokens"))
    if None in totals:
        return None
    return (totals[1] - totals[0]) / 8


def slice_program(kernel, length, target):
    """The program of `kernel` (SLICED or CHUNKED) on the slice's heads for `target`."""
    key_heads, value_heads = SLICE_HEADS[kernel][target]
    if kernel in (SLICED, SLICED_DEFAULT):
        precision = "DEFAULT" if kernel == SLICED_DEFAULT else None
        return flywheel_program(length, *FLYWHEEL[-1][1:], target, key_heads, value_heads, precision)
    # The scan over chunks unrolled: XLA's profile counts a while body once.
    fn = repeated(lambda q, k, v, g, beta: gdn_chunked(q, k, v, g, beta, chunk=CHUNK, unroll=True))
    return stablehlo(fn, *inputs(length, key_heads, value_heads))


def sliced_cycles(kernel, length, target):
    """`kernel`'s cycles from a slice of its heads (SLICED and CHUNKED in the docstring):
    the slice at its two lengths, the line through them at `length`, times the slices in
    the full head count."""
    lengths = SLICE_LENGTHS[kernel][target]
    points = [cycles(slice_program(kernel, measured, target), target, f"{kernel}, {measured} tokens") for measured in lengths]
    if None in points:
        return None
    (first, second), (first_cycles, second_cycles) = lengths, points
    at_length = first_cycles + (second_cycles - first_cycles) * (length - first) / (second - first)
    return round(at_length * VALUE_HEADS / SLICE_HEADS[kernel][target][1])


def measure(lengths, targets, ablation, flywheel_only):
    """The rows at `lengths` and `targets`; with `flywheel_only`, FlyWheel's alone."""
    rows = []
    for length in lengths:
        # One head per step is estimated at lengths where the stacked kernel is not.
        variants = (FLYWHEEL if ablation else [row for row in FLYWHEEL if row[0] in (ONE_HEAD, DEFAULT)]) if length <= LONGEST_FULL else []
        for target in targets:
            if not flywheel_only:
                step = per_token_cycles(target)
                rows.append({"kernel": XLA, "length": length, "target": target,
                             "cycles": None if step is None else round(step * length)})
                rows.append({"kernel": CHUNKED, "length": length, "target": target,
                             "cycles": sliced_cycles(CHUNKED, length, target)})
            for kernel in (SLICED, SLICED_DEFAULT):
                rows.append({"kernel": kernel, "length": length, "target": target,
                             "cycles": sliced_cycles(kernel, length, target)})
            for name, tiling, passes in variants:
                label = f"{name}, {length} tokens"
                rows.append({"kernel": name, "length": length, "target": target,
                             "cycles": cycles(flywheel_program(length, tiling, passes, target), target, label)})
    return rows


def flywheel_reference(rows, length, target):
    """The FlyWheel row others are compared with: the full default kernel where it has an
    estimate, else its head-sliced extrapolation."""
    for kernel in (FLYWHEEL[-1][0], SLICED):
        row = next((r for r in rows if (r["kernel"], r["length"], r["target"]) == (kernel, length, target)), None)
        if row and row["cycles"]:
            return row
    return None


def speedup(rows, row):
    """Cycles of `row` over FlyWheel's reference at its length and target ("" for the reference)."""
    reference = flywheel_reference(rows, row["length"], row["target"])
    if not row["cycles"] or not reference or reference is row:
        return ""
    return f"{row['cycles'] / reference['cycles']:.2f}x"


def efficiency(row, digits):
    return f"{chunked_flops(row['length']) / (row['cycles'] * PEAK[row['target']]):.{digits}%}" if row["cycles"] else "—"


def report(rows):
    print(f"{'kernel':<64} {'tokens':>7} {'target':>6} {'static cycles':>14} {'eff.':>6} {'FlyWheel speed-up':>18}")
    for row in rows:
        shown = f"{row['cycles']:,}" if row["cycles"] else "no estimate"
        print(f"{row['kernel']:<64} {row['length']:>7} {row['target']:>6} {shown:>14} {efficiency(row, 1):>6} {speedup(rows, row):>18}")


def markdown(rows):
    """docs/benchmarks.md's table: a row per kernel and length, v6e and tpu7x side by side; the
    FlyWheel row the speed-ups are against in bold."""
    def cells(kernel, length, target):
        row = next((r for r in rows if (r["kernel"], r["length"], r["target"]) == (kernel, length, target)), None)
        if not row or not row["cycles"]:
            return ["no estimate" if row else "", "", ""]
        shown = f"**{row['cycles']:,}**" if row is flywheel_reference(rows, length, target) else f"{row['cycles']:,}"
        return [shown, efficiency(row, 2), speedup(rows, row)]
    print("| kernel | tokens | v6e cycles | v6e eff. | vs FlyWheel | tpu7x cycles | tpu7x eff. | vs FlyWheel |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    kernels = [XLA, CHUNKED] + [name for name, _, _ in FLYWHEEL] + [SLICED, SLICED_DEFAULT]
    for length in sorted({row["length"] for row in rows}):
        for kernel in kernels:
            if any(r["kernel"] == kernel and r["length"] == length for r in rows):
                print("| " + " | ".join([kernel, str(length)] + cells(kernel, length, "v6e") + cells(kernel, length, "tpu7x")) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="512,2048,8192,32768")
    parser.add_argument("--targets", default="v6e,tpu7x")
    parser.add_argument("--ablation", action="store_true", help="also each FlyWheel transform's step (v6e and tpu7x)")
    parser.add_argument("--flywheel-only", action="store_true",
                        help="measure FlyWheel's rows alone; XLA's rows stay as bench/gated_delta.json has them "
                        "(valid while libtpu and the XLA programs are unchanged)")
    parser.add_argument("--markdown", action="store_true", help="print bench/gated_delta.json as docs/benchmarks.md's table, measuring nothing")
    args = parser.parse_args()
    if args.markdown:
        return markdown(json.loads(RESULTS.read_text()))
    rows = measure([int(x) for x in args.lengths.split(",")], args.targets.split(","), args.ablation, args.flywheel_only)
    # Earlier runs' rows for other lengths or targets are kept (rows of kernels no longer
    # measured are dropped).
    key = lambda row: (row["kernel"], row["length"], row["target"])
    fresh = {key(row) for row in rows}
    current = {XLA, CHUNKED, SLICED} | {name for name, _, _ in FLYWHEEL}
    kept = [row for row in json.loads(RESULTS.read_text()) if row["kernel"] in current] if RESULTS.exists() else []
    rows = sorted([row for row in kept if key(row) not in fresh] + rows, key=lambda row: (row["length"], row["target"]))
    RESULTS.write_text(json.dumps(rows, indent=1) + "\n")
    report(rows)


if __name__ == "__main__":
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    main()
