"""Attention anchor benchmark: libtpu static cycles for FlyWheel's kernel and the
anchors at the benchmark shapes, on v6e and tpu7x (deviceless compiles).

    .venv/bin/python bench/attention.py [--shapes quick|all] [--targets v6e,tpu7x]

Prints a table (kernel, shape, static cycles, efficiency against the target's MXU peak,
FlyWheel's speed-up over each anchor), writes bench/results.json and draws
bench/attention.png (static cycles per kernel, shape and target). Every compile is
cached in bench/.cache by the hash of its program and target, so reruns are fast.

Anchors measured today: XLA's plain jnp attention, jax's Pallas flash attention (default
block sizes; it reads nothing from SMEM, so its static estimate is valid), jax's Splash
attention in a static variant (below) at its default blocks (128) and tuned square
blocks (512, 1024 with 512-key compute steps; the best is reported), and a large bf16
matmul as the sanity line; tokamax's Splash without causality (blocks 1024/1024/512,
max_logit_const=30, base-e exp: libtpu 0.0.50.1's profiler aborts on its base-2 kernel,
a bf16 multiply by log2(e)), whose dense grid reads nothing from SMEM. Not measured:
tokamax causal (its sparse work list lives in SMEM) and RPA v3.

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
import json
import os
import pathlib
import subprocess
import sys

import jax
import jax.numpy as jnp

ROOT = pathlib.Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache"
FLYWHEEL = ROOT / "target" / "release" / "flywheel"
FLYWHEEL_OPT = ROOT / "target" / "release" / "flywheel-opt"

# bf16 flop per cycle of the MXUs (DESIGN.md: v6e from the compiler's own ISA). tpu7x's
# has not been derived yet.
PEAK = {"v6e": 524288, "tpu7x": None}

# (name, batch, q heads, kv heads, sequence, head dim, causal)
SHAPES = {
    "quick": [
        ("mha8_s2048", 1, 8, 8, 2048, 128, False),
        ("causal_mha8_s2048", 1, 8, 8, 2048, 128, True),
        ("mha8_s2048_d64", 1, 8, 8, 2048, 64, False),
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


# What each fixed kernel runs with.
CONFIGS = {"pallas flash attention": "default blocks", "flywheel": "flywheel-tpu defaults",
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
    """tokamax's Splash (MHA; GQA K/V repeated), full mask only; traced for `target`."""
    import numpy as np
    from jax.experimental import topologies
    from tokamax._src.ops.experimental.tpu.splash_attention import splash_attention_kernel as tk
    from tokamax._src.ops.experimental.tpu.splash_attention import splash_attention_mask as tm
    _, b, hq, hkv, s, d, causal = shape
    assert not causal
    # tokamax asks the mesh for the TPU generation.
    topology = topologies.get_topology_desc(platform="tpu", topology_name=TOPOLOGIES[target])
    mesh = jax.sharding.Mesh(np.array(topology.devices[:1]), ("x",))
    block = min(1024, s)
    config = tk.SplashConfig(block_q=block, block_kv=block, block_kv_compute=min(512, block), max_logit_const=30.0,
                             use_base2_exp=False)
    with jax.sharding.use_abstract_mesh(mesh.abstract_mesh):
        kernel = tk.make_splash_mha(mask=tm.FullMask((s, s)), config=config, q_seq_shards=1)
        assert all(value is None for value in kernel.fwd_mask_info), "tokamax reads a mask table from SMEM"

        def attention(q, k, v):
            groups = hq // hkv
            k, v = jnp.repeat(k, groups, axis=1), jnp.repeat(v, groups, axis=1)
            return jax.vmap(kernel)(q * jnp.asarray(d ** -0.5, q.dtype), k, v)

        q = jax.ShapeDtypeStruct((b, hq, s, d), jnp.bfloat16)
        kv = jax.ShapeDtypeStruct((b, hkv, s, d), jnp.bfloat16)
        return stablehlo(attention, q, kv, kv)


TOPOLOGIES = {"v6e": "v6e:1x1", "tpu7x": "tpu7x:1x1x1"}


def flywheel_program(shape, target):
    """flywheel.attention in BNTH, through flywheel-tpu."""
    _, b, hq, hkv, s, d, causal = shape
    q = f"tensor<{b}x{hq}x{s}x{d}xbf16>"
    kv = f"tensor<{b}x{hkv}x{s}x{d}xbf16>"
    text = (
        f"func.func @main(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{\n"
        f'  %o = "flywheel.attention"(%q, %k, %v) {{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, '
        f'scale = {d ** -0.5} : f32, causal = {str(causal).lower()}, layout = "BNTH", q_heads = {hq}, '
        f"kv_heads = {hkv}}} : ({q}, {kv}, {kv}) -> {q}\n  return %o : {q}\n}}\n"
    )
    result = subprocess.run([str(FLYWHEEL_OPT), "-", f"--flywheel-tpu=target={target}"], input=text,
                            capture_output=True, text=True, check=True)
    return result.stdout


