"""flywheel.jax.optimize warns when it finds attention it leaves without a kernel, with the
remarks that say why (test/tools/python.mlir): prints what FileCheck checks."""

import os
import warnings

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp

import flywheel.jax


def scaled_probabilities(q, k, v):
    """Not attention: the probabilities are scaled between the softmax and P·V."""
    p = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, k) * 0.125, axis=-1)
    return jnp.einsum("bhqk,bkhd->bqhd", p * 1.1, v)


def causal(q, k, v):
    return jax.nn.dot_product_attention(q, k, v, is_causal=True)


x = jax.ShapeDtypeStruct((1, 256, 2, 64), jnp.float32)
# The causal attention, short and f32, keeps XLA's ops by default (no warning: its kernel
# would be slower), and gets its kernel with profitability off.
for fn, options in ((scaled_probabilities, {}), (causal, {}), (causal, {"profitability": "off"})):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        optimized = flywheel.jax.optimize(fn, x, x, x, **options)
    print(f"{fn.__name__}{options or ''}: {optimized.kernels} kernel(s) of {optimized.candidates} candidate(s), "
          f"{len(optimized.kept)} kept, {len(caught)} warning(s)")
    for warning in caught:
        print(f"warning: {warning.category.__name__}: {warning.message}")
    print("remarks:", " | ".join(optimized.remarks))
