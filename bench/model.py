"""Whole-model demo: a Qwen3-Next-style decoder stack (python/flywheel/models/qwen3_next.py:
Gated DeltaNet and GQA causal attention layers, RMSNorm, SwiGLU MLPs) optimized by
FlyWheel, with libtpu's static cycles for its prefill before and after, on v6e and tpu7x
(deviceless compiles, cached in bench/.cache like bench/attention.py).

    .venv/bin/python bench/model.py [--length 2048] [--targets v6e,tpu7x] [--layers 8]
        [--pattern GGGA] [--hidden 1024] [--mlp 2048] [--attention-heads 8/2]
        [--gdn-heads 4/8] [--head-dim 128] [--whole]

Prints the table and merges it into bench/model.json (a run replaces the rows of its
configuration, length and targets).

Method:
- Layers found: the whole model (batch 1, bf16) goes through `flywheel.jax.optimize` for
  each target; its kernels are counted by kind (the name of each kernel module's
  function) and must match the layers of each kind.
- Cycles: the sum of libtpu's static profiles of the model's pieces, each lowered and
  profiled as its own program: per layer kind the block's inputs (RMSNorm, projections,
  RoPE), its mixer (attention or GDN) and its output (projection, residual, RMSNorm,
  MLP, residual), and the final RMSNorm. Layers of a kind are one program, counted once
  per layer. "After" is the same sum with each mixer optimized by FlyWheel, which changes
  nothing else.
  Why pieces and not the whole programs: whole programs fail to profile where their
  pieces do not (on tpu7x the original GDN block's profile compile runs out of VMEM at
  2048 tokens, 65 MiB of 64), and need more memory (one optimized GDN block at 4096
  tokens with 16 value heads passed 12 GiB and was stopped; its kernel alone took
  7.8 GB). The price:
  each piece pays its own copies into and out of default layouts, which the whole
  program fuses away; both sums pay them alike. `--whole` profiles the whole programs
  too, where they profile, to compare: at 512 tokens on tpu7x, the one target and
  length where all of them profile (measured with an earlier GDN kernel), pieces
  28,386,770 before and 1,155,684 after (24.56x), whole programs 28,287,164 and
  1,073,085 (26.36x); v6e before 18,861,741 and 18,719,402.
- The per-token scan: libtpu's static profile counts a `while` body once, not once per
  trip. So "before" adds, per GDN layer, (length - 1) x the body's cycles, measured on
  the scan alone: at 8 and 16 tokens it costs its body plus work outside the loop in
  proportion to the length, so body = 2 C(8) - C(16) (v6e 5,998 cycles, tpu7x 9,116 at
  8 value heads x 128). Not bench/gated_delta.py's (16 unrolled tokens - 8) / 8: unrolled
  steps are not the loop's body (v6e 9,507 per token, each unrolled step dearer the
  longer the unrolling; tpu7x 4,226).
- No estimate: a profile that aborts, or a kernel (`name.N`) or fusion that the profile
  gives 0 cycles, makes its piece, and every total that needs it, "—", never a number.
  What libtpu 0.0.50.1 does with this model (the table's footer names each case): v6e
  aborts on FlyWheel's attention kernel whenever its inputs are computed and its output
  is used in the same program, as in any model ("Cannot schedule FIFO pop instruction
  when the FIFO is empty"; with parameters in and the result out it profiles); both
  targets give XLA's attention fusions 0 cycles at 2048 tokens (v6e estimates them at
  1024); tpu7x aborts on, or gives 0 cycles to, some of XLA's projection and MLP fusions
  (at 2048 tokens: separate q, k, v projections into GDN heads, hence the model's fused
  ones; an MLP of 3072 or 4096, hence 2048); tpu7x gives the stacked GDN kernel 0 cycles
  from about a million cycles of it (8 value heads x 4096 tokens), v6e from a few million
  (32 x 4096), hence GDN heads of 4 query/key and 8 value heads, whose kernel profiles at
  2048 tokens on both targets.
"""

import argparse
import functools
import json
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import flywheel.jax  # noqa: E402
import attention  # noqa: E402
from flywheel.models import qwen3_next  # noqa: E402

RESULTS = ROOT / "bench" / "model.json"
KINDS = ("attention", "gdn")
LABELS = {"attention": "attention layers", "gdn": "GDN layers"}


