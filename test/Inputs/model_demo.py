"""The whole-model demo's test (run by test/flywheel-model.mlir): a tiny Qwen3-Next-style
decoder stack (python/flywheel/models/qwen3_next.py) through flywheel.jax.optimize for
v6e; prints what FileCheck checks and writes the optimized module to argv[1] for a
deviceless compile."""

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import functools
import pathlib

import jax
import jax.numpy as jnp

import flywheel.jax
from flywheel.models import qwen3_next

# Two GDN and two attention layers over 256 tokens: small enough for the CPU check. The
# GDN layers group 4 value heads over 2 query/key heads, as Qwen3-Next does.
config = qwen3_next.Config(hidden=256, mlp=512, layers=4, pattern="GA", attention_heads=4, kv_heads=2,
                           head_dim=64, gdn_key_heads=2, gdn_value_heads=4, gdn_head_dim=64)
x = jax.ShapeDtypeStruct((1, 256, config.hidden), jnp.bfloat16)
model = functools.partial(qwen3_next.forward, config=config)
optimized = flywheel.jax.optimize(model, qwen3_next.param_specs(config), x, target="v6e", profitability="off")
found = qwen3_next.kernel_kinds(optimized.text)
print("layers attention", config.kinds.count("attention"), "gdn", config.kinds.count("gdn"))
print("kernels", optimized.kernels, "attention", found["attention"], "gdn", found["gdn"])
# The per-token scans became kernels: no while loop is left.
print("while loops", optimized.original.count('"stablehlo.while"'), "->", optimized.text.count('"stablehlo.while"'))
pathlib.Path(sys.argv[1]).write_text(optimized.text)
print(optimized.check(seed=0).strip().splitlines()[-1])
