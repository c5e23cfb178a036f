"""flywheel.jax.optimize on a JAX attention (the Python package's test, run by
test/tools/python.mlir): prints what FileCheck checks."""

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import functools
import pathlib

import jax
import jax.numpy as jnp

import flywheel.jax

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "fixtures"))
from generate import einsum_attention  # noqa: E402

# Causal attention in BNTH (whose kernel programs libtpu's static profiler estimates).
attention = functools.partial(einsum_attention, scale=128 ** -0.5, causal=True, layout="BNTH")
shape = jax.ShapeDtypeStruct((1, 4, 256, 128), jnp.bfloat16)
# At 256 tokens XLA's fused attention is faster: by default it stays; off forces the kernel.
default = flywheel.jax.optimize(attention, shape, shape, shape, target=sys.argv[1])
print("default kernels", default.kernels, "kept", len(default.kept))
optimized = flywheel.jax.optimize(attention, shape, shape, shape, target=sys.argv[1], profitability="off")
print("kernels", optimized.kernels)
print("original kernels", optimized.original.count('"tpu_custom_call"'))
if "--profile" in sys.argv:
    cycles = optimized.profile("v6e")
    print("profiled", sorted(cycles), all(isinstance(c, int) and c > 0 for c in cycles.values()))
print(optimized.check(seed=3).strip().splitlines()[-1])
try:
    flywheel.jax.optimize(attention, shape, shape, shape, target="v6e", key_splits="many")
except flywheel.jax.FlyWheelError as error:
    print("error:", str(error).splitlines()[0])
try:
    flywheel.jax.optimize(attention, shape, shape, shape, target="v7")
except flywheel.jax.FlyWheelError as error:
    print("error:", error)
os.environ["FLYWHEEL_OPT"] = "/nonexistent/flywheel-opt"
try:
    flywheel.jax.optimize(attention, shape, shape, shape)
except flywheel.jax.FlyWheelError as error:
    print("error:", error)
