"""Attention anchor benchmark: libtpu static cycles for FlyWheel's kernel and the
anchors at the benchmark shapes, on v6e and tpu7x (deviceless compiles).

    .venv/bin/python bench/attention.py [--shapes quick|all] [--targets v6e,tpu7x] [--ablation quick|ablation|all]

Prints a table (kernel, shape, static cycles, efficiency against the target's MXU peak,
FlyWheel's speed-up over each anchor), writes bench/results.json and draws
bench/attention.png (static cycles per kernel, shape and target). Every compile is
cached in bench/.cache by the hash of its program and target, so reruns are fast.

Anchors measured today: XLA's plain jnp attention (up to 1 GiB of f32 scores: profiling
larger ones needs more than this machine's 24 GiB), jax's Pallas flash attention (default
block sizes; it reads nothing from SMEM, so its static estimate is valid), jax's Splash
attention in a static variant (below) at its default blocks (128) and tuned square
blocks (512, 1024 with 512-key compute steps; the best is reported), tokamax's Splash
(blocks 1024/1024/512, max_logit_const=30, base-e exp: libtpu 0.0.50.1's profiler aborts
on its base-2 kernel, a bf16 multiply by log2(e)) — without causality its dense grid
reads nothing from SMEM; with it, its SMEM work list is made static
(bench/tokamax_static.py) — and a large bf16 matmul as the sanity line. FlyWheel runs
`flywheel-tpu` with its block sizes searched per shape and target (`auto-blocks`);
`--ablation` adds each FlyWheel transform alone and together (bench/ablation.json);
`--flywheel-only` compiles FlyWheel's programs alone and keeps the anchors' rows of
bench/results.json (valid while libtpu and the anchors are unchanged).
Not measured: RPA v3 (see docs/benchmarks.md).

Splash's static variant: Splash reads its block mask and next-block table from SMEM
(scalar prefetch), which libtpu's simulator takes as 0 (every block skipped). The
harness replaces Splash's one reader of them, `_next_nonzero`, while tracing, by the
true values as formulas of the grid indices (full mask: every block full, next block j;
causal with square blocks: full below the diagonal, partial on it, empty above, next
block j up to the diagonal and 0 after), after checking the formulas against the arrays
Splash itself computed for the shape. Nothing of Splash's code is copied.
"""

import contextlib

import argparse
import functools
import hashlib
import importlib.metadata
import json
import os
import pathlib
import subprocess
import sys
import threading

import jax
import jax.numpy as jnp

# Without this JAX records the harness's own source lines in each Pallas kernel's
# serialized body, so any edit of this file would change every program and miss the cache.
jax.config.update("jax_traceback_in_locations_limit", 0)

ROOT = pathlib.Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache"
FLYWHEEL = ROOT / "target" / "release" / "flywheel"
FLYWHEEL_OPT = ROOT / "target" / "release" / "flywheel-opt"
# The libtpu `flywheel profile` loads from the venv: profiles are cached per version.
LIBTPU_VERSION = importlib.metadata.version("libtpu")

# bf16 flop per cycle of the MXUs. v6e from the compiler's own ISA (docs/design.md): two MXUs,
# a vmatmul of 16 rows x 256 x 256 every 8 cycles each. tpu7x's bundle dump shows the same
# two MXUs (mxu0, mxu1) and vmatmul shape, and libtpu estimates its 4096^3 bf16 matmul at
# 8.57 cycles per vmatmul per MXU (v6e: 8.52): the same 524,288 per TensorCore.
PEAK = {"v6e": 524288, "tpu7x": 524288}

# (name, batch, q heads, kv heads, sequence, head dim, causal)
SHAPES = {
    "quick": [
        ("mha8_s2048", 1, 8, 8, 2048, 128, False),
        ("causal_mha8_s2048", 1, 8, 8, 2048, 128, True),
        ("mha8_s2048_d64", 1, 8, 8, 2048, 64, False),
    ],
    "ablation": [
        ("mha8_s2048", 1, 8, 8, 2048, 128, False),
        ("causal_mha8_s2048", 1, 8, 8, 2048, 128, True),
        ("mha8_s2048_d64", 1, 8, 8, 2048, 64, False),
        ("mha8_s8192", 1, 8, 8, 8192, 128, False),
    ],
    "all": [
        ("mha8_s2048", 1, 8, 8, 2048, 128, False),
        ("mha8_s8192", 1, 8, 8, 8192, 128, False),
        ("causal_gqa32_8_s8192", 1, 32, 8, 8192, 128, True),
        ("causal_mha8_s32768", 1, 8, 8, 32768, 128, True),
        ("mha8_s8192_d256", 1, 8, 8, 8192, 256, False),
        ("causal_gqa16_2_s8192_d256", 1, 16, 2, 8192, 256, True),
        ("mha8_s2048_d64", 1, 8, 8, 2048, 64, False),
    ],
}


