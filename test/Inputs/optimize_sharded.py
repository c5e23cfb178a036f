"""flywheel.jax.optimize on attention whose heads are sharded over four chips (run by
test/tools/python.mlir): the kernel goes into a manual region, the program profiles
per chip on a 2x2 topology, and the CPU check runs it on four CPU devices."""

import os
import sys

# Four host devices make the four-chip mesh the example shardings name.
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import functools
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

import flywheel.jax

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "fixtures"))
from generate import einsum_attention  # noqa: E402

target, topology = sys.argv[1], sys.argv[2]
mesh = Mesh(np.array(jax.devices()[:4]), ("heads",))
heads = NamedSharding(mesh, PartitionSpec(None, "heads", None, None))
shape = jax.ShapeDtypeStruct((1, 8, 256, 128), jnp.bfloat16, sharding=heads)
attention = functools.partial(einsum_attention, scale=128 ** -0.5, causal=True, layout="BNTH")
optimized = flywheel.jax.optimize(attention, shape, shape, shape, target=target, profitability="off")
print("kernels", optimized.kernels, "manual regions", optimized.text.count('"sdy.manual_computation"'))
cycles = optimized.profile(topology=topology)
print("profiled per chip", all(isinstance(c, int) and c > 0 for c in cycles.values()))
print(optimized.check(seed=1).strip().splitlines()[-1])