def profile(program, target, label):
    """`attention.profile` by the flywheel binary `flywheel.jax` finds."""
    return attention.profile(program, target, label, flywheel.jax.tool("flywheel"))


def spec(shape, dtype=jnp.bfloat16):
    return jax.ShapeDtypeStruct(shape, dtype)


def loop_body_cycles(config, target):
    """The cycles libtpu's profile counts, once, for the per-token scan's while body: the
    scan alone (generate.py's gdn_recurrent over the model's value heads) costs its body
    plus work outside the loop in proportion to its length, so body = 2 C(8) - C(16)."""
    heads, dim = config.gdn_value_heads, config.gdn_head_dim
    totals = []
    for length in (8, 16):
        sequence, gate = spec((1, length, heads, dim)), spec((1, length, heads), jnp.float32)
        program = flywheel.jax.stablehlo(qwen3_next.generate.gdn_recurrent, sequence, sequence, sequence, gate, gate)
        totals.append(profile(program, target, f"per-token scan, {length} tokens"))
    failed = next((why for cycles, why in totals if cycles is None), None)
    return (None, failed) if failed else (2 * totals[0][0] - totals[1][0], None)


def block_cycles(kind, config, length, target):
    """One layer of `kind`: {"before", "after"} cycles (None without an estimate) and why
    not."""
    inputs, mixer = qwen3_next.BLOCKS[kind]
    x, p = spec((1, length, config.hidden)), qwen3_next.layer_specs(config, kind)
    mixer_args = jax.eval_shape(functools.partial(inputs, config=config), x, p)
    optimized = flywheel.jax.optimize(mixer, *mixer_args, target=target)
    if optimized.kernels != 1:
        print(f"  {target}: the {kind} mixer alone got {optimized.kernels} kernels", file=sys.stderr)
    output = jax.eval_shape(mixer, *mixer_args)
    shared = [profile(flywheel.jax.stablehlo(functools.partial(inputs, config=config), x, p), target,
                      f"{kind} inputs"),
              profile(flywheel.jax.stablehlo(qwen3_next.block_output, x, output, p), target, f"{kind} output")]
    before = [profile(optimized.original, target, f"{kind} mixer (XLA)")]
    if kind == "gdn":
        body, why = loop_body_cycles(config, target)
        before.append((None, why) if body is None else ((length - 1) * body, None))
    after = [profile(optimized.text, target, f"{kind} mixer (FlyWheel)")]
    result = {"why": []}
    for label, pieces in (("before", shared + before), ("after", shared + after)):
        missing = [why for cycles, why in pieces if cycles is None]
        result[label] = None if missing else round(sum(cycles for cycles, _ in pieces))
        result["why"] += missing
    return result


def whole_cycles(config, length, target, optimized, gdn_layers):
    """The whole programs' own profiles (--whole), before with the scan counted per token."""
    before, why_before = profile(optimized.original, target, "whole original program")
    if before is not None and gdn_layers:
        body, why_before = loop_body_cycles(config, target)
        before = None if body is None else before + gdn_layers * (length - 1) * body
    after, why_after = profile(optimized.text, target, "whole optimized program")
    return {"before": before, "after": after, "why": [why for why in (why_before, why_after) if why]}


def measure(config, length, target, whole):
    x = spec((1, length, config.hidden))
    model = functools.partial(qwen3_next.forward, config=config)
    optimized = flywheel.jax.optimize(model, qwen3_next.param_specs(config), x, target=target)
    layers = {kind: config.kinds.count(kind) for kind in KINDS}
    found = qwen3_next.kernel_kinds(optimized.text)
    if found != layers:
        print(f"  {target}: FlyWheel found {found} kernels for {layers} layers", file=sys.stderr)
    final_norm = profile(flywheel.jax.stablehlo(qwen3_next.rms_norm, x, spec((config.hidden,), jnp.float32)),
                         target, "final RMSNorm")
    rows = []
    for kind in KINDS:
        if layers[kind]:
            block = block_cycles(kind, config, length, target)
            scaled = {label: None if block[label] is None else block[label] * layers[kind]
                      for label in ("before", "after")}
            rows.append({"part": LABELS[kind], "layers": layers[kind], "kernels": found[kind], **scaled,
                         "why": block["why"]})
    rows.append({"part": "final RMSNorm", "before": final_norm[0], "after": final_norm[0],
                 "why": [final_norm[1]] if final_norm[1] else []})
    totals = {label: None if any(row[label] is None for row in rows) else sum(row[label] for row in rows)
              for label in ("before", "after")}
    rows.append({"part": "whole model (sum of pieces)", "layers": config.layers, "kernels": optimized.kernels,
                 **totals, "why": []})
    if whole:
        rows.append({"part": "whole model (whole programs)", **whole_cycles(config, length, target, optimized, layers["gdn"])})
    return [{"target": target, "length": length, **row} for row in rows]