# Limits on what is compiled (see main): the largest f32 score tensor XLA's plain
# attention is profiled with, the most grid steps of a 128-block kernel, and the largest
# attention (in flops) FlyWheel's block search runs for.
XLA_SCORE_BYTES = 1 << 30
SMALL_BLOCK_STEPS = 40_000
SEARCH_FLOPS = 4 * 8 * 8192 * 8192 * 128

# What each fixed kernel runs with.
CONFIGS = {"pallas flash attention": "default blocks", "flywheel": "flywheel-tpu, auto blocks",
           "tokamax splash": "1024/1024/512, max logit 30"}

# Splash block sizes (q = kv block, kv compute block): its default, then tuned candidates.
SPLASH_BLOCKS = [(128, 128), (512, 512), (1024, 512)]


def stablehlo(fn, *args):
    lowered = jax.jit(fn).trace(*args).lower(lowering_platforms=("tpu",))
    return lowered.compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)


def xla_attention(q, k, v, *, causal, scale):
    groups = q.shape[1] // k.shape[1]
    k, v = jnp.repeat(k, groups, axis=1), jnp.repeat(v, groups, axis=1)
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k, preferred_element_type=jnp.float32) * scale
    if causal:
        t = s.shape[-1]
        s = jnp.where(jnp.tril(jnp.ones((t, t), bool)), s, -1e30)
    p = jax.nn.softmax(s, axis=-1)
    return jnp.einsum("bhqk,bhkd->bhqd", p.astype(v.dtype), v)


def pallas_flash(q, k, v, *, causal, scale):
    from jax.experimental.pallas.ops.tpu import flash_attention as fa
    groups = q.shape[1] // k.shape[1]
    k, v = jnp.repeat(k, groups, axis=1), jnp.repeat(v, groups, axis=1)
    return fa.flash_attention(q, k, v, causal=causal, sm_scale=scale)


def splash_tables(causal, blocks):
    """Splash's block-mask and next-block tables as formulas of grid indices (i, j)."""
    if causal:
        return (lambda i, j: jnp.where(j < i, 2, jnp.where(j == i, 1, 0)),
                lambda i, j: jnp.where(j <= i, j, 0))
    return (lambda i, j: 2 + 0 * j, lambda i, j: j)


@contextlib.contextmanager
def static_splash(kernel, causal):
    """Splash traced with its SMEM tables replaced by `splash_tables`, checked first."""
    import numpy as np
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as sk
    block_mask, data_next = splash_tables(causal, None)
    info = kernel.fwd_mask_info
    assert info.mask_next is None and info.partial_mask_blocks is None, "a mask with partial-block data"
    real_mask, real_next = np.asarray(info.block_mask), np.asarray(info.data_next)
    i, j = np.meshgrid(np.arange(real_mask.shape[1]), np.arange(real_mask.shape[2]), indexing="ij")
    assert (np.asarray(block_mask(i, j)) == real_mask).all(), "block-mask formula"
    assert (np.asarray(data_next(i, j)) == real_next).all(), "next-block formula"

    def next_nonzero(h, i, j, data_next_ref, block_mask_ref, m_next_ref, next_i=False):
        assert m_next_ref is None and not next_i
        return data_next(i, j), None, block_mask(i, j) > 0, True

    original = sk._next_nonzero
    sk._next_nonzero = next_nonzero
    try:
        yield
    finally:
        sk._next_nonzero = original


def splash_static(shape, block, compute):
    """jax Splash (MHA; GQA K/V repeated to every query head) in its static variant."""
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as sk
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as sm
    _, b, hq, hkv, s, d, causal = shape
    mask = sm.MultiHeadMask([sm.CausalMask((s, s)) if causal else sm.FullMask((s, s))] * hq)
    sizes = sk.BlockSizes(block_q=block, block_kv=block, block_kv_compute=compute)
    kernel = sk.make_splash_mha(mask=mask, head_shards=1, q_seq_shards=1, block_sizes=sizes)

    def attention(q, k, v):
        groups = hq // hkv
        k, v = jnp.repeat(k, groups, axis=1), jnp.repeat(v, groups, axis=1)
        return jax.vmap(kernel)(q * d ** -0.5, k, v)

    q = jax.ShapeDtypeStruct((b, hq, s, d), jnp.bfloat16)
    kv = jax.ShapeDtypeStruct((b, hkv, s, d), jnp.bfloat16)
    with static_splash(kernel, causal):
        return stablehlo(attention, q, kv, kv)


