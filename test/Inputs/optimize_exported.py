"""flywheel.jax.optimize_exported (run by test/tools/python.mlir): a jax.export
round trip through FlyWheel; prints what FileCheck checks and writes the optimized
module (generic form) to argv[1] for a deviceless compile."""

import functools
import os
import pathlib
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp

import flywheel.jax

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "fixtures"))
from generate import einsum_attention  # noqa: E402

attention = functools.partial(einsum_attention, scale=128 ** -0.5, causal=True, layout="BNTH")
shape = jax.ShapeDtypeStruct((1, 4, 256, 128), jnp.bfloat16)
exported = jax.export.export(jax.jit(attention), platforms=["tpu"])(shape, shape, shape)
faster, optimized = flywheel.jax.optimize_exported(exported, target="v6e", profitability="off")
restored = jax.export.deserialize(faster.serialize())
print("kernels", restored.mlir_module().count("tpu_custom_call"), "before", exported.mlir_module().count("tpu_custom_call"))
same = [getattr(restored, field) == getattr(exported, field) for field in
        ("in_avals", "out_avals", "in_tree", "out_tree", "platforms", "calling_convention_version", "nr_devices")]
print("calling convention kept", all(same))
pathlib.Path(sys.argv[1]).write_text(flywheel.jax.generic_form(restored.mlir_module()))
