"""Does strip-mining the online-softmax update pay under libtpu's static cycles? A probe
for issue 6's "keep the scores in vregs" idea, as a small Pallas flash-attention kernel
(written here, not FlyWheel's): per grid step (head, query block, key block) S = Q Kᵀ
into VMEM, then the update (running max, exp2, row sum, rescale of the accumulator, P
to bf16) either on the whole score tile at once or in an `fori_loop` over strips of
rows (each strip small enough to stay in vregs), then P V. Q arrives pre-scaled by
scale x log2(e); m and l are lane-replicated [rows, 128].

    .venv/bin/python bench/softmax_strips.py [--length 2048] [--blocks 1024,2048] [--target v6e]

Prints one row per variant: static cycles and efficiency against 524,288 flop/cycle
(MHA 8 heads, head dim 128, bf16, no mask). Compiles are cached in bench/.cache.
"""

import argparse
import functools
import math
import os
import sys

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention import PEAK, cycles, stablehlo  # noqa: E402

HEADS, DIM = 8, 128
# (strip rows, unroll): 0 rows is the whole tile at once.
VARIANTS = [(0, 1), (16, 2), (32, 1), (128, 1), (256, 1)]


def update(s, m_prev, l_prev, acc_prev):
    """One online-softmax update of rows: new m, l, rescaled accumulator and P."""
    m = jnp.maximum(m_prev, s.max(axis=-1, keepdims=True))
    alpha = jnp.exp2(m_prev - m)
    p = jnp.exp2(s - m[:, :1])
    return m, alpha * l_prev + p.sum(axis=-1, keepdims=True), alpha[:, :1] * acc_prev, p


def kernel(q_ref, k_ref, v_ref, o_ref, m_ref, l_ref, acc_ref, s_ref, p_ref, *, strip, unroll):
    @pl.when(pl.program_id(2) == 0)
    def _():
        m_ref[...] = jnp.full(m_ref.shape, -jnp.inf, jnp.float32)
        l_ref[...] = jnp.zeros(l_ref.shape, jnp.float32)
        acc_ref[...] = jnp.zeros(acc_ref.shape, jnp.float32)

    s = jax.lax.dot_general(q_ref[0, 0], k_ref[0, 0], (((1,), (1,)), ((), ())), preferred_element_type=jnp.float32)
    if strip == 0:
        m_ref[...], l_ref[...], acc, p = update(s, m_ref[...], l_ref[...], acc_ref[...])
        p = p.astype(p_ref.dtype)
    else:
        s_ref[...] = s

        def body(r, carry):
            rows = pl.ds(pl.multiple_of(r * strip, strip), strip)
            m_ref[rows, :], l_ref[rows, :], acc_ref[rows, :], p = update(s_ref[rows, :], m_ref[rows, :], l_ref[rows, :], acc_ref[rows, :])
            p_ref[rows, :] = p.astype(p_ref.dtype)
            return carry

        jax.lax.fori_loop(0, s.shape[0] // strip, body, 0, unroll=unroll)
        acc, p = acc_ref[...], p_ref[...]
    acc_ref[...] = acc + jnp.dot(p, v_ref[0, 0], preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _():
        o_ref[0, 0] = (acc_ref[...] / l_ref[...][:, :1]).astype(o_ref.dtype)


def attention(q, k, v, *, block_q, block_kv, strip, unroll):
    _, heads, length, dim = q.shape
    q = (q.astype(jnp.float32) * (dim ** -0.5 * math.log2(math.e))).astype(q.dtype)
    f32 = jnp.float32
    # The score and P tiles go through VMEM scratch only in the strips' loop.
    tile = (block_q, block_kv) if strip else (16, 128)
    return pl.pallas_call(
        functools.partial(kernel, strip=strip, unroll=unroll),
        grid=(heads, length // block_q, length // block_kv),
        in_specs=[pl.BlockSpec((1, 1, block_q, dim), lambda h, i, j: (0, h, i, 0)),
                  pl.BlockSpec((1, 1, block_kv, dim), lambda h, i, j: (0, h, j, 0)),
                  pl.BlockSpec((1, 1, block_kv, dim), lambda h, i, j: (0, h, j, 0))],
        out_specs=pl.BlockSpec((1, 1, block_q, dim), lambda h, i, j: (0, h, i, 0)),
        out_shape=jax.ShapeDtypeStruct(q.shape, q.dtype),
        scratch_shapes=[pltpu.VMEM((block_q, 128), f32), pltpu.VMEM((block_q, 128), f32), pltpu.VMEM((block_q, dim), f32),
                        pltpu.VMEM(tile, f32), pltpu.VMEM(tile, jnp.bfloat16)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel", "arbitrary"),
                                             vmem_limit_bytes=100 * 1024 * 1024),
    )(q, k, v)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=2048)
    parser.add_argument("--blocks", default="1024,2048", help="query block, key block")
    parser.add_argument("--target", default="v6e", choices=sorted(PEAK))
    args = parser.parse_args()
    block_q, block_kv = map(int, args.blocks.split(","))
    spec = jax.ShapeDtypeStruct((1, HEADS, args.length, DIM), jnp.bfloat16)
    flops = 4 * HEADS * args.length ** 2 * DIM
    print(f"{'update':<28} {'static cycles':>14} {'eff.':>6}")
    for strip, unroll in VARIANTS:
        fn = functools.partial(attention, block_q=block_q, block_kv=block_kv, strip=strip, unroll=unroll)
        name = "whole tile" if strip == 0 else f"strips of {strip} rows, unroll {unroll}"
        total = cycles(stablehlo(fn, spec, spec, spec), args.target, f"softmax {name}, {args.length} tokens")
        shown = (f"{total:>14,} {flops / (total * PEAK[args.target]):>6.1%}") if total else f"{'no estimate':>14}"
        print(f"{name:<28} {shown}")


if __name__ == "__main__":
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    main()
