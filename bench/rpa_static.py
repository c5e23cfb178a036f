"""RPA v3 (tpu-inference 0.32.0's Ragged Paged Attention v3), prefill only, made static
for libtpu's static cycle estimates (its simulator reads every SMEM / scalar-prefetch
value as 0), for bench/attention.py.

DOCSTRING-PLACEHOLDER
"""

import contextlib
import functools
import importlib
import importlib.util
import sys
import types

import jax
import jax.numpy as jnp
import numpy as np

TOPOLOGIES = {"v6e": "v6e:1x1", "tpu7x": "tpu7x:1x1x1"}
VERSIONS = {"v6e": 6, "tpu7x": 7}

# Scalar-prefetch operands of RPA v3's kernel, in order (checked by name below).
PREFETCH = ("kv_lens_ref", "page_indices_ref", "cu_q_lens_ref", "distribution_ref", "sem_ids_ref", "bo_ids_ref",
            "bkv_update_ids_ref")
MODULE = "tpu_inference.kernels.ragged_paged_attention.v3.kernel"


def kernel_module():
    """RPA v3's kernel module, imported without running `tpu_inference/__init__.py`
    (which imports vllm; the kernel itself needs only jax)."""
    if MODULE in sys.modules:
        return sys.modules[MODULE]
    spec = importlib.util.find_spec("tpu_inference")
    assert spec is not None, "pip install --no-deps tpu-inference==0.32.0"
    root = spec.submodule_search_locations[0]
    path = root
    for name in ("tpu_inference", "kernels", "ragged_paged_attention", "v3"):
        path = path if name == "tpu_inference" else f"{path}/{name}"
        full = name if name == "tpu_inference" else f"{parent}.{name}"
        if full not in sys.modules:
            package = types.ModuleType(full)
            package.__path__ = [path]
            sys.modules[full] = package
        parent = full
    return importlib.import_module(MODULE)