def cycles(program, target, label):
    """libtpu's total static cycles for `program` on `target`, cached."""
    key = hashlib.sha256((target + "\n" + program).encode()).hexdigest()[:24]
    cached = CACHE / f"{key}.json"
    if cached.exists():
        return json.loads(cached.read_text())["total_cycles"]
    CACHE.mkdir(parents=True, exist_ok=True)
    source = CACHE / f"{key}.mlir"
    source.write_text(program)
    print(f"  compiling {label} for {target}...", file=sys.stderr, flush=True)
    result = subprocess.run([str(FLYWHEEL), "profile", "--target", target, "--json", str(source)],
                            capture_output=True, text=True)
    source.unlink()
    if result.returncode != 0:
        error = [line for line in result.stderr.splitlines() if "flywheel: error" in line]
        print(f"  {label} on {target}: {error[-1] if error else 'failed'}", file=sys.stderr)
        return None
    record = json.loads(result.stdout)
    cached.write_text(json.dumps(record))
    return record["total_cycles"]


def attention_flops(shape):
    _, b, hq, _, s, d, causal = shape
    flops = 4 * b * hq * s * s * d
    return flops // 2 if causal else flops


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
    axes.set_ylabel("static cycles (libtpu 0.0.50.1; lower is faster)")
    axes.set_xticks([g + 0.4 - width / 2 for g in range(len(groups))])
    axes.set_xticklabels([f"{shape}\n{target}" for shape, target in groups], fontsize=8)
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", choices=sorted(SHAPES), default="quick")
    parser.add_argument("--targets", default="v6e,tpu7x")
    arguments = parser.parse_args()
    targets = arguments.targets.split(",")
    if not FLYWHEEL.exists():
        subprocess.run(["cargo", "build", "--release", "-q", "--bin", "flywheel", "--bin", "flywheel-opt"],
                       cwd=ROOT, check=True)

    rows = []
    matmul = stablehlo(lambda a, b: jnp.dot(a, b, preferred_element_type=jnp.float32).astype(jnp.bfloat16),
                       *(jax.ShapeDtypeStruct((8192, 8192), jnp.bfloat16),) * 2)
    for target in targets:
        total = cycles(matmul, target, "matmul 8192^3")
        rows.append({"kernel": "xla matmul (sanity)", "config": "", "shape": "8192^3 bf16", "target": target,
                     "cycles": total, "flops": 2 * 8192 ** 3})
    for shape in SHAPES[arguments.shapes]:
        name, b, hq, hkv, s, d, causal = shape
        q = jax.ShapeDtypeStruct((b, hq, s, d), jnp.bfloat16)
        kv = jax.ShapeDtypeStruct((b, hkv, s, d), jnp.bfloat16)
        scale = d ** -0.5
        programs = {
            "xla jnp attention": stablehlo(functools.partial(xla_attention, causal=causal, scale=scale), q, kv, kv),
            "pallas flash attention": stablehlo(functools.partial(pallas_flash, causal=causal, scale=scale), q, kv, kv),
        }
        splash = {f"{block}/{compute}": splash_static(shape, block, compute)
                  for block, compute in SPLASH_BLOCKS if block <= s}
        for target in targets:
            programs_for_target = dict(programs, **{"flywheel": flywheel_program(shape, target)})
            if not causal:
                programs_for_target["tokamax splash"] = tokamax_splash(shape, target)
            for kernel, program in programs_for_target.items():
                rows.append({"kernel": kernel, "config": CONFIGS.get(kernel, ""), "shape": name, "target": target,
                             "cycles": cycles(program, target, f"{kernel} {name}"),
                             "flops": attention_flops(shape)})
            # Splash at its default blocks, and the best of the tuned ones.
            measured = {blocks: cycles(program, target, f"splash {blocks} {name}") for blocks, program in splash.items()}
            default = SPLASH_BLOCKS[0]
            rows.append({"kernel": "jax splash static", "config": f"blocks {default[0]}/{default[1]} (default)",
                         "shape": name, "target": target,
                         "cycles": measured.get(f"{default[0]}/{default[1]}"), "flops": attention_flops(shape)})
            tuned = {blocks: c for blocks, c in measured.items() if c and blocks != f"{default[0]}/{default[1]}"}
            best = min(tuned, key=tuned.get) if tuned else None
            rows.append({"kernel": "jax splash static tuned", "config": f"blocks {best} (best)" if best else "",
                         "shape": name, "target": target, "cycles": tuned.get(best), "flops": attention_flops(shape)})

    for row in rows:
        peak = PEAK.get(row["target"])
        row["efficiency"] = row["flops"] / (row["cycles"] * peak) if row["cycles"] and peak else None
    print(f"{'kernel':<24} {'config':<26} {'shape':<26} {'target':<6} {'static cycles':>14} {'efficiency':>10} {'flywheel speed-up':>18}")
    for row in rows:
        flywheel = next((r for r in rows if r["kernel"] == "flywheel" and r["shape"] == row["shape"]
                         and r["target"] == row["target"]), None)
        speedup = (row["cycles"] / flywheel["cycles"]
                   if flywheel and flywheel["cycles"] and row["cycles"] and row["kernel"] != "flywheel"
                   and "sanity" not in row["kernel"] else None)
        efficiency = f"{row['efficiency']:.1%}" if row["efficiency"] is not None else "n/a"
        row["flywheel_speedup"] = speedup
        print(f"{row['kernel']:<24} {row['config']:<26} {row['shape']:<26} {row['target']:<6} {row['cycles'] or 'failed':>14} "
              f"{efficiency:>10} {(f'{speedup:.2f}x' if speedup else ''):>18}")
    (ROOT / "bench" / "results.json").write_text(json.dumps(rows, indent=1) + "\n")
    chart(rows, ROOT / "bench" / "attention.png")
    print("efficiency = flops / (static cycles x MXU peak flop/cycle); tpu7x's peak is not derived yet.")


if __name__ == "__main__":
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    main()