def describe(config):
    return (f"{config.layers} layers ({config.pattern}), hidden {config.hidden}, MLP {config.mlp}, attention "
            f"{config.attention_heads}/{config.kv_heads} heads x {config.head_dim}, GDN {config.gdn_key_heads} "
            f"q/k / {config.gdn_value_heads} v heads x {config.gdn_head_dim}")


def report(config, rows):
    number = lambda value: f"{value:,}" if value is not None else "—"
    print(f"Qwen3-Next-style stack: {describe(config)}; batch 1, bf16; libtpu {attention.LIBTPU_VERSION} static cycles")
    print()
    print("| target | tokens | part | layers | kernels found | before cycles | after cycles | speed-up |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        speedup = f"{row['before'] / row['after']:.2f}x" if row["before"] and row["after"] else "—"
        print(f"| {row['target']} | {row['length']} | {row['part']} | {row.get('layers', '')} | "
              f"{row.get('kernels', '')} | {number(row['before'])} | {number(row['after'])} | {speedup} |")
    print()
    print("Before: the program as JAX lowers it (XLA); each GDN layer's per-token scan counted per token, its")
    print("while body, which the profile counts once, (tokens - 1) more times (body = 2 C(8 tokens) - C(16)).")
    print("After: the same with FlyWheel's kernels. Sum of pieces: each layer kind's inputs, mixer and")
    print("output profiled as separate programs, times its layers, plus the final RMSNorm (bench/model.py).")
    print("—: no estimate (a profile that aborted, or a kernel or fusion libtpu gave 0 cycles), never a number:")
    for why in dict.fromkeys(why for row in rows for why in row["why"]):
        print(f"  {why}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=2048)
    parser.add_argument("--targets", default="v6e,tpu7x")
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--pattern", default="GGGA", help="cycled over the layers: G Gated DeltaNet, A attention")
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--mlp", type=int, default=2048)
    parser.add_argument("--attention-heads", default="8/2", help="query/key-value heads")
    parser.add_argument("--gdn-heads", default="4/8", help="query-key/value heads")
    parser.add_argument("--head-dim", type=int, default=128, help="attention and GDN head dim")
    parser.add_argument("--whole", action="store_true", help="also profile the whole programs (memory: small lengths)")
    args = parser.parse_args()
    attention_heads, kv_heads = map(int, args.attention_heads.split("/"))
    gdn_key_heads, gdn_value_heads = map(int, args.gdn_heads.split("/"))
    config = qwen3_next.Config(hidden=args.hidden, mlp=args.mlp, layers=args.layers, pattern=args.pattern,
                               attention_heads=attention_heads, kv_heads=kv_heads, head_dim=args.head_dim,
                               gdn_key_heads=gdn_key_heads, gdn_value_heads=gdn_value_heads,
                               gdn_head_dim=args.head_dim)
    rows = [row for target in args.targets.split(",") for row in measure(config, args.length, target, args.whole)]
    # Earlier runs of other configurations, lengths or targets are kept.
    fresh = {(describe(config), row["length"], row["target"]) for row in rows}
    kept = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    kept = [run for run in kept if (run["config"], run["length"], run["target"]) not in fresh]
    runs = [{"config": describe(config), "length": args.length, "target": target, "libtpu": attention.LIBTPU_VERSION,
             "rows": [row for row in rows if row["target"] == target]} for target in args.targets.split(",")]
    runs = sorted(kept + runs, key=lambda run: (run["config"], run["length"]))
    RESULTS.write_text(json.dumps(runs, indent=1) + "\n")
    report(config, rows)


if __name__ == "__main__":
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    main()