def tokamax_splash(shape, target):
    """tokamax's Splash (MHA; GQA K/V repeated), full or causal (its SMEM work list made
    static, bench/tokamax_static.py); traced for `target`."""
    import numpy as np
    from jax.experimental import topologies
    from tokamax._src.ops.experimental.tpu.splash_attention import splash_attention_kernel as tk
    from tokamax._src.ops.experimental.tpu.splash_attention import splash_attention_mask as tm
    import tokamax_static
    _, b, hq, hkv, s, d, causal = shape
    # tokamax asks the mesh for the TPU generation.
    topology = topologies.get_topology_desc(platform="tpu", topology_name=TOPOLOGIES[target])
    mesh = jax.sharding.Mesh(np.array(topology.devices[:1]), ("x",))
    block = min(1024, s)
    config = tk.SplashConfig(block_q=block, block_kv=block, block_kv_compute=min(512, block), max_logit_const=30.0,
                             use_base2_exp=False)
    with jax.sharding.use_abstract_mesh(mesh.abstract_mesh):
        mask = tm.CausalMask((s, s)) if causal else tm.FullMask((s, s))
        kernel = tk.make_splash_mha(mask=mask, config=config, q_seq_shards=1)
        static = tokamax_static.static_causal(kernel, s // block) if causal else contextlib.nullcontext([hq])
        if not causal:
            assert all(value is None for value in kernel.fwd_mask_info), "tokamax reads a mask table from SMEM"

        def attention(q, k, v):
            groups = hq // hkv
            k, v = jnp.repeat(k, groups, axis=1), jnp.repeat(v, groups, axis=1)
            return jax.vmap(kernel)(q * jnp.asarray(d ** -0.5, q.dtype), k, v)

        q = jax.ShapeDtypeStruct((b, hq, s, d), jnp.bfloat16)
        kv = jax.ShapeDtypeStruct((b, hkv, s, d), jnp.bfloat16)
        with static as calls:
            text = stablehlo(attention, q, kv, kv)
        assert calls == [hq], f"tokamax's forward call was not intercepted: {calls}"
        return text


TOPOLOGIES = {"v6e": "v6e:1x1", "tpu7x": "tpu7x:1x1x1"}


# FlyWheel's transforms one at a time and together (flywheel-opt pass pipelines on a
# flywheel.attention; blocks are flywheel-tile's defaults unless searched).
LOWER = "flywheel-lower-to-mosaic,flywheel-lower-to-stablehlo"
ABLATION = [
    ("baseline", "flywheel-tile," + LOWER),
    ("+exp-softmax", "flywheel-tile,flywheel-exp-softmax," + LOWER),
    ("+exp-softmax, bf16-exp", "flywheel-tile,flywheel-exp-softmax{bf16-exp=true}," + LOWER),
    ("+exp-softmax, conditional-rescale", "flywheel-tile,flywheel-exp-softmax{conditional-rescale=true}," + LOWER),
    ("+exp-softmax, fold-scale=split", "flywheel-tile,flywheel-exp-softmax{fold-scale=split}," + LOWER),
    ("+layout (row sum on MXU)", "flywheel-layout{row-sum=mxu},flywheel-tile," + LOWER),
    ("+layout transposed", "flywheel-layout{orientation=transposed},flywheel-tile," + LOWER),
    ("+sub-blocks (no reordering)", "flywheel-tile{key-splits=2}," + LOWER),
    ("+pipeline", "flywheel-tile{key-splits=2},flywheel-pipeline," + LOWER),
    ("all, fold-scale=exact", "flywheel-layout{target=TARGET},flywheel-tile{key-splits=2},flywheel-exp-softmax,flywheel-pipeline," + LOWER),
    ("all", "flywheel-layout{target=TARGET},flywheel-tile{key-splits=2},flywheel-exp-softmax{fold-scale=split},flywheel-pipeline," + LOWER),
    ("all, fold-scale=always", "flywheel-layout{target=TARGET},flywheel-tile{key-splits=2},flywheel-exp-softmax{fold-scale=always},flywheel-pipeline," + LOWER),
    ("all, lagged-max", "flywheel-layout{target=TARGET},flywheel-tile{key-splits=2},flywheel-exp-softmax{fold-scale=split lagged-max=true},flywheel-pipeline," + LOWER),
    ("all, transposed + lagged-max", "flywheel-layout{orientation=transposed},flywheel-tile{key-splits=2},flywheel-exp-softmax{fold-scale=split lagged-max=true},flywheel-pipeline," + LOWER),
    ("all + auto blocks", "flywheel-tpu{target=TARGET auto-blocks=true}"),
]
DEFAULT_BLOCKS = "flywheel-tpu{target=TARGET}"


def flywheel_program(shape, target, pipeline=ABLATION[-1][1]):
    """flywheel.attention in BNTH through a FlyWheel pass pipeline (by default the whole
    chain with block sizes searched for `target`, the search cached in bench/.cache)."""
    _, b, hq, hkv, s, d, causal = shape
    q = f"tensor<{b}x{hq}x{s}x{d}xbf16>"
    kv = f"tensor<{b}x{hkv}x{s}x{d}xbf16>"
    text = (
        f"func.func @main(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{\n"
        f'  %o = "flywheel.attention"(%q, %k, %v) {{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, '
        f'scale = {d ** -0.5} : f32, causal = {str(causal).lower()}, layout = "BNTH", q_heads = {hq}, '
        f"kv_heads = {hkv}}} : ({q}, {kv}, {kv}) -> {q}\n  return %o : {q}\n}}\n"
    )
    if "auto-blocks=true" in pipeline:
        print(f"  flywheel block search for {shape[0]} on {target} (decisions cached in bench/.cache/blocks)...",
              file=sys.stderr, flush=True)
    result = subprocess.run([str(FLYWHEEL_OPT), "-", f"--pass-pipeline=builtin.module({pipeline.replace('TARGET', target)})"],
                            input=text, capture_output=True, text=True, check=True,
                            env=dict(os.environ, FLYWHEEL_CACHE_DIR=str(CACHE)))
    return result.stdout


def cache_file(program, target, options=()):
    """Where the profile record of `program` on `target` (with `flywheel profile`'s
    `options`) is cached."""
    # Records from before `flywheel profile` counted each of identical ops (libtpu's
    # num_equivalent_hlos) had a key without this mark; they undercount and are not read.
    key = hashlib.sha256((f"libtpu {LIBTPU_VERSION}, " + target + ", equivalent HLOs counted"
                          + "".join(f" {option}" for option in options) + "\n" + program)
                         .encode()).hexdigest()[:24]
    return CACHE / f"{key}.json"


def unestimated_ops(record):
    """The ops of a profile record libtpu did not estimate: kernels (`name.N`) and fusions
    given 0 cycles (the 0-cycle custom calls XLA adds itself are bitcasts). A total that
    leaves them out is no estimate of the program."""
    return [op["hlo_op"] for op in record.get("ops", [])
            if op["cycles"] == 0 and (op["hlo_op"].startswith("name.") or "fusion" in op["hlo_op"])]


def profile(program, target, label, flywheel=FLYWHEEL, options=()):
    """libtpu's total static cycles for `program` on `target` by the `flywheel` binary,
    or (None, why not): it did not profile, or left an op unestimated. Records are cached
    in CACHE by the hash of program and target, failures too: XLA's attention at S=8192
    needs more than this machine's 24 GiB to profile and is killed; retrying costs minutes
    each run."""
    cached = cache_file(program, target, options)
    if not cached.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        # Named per thread: two threads may profile one program at once.
        source = cached.with_suffix(f".{threading.get_ident()}.mlir")
        source.write_text(program)
        print(f"  compiling {label} for {target}...", file=sys.stderr, flush=True)
        result = subprocess.run([str(flywheel), "profile", "--target", target, *options, "--json", str(source)],
                                capture_output=True, text=True)
        source.unlink()
        if result.returncode == 0:
            record = json.loads(result.stdout)
        else:
            errors = [line for line in result.stderr.splitlines() if line.startswith("flywheel: error")]
            record = {"total_cycles": None, "error": (errors or [f"flywheel profile exited with {result.returncode}"])[0]}
        cached.write_text(json.dumps(record))
    record = json.loads(cached.read_text())
    if record.get("error"):
        return None, f"{label} on {target}: {record['error']}"
    unestimated = unestimated_ops(record)
    if unestimated:
        return None, f"{label} on {target}: no estimate (0 cycles) for {', '.join(unestimated)}"
    return record["total_cycles"], None


def cycles(program, target, label):
    """`profile`'s cycles, or None with why not printed."""
    total, why = profile(program, target, label)
    if why:
        print(f"  {why}", file=sys.stderr)
    return total


def flywheel_row(shape, target):
    """FlyWheel's row: flywheel-tpu with its blocks searched up to SEARCH_FLOPS (the search
    compiles five candidates), else with its default blocks."""
    searched = attention_flops(shape) <= SEARCH_FLOPS
    config = CONFIGS["flywheel"] if searched else "flywheel-tpu, default blocks"
    try:
        program = flywheel_program(shape, target, ABLATION[-1][1] if searched else DEFAULT_BLOCKS)
    except subprocess.CalledProcessError:
        # No candidate profiled (libtpu's profiler aborts on all of them).
        config = "flywheel-tpu, default blocks (no search candidate profiled)"
        program = flywheel_program(shape, target, DEFAULT_BLOCKS)
    return {"kernel": "flywheel", "config": config, "shape": shape[0], "target": target,
            "cycles": cycles(program, target, f"flywheel {shape[0]}"), "flops": attention_flops(shape)}


def attention_flops(shape):
    _, b, hq, _, s, d, causal = shape
    flops = 4 * b * hq * s * s * d
    return flops // 2 if causal else flops


KERNEL_NAMES = {"xla matmul (sanity)": "XLA matmul (sanity)", "pallas flash attention": "Pallas flash attention",
                "xla jnp attention": "XLA jnp attention", "flywheel": "**FlyWheel**", "tokamax splash": "tokamax Splash",
                "jax splash static": "jax Splash, static", "jax splash static tuned": "jax Splash, static, tuned"}


def shape_name(shape):
    """mha8_s2048 -> MHA 8, 2048; causal_gqa32_8_s8192_d256 -> causal GQA 32/8, 8192, d256."""
    known = {x[0]: x for group in SHAPES.values() for x in group}
    if shape not in known:
        return shape.replace(" bf16", "")
    _, _, hq, hkv, s, d, causal = known[shape]
    heads = f"MHA {hq}" if hq == hkv else f"GQA {hq}/{hkv}"
    return f"{'causal ' if causal else ''}{heads}, {s}" + (f", d{d}" if d != 128 else "")


def markdown(targets):
    """docs/benchmarks.md's tables, from bench/results.json and bench/ablation.json."""
    number = lambda value: f"{value:,}" if value else "—"
    percent = lambda value: f"{value:.1%}" if value else ""
    ratio = lambda value: f"{value:.2f}x" if value else "—"
    rows = json.loads((ROOT / "bench" / "results.json").read_text())
    header = " | ".join(f"{t} cycles | {t} eff." for t in targets)
    print(f"| kernel | config | shape | {header} | FlyWheel speed-up {' / '.join(targets)} |")
    print("| --- | --- | --- |" + " ---: |" * (2 * len(targets) + 1))
    # Shapes in SHAPES' order (`all` first), kernels in KERNEL_NAMES' order: the table does
    # not depend on which shapes a run with --only rewrote last.
    shape_order = list(dict.fromkeys(shape[0] for group in ("all", "quick", "ablation") for shape in SHAPES[group]))
    kernel_order = list(KERNEL_NAMES)
    position = lambda key, order: order.index(key) if key in order else len(order)
    groups = sorted(dict.fromkeys((r["kernel"], r["shape"]) for r in rows),
                    key=lambda group: (position(group[1], shape_order), position(group[0], kernel_order)))
    for kernel, shape in groups:
        by_target = {r["target"]: r for r in rows if (r["kernel"], r["shape"]) == (kernel, shape)}
        present = [by_target.get(t) for t in targets]
        configs = {t: r["config"] for t, r in zip(targets, present) if r and r["config"]}
        config = next(iter(configs.values()), "") if len(set(configs.values())) <= 1 else "; ".join(f"{t} {c}" for t, c in configs.items())
        cells = " | ".join(f"{number(r and r['cycles'])} | {percent(r and r['efficiency'])}" for r in present)
        speedups = [r and r.get("flywheel_speedup") for r in present]
        speedup = "" if kernel == "flywheel" or "sanity" in kernel else " / ".join(ratio(x) for x in speedups)
        print(f"| {KERNEL_NAMES.get(kernel, kernel)} | {config} | {shape_name(shape)} | {cells} | {speedup} |")
    ablation_path = ROOT / "bench" / "ablation.json"
    if not ablation_path.exists():
        return
    table = json.loads(ablation_path.read_text())
    header = " | ".join(f"{t} cycles | {t} eff. | vs baseline | vs best anchor" for t in targets)
    print(f"\n| transform | shape | {header} |")
    print("| --- | --- |" + " ---: |" * (4 * len(targets)))
    for variant, shape in dict.fromkeys((r["variant"], r["shape"]) for r in table):
        by_target = {r["target"]: r for r in table if (r["variant"], r["shape"]) == (variant, shape)}
        cells = " | ".join(f"{number(r and r['cycles'])} | {percent(r and r['efficiency'])} | {ratio(r and r['vs_baseline'])} | "
                           f"{ratio(r and r['vs_best_anchor'])}" for r in (by_target.get(t) for t in targets))
        print(f"| {variant} | {shape_name(shape)} | {cells} |")


def chart(rows, path):
    """Grouped bars: static cycles (log scale) of each kernel, per shape and target."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for r in rows if "sanity" not in r["kernel"]]
    groups = list(dict.fromkeys((r["shape"], r["target"]) for r in rows))
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    width = 0.8 / len(kernels)
    figure, axes = plt.subplots(figsize=(max(8, 1.6 * len(groups)), 5))
    for index, kernel in enumerate(kernels):
        heights = [next((r["cycles"] or 0 for r in rows if r["kernel"] == kernel and (r["shape"], r["target"]) == group), 0)
                   for group in groups]
        axes.bar([g + index * width for g in range(len(groups))], heights, width, label=kernel)
    axes.set_yscale("log")
    axes.set_ylabel(f"static cycles (libtpu {LIBTPU_VERSION}; lower is faster)")
    axes.set_xticks([g + 0.4 - width / 2 for g in range(len(groups))])
    axes.set_xticklabels([f"{shape}\n{target}" for shape, target in groups], fontsize=8)
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", choices=sorted(SHAPES), default="quick")
    parser.add_argument("--targets", default="v6e,tpu7x")
    parser.add_argument("--ablation", choices=sorted(SHAPES),
                        help="Also compile each FlyWheel transform alone and together at these shapes (bench/ablation.json)")
    parser.add_argument("--only", help="Comma-separated names of --shapes' shapes to run (bench/results.json keeps its "
                        "rows of the shapes and targets a run does not compile)")
    parser.add_argument("--flywheel-only", action="store_true",
                        help="Compile only FlyWheel's programs; the anchors' rows come from bench/results.json "
                        "(valid while libtpu and the anchors are unchanged)")
    parser.add_argument("--variants", help="Semicolon-separated names of the ablation's transforms to compile (the names hold commas); "
                        "bench/ablation.json keeps its rows of the others (valid while their programs are unchanged)")
    parser.add_argument("--markdown", action="store_true",
                        help="Print docs/benchmarks.md's tables from bench/results.json and bench/ablation.json; compile nothing")
    arguments = parser.parse_args()
    targets = arguments.targets.split(",")
    if arguments.markdown:
        markdown(targets)
        return
    shapes = SHAPES[arguments.shapes]
    if arguments.only:
        names = arguments.only.split(",")
        unknown = sorted(set(names) - {shape[0] for shape in shapes})
        if unknown:
            parser.error(f"--only: {', '.join(unknown)} not in --shapes {arguments.shapes}")
        shapes = [shape for shape in shapes if shape[0] in names]
    results = ROOT / "bench" / "results.json"
    previous = json.loads(results.read_text()) if results.exists() else []

    def record(rows):
        """Writes bench/results.json: `rows`, and the earlier rows of shapes and targets not
        run (another --shapes group's, or those --only leaves out); returns that table."""
        run = {(row["shape"], row["target"]) for row in rows}
        table = [row for row in previous if (row["shape"], row["target"]) not in run] + rows
        measure(table)
        results.write_text(json.dumps(table, indent=1) + "\n")
        return table

    if not FLYWHEEL.exists():
        subprocess.run(["cargo", "build", "--release", "-q", "--bin", "flywheel", "--bin", "flywheel-opt"],
                       cwd=ROOT, check=True)

    rows = []
    matmul = stablehlo(lambda a, b: jnp.dot(a, b, preferred_element_type=jnp.float32).astype(jnp.bfloat16),
                       *(jax.ShapeDtypeStruct((8192, 8192), jnp.bfloat16),) * 2)
    for target in targets:
        if arguments.flywheel_only:
            rows.extend(row for row in previous if row["kernel"] == "xla matmul (sanity)" and row["target"] == target)
            continue
        total = cycles(matmul, target, "matmul 8192^3")
        rows.append({"kernel": "xla matmul (sanity)", "config": "", "shape": "8192^3 bf16", "target": target,
                     "cycles": total, "flops": 2 * 8192 ** 3})
    # Cheapest shapes first; results are written after each, so a long run that is cut
    # short still leaves a table of what finished.
    for shape in sorted(shapes, key=attention_flops):
        name, b, hq, hkv, s, d, causal = shape
        q = jax.ShapeDtypeStruct((b, hq, s, d), jnp.bfloat16)
        kv = jax.ShapeDtypeStruct((b, hkv, s, d), jnp.bfloat16)
        scale = d ** -0.5
        if arguments.flywheel_only:
            for target in targets:
                rows.extend(row for row in previous if row["shape"] == name and row["target"] == target
                            and row["kernel"] != "flywheel")
                rows.append(flywheel_row(shape, target))
            table = record(rows)
            continue
        programs = {}
        # Kernels with 128-wide blocks simulate one grid step per 128 x 128 tile: past
        # SMALL_BLOCK_STEPS steps a profile takes over ten minutes, so they are skipped.
        small_block_steps = b * hq * (s // 128) ** 2 // (2 if causal else 1)
        too_slow = {"kernel": None, "config": f"not compiled ({small_block_steps:,} grid steps)", "shape": name,
                    "cycles": None, "flops": attention_flops(shape)}
        if small_block_steps <= SMALL_BLOCK_STEPS:
            programs["pallas flash attention"] = stablehlo(functools.partial(pallas_flash, causal=causal, scale=scale), q, kv, kv)
        else:
            rows.extend(dict(too_slow, kernel="pallas flash attention", target=target) for target in targets)
        # XLA materializes the f32 scores; profiling it at S=8192 (2 GiB of scores) took
        # more than this machine's 24 GiB and was killed, so larger ones are not tried.
        if b * hq * s * s * 4 <= XLA_SCORE_BYTES:
            programs["xla jnp attention"] = stablehlo(functools.partial(xla_attention, causal=causal, scale=scale), q, kv, kv)
        else:
            for target in targets:
                rows.append({"kernel": "xla jnp attention", "config": "not profiled (>24 GiB)", "shape": name,
                             "target": target, "cycles": None, "flops": attention_flops(shape)})
        splash = {f"{block}/{compute}": splash_static(shape, block, compute)
                  for block, compute in SPLASH_BLOCKS
                  if block <= s and (block > 128 or small_block_steps <= SMALL_BLOCK_STEPS)}
        for target in targets:
            rows.append(flywheel_row(shape, target))
            programs_for_target = dict(programs, **{"tokamax splash": tokamax_splash(shape, target)})
            for kernel, program in programs_for_target.items():
                rows.append({"kernel": kernel, "config": CONFIGS.get(kernel, ""), "shape": name, "target": target,
                             "cycles": cycles(program, target, f"{kernel} {name}"),
                             "flops": attention_flops(shape)})
            # Splash at its default blocks, and the best of the tuned ones.
            measured = {blocks: cycles(program, target, f"splash {blocks} {name}") for blocks, program in splash.items()}
            default = SPLASH_BLOCKS[0]
            if f"{default[0]}/{default[1]}" in splash:
                rows.append({"kernel": "jax splash static", "config": f"blocks {default[0]}/{default[1]} (default)",
                             "shape": name, "target": target,
                             "cycles": measured.get(f"{default[0]}/{default[1]}"), "flops": attention_flops(shape)})
            else:
                rows.append(dict(too_slow, kernel="jax splash static", target=target))
            tuned = {blocks: c for blocks, c in measured.items() if c and blocks != f"{default[0]}/{default[1]}"}
            best = min(tuned, key=tuned.get) if tuned else None
            rows.append({"kernel": "jax splash static tuned", "config": f"blocks {best} (best)" if best else "",
                         "shape": name, "target": target, "cycles": tuned.get(best), "flops": attention_flops(shape)})
        table = record(rows)
    rows = table
    report(rows)
    if arguments.ablation:
        variants = [name.strip() for name in arguments.variants.split(";")] if arguments.variants else [variant for variant, _ in ABLATION]
        unknown = sorted(set(variants) - {variant for variant, _ in ABLATION})
        if unknown:
            parser.error(f"--variants: {', '.join(unknown)} not in the ablation")
        ablation(SHAPES[arguments.ablation], targets, rows, variants)
    chart(rows, ROOT / "bench" / "attention.png")


def measure(rows):
    """Fills in each row's efficiency and FlyWheel's speed-up over it."""
    for row in rows:
        peak = PEAK.get(row["target"])
        row["efficiency"] = row["flops"] / (row["cycles"] * peak) if row["cycles"] and peak else None
    for row in rows:
        flywheel = next((r for r in rows if r["kernel"] == "flywheel" and r["shape"] == row["shape"]
                         and r["target"] == row["target"]), None)
        row["flywheel_speedup"] = (row["cycles"] / flywheel["cycles"]
                                   if flywheel and flywheel["cycles"] and row["cycles"] and row["kernel"] != "flywheel"
                                   and "sanity" not in row["kernel"] else None)


def report(rows):
    """Prints the table of `rows`."""
    print(f"{'kernel':<24} {'config':<26} {'shape':<26} {'target':<6} {'static cycles':>14} {'efficiency':>10} {'flywheel speed-up':>18}")
    for row in rows:
        speedup = row["flywheel_speedup"]
        efficiency = f"{row['efficiency']:.1%}" if row["efficiency"] is not None else "n/a"
        print(f"{row['kernel']:<24} {row['config']:<26} {row['shape']:<26} {row['target']:<6} {row['cycles'] or 'failed':>14} "
              f"{efficiency:>10} {(f'{speedup:.2f}x' if speedup else ''):>18}")
    print("efficiency = flops / (static cycles x MXU peak flop/cycle, 524,288 on v6e and tpu7x)")


def ablation(shapes, targets, rows, variants):
    """Each FlyWheel transform alone and together at `shapes`: static cycles, efficiency,
    and speed-up over the baseline kernel and over the best anchor in `rows`. Transforms
    not in `variants` keep their cycles from bench/ablation.json."""
    path = ROOT / "bench" / "ablation.json"
    previous = {(row["variant"], row["shape"], row["target"]): row["cycles"]
                for row in (json.loads(path.read_text()) if path.exists() else [])}
    table = []
    for shape in shapes:
        for target in targets:
            anchors = [r for r in rows if r["shape"] == shape[0] and r["target"] == target and r["cycles"]
                       and r["kernel"] != "flywheel" and "sanity" not in r["kernel"]]
            best = min(anchors, key=lambda r: r["cycles"], default=None)
            baseline = None
            for variant, pipeline in ABLATION:
                if variant not in variants:
                    total = previous.get((variant, shape[0], target))
                else:
                    try:
                        total = cycles(flywheel_program(shape, target, pipeline), target, f"flywheel {variant} {shape[0]}")
                    except subprocess.CalledProcessError:
                        total = None  # the block search profiled no candidate
                baseline = baseline or total
                peak = PEAK.get(target)
                table.append({"variant": variant, "shape": shape[0], "target": target, "cycles": total,
                              "efficiency": attention_flops(shape) / (total * peak) if total and peak else None,
                              "vs_baseline": baseline / total if total and baseline else None,
                              "best_anchor": best["kernel"] + (f" ({best['config']})" if best and best["config"] else "") if best else None,
                              "vs_best_anchor": best["cycles"] / total if best and total else None})
    print(f"\n{'transform':<26} {'shape':<26} {'target':<6} {'static cycles':>14} {'efficiency':>10} {'vs baseline':>12} {'vs best anchor':>15}  best anchor")
    for row in table:
        efficiency = f"{row['efficiency']:.1%}" if row["efficiency"] is not None else "n/a"
        ratio = lambda value: f"{value:.2f}x" if value else ""
        print(f"{row['variant']:<26} {row['shape']:<26} {row['target']:<6} {row['cycles'] or 'failed':>14} {efficiency:>10} "
              f"{ratio(row['vs_baseline']):>12} {ratio(row['vs_best_anchor']):>15}  {row['best_anchor'] or ''}")
    path.write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    main()
