"""tokamax's causal Splash made static for libtpu's static cycle estimates (its simulator
reads every SMEM / scalar-prefetch value as 0), used by bench/attention.py.

With a causal mask tokamax's forward kernel runs a sparse grid (heads, num_active_blocks):
the second axis walks a work list of the active (query block i, key block j) pairs,
row-major with j <= i, read from SMEM: num_active_blocks[0] (the grid size, a traced
value), active_rows[g] and active_cols[g] (every index map, and j in the kernel),
block_mask[g] (1 partial, 2 full), bounds_start[g] / bounds_end[g] (first / last block of
a row). mask_next is None for a causal mask (its partial blocks use a mask function over
q_sequence, a VMEM input), asserted.

`static_causal` wraps `pallas_call` as tokamax's kernel module sees it while tracing: the
grid size becomes the true count nb(nb+1)/2, and the kernel and every index map get
stand-ins for the scalar-prefetch refs whose `[g]` is a formula of the grid index g
(row i = #{r in 1..nb-1 : g >= r(r+1)/2}, j = g - i(i+1)/2, block_mask = 1 if i == j else
2, bounds_start = j == 0, bounds_end = j == i), after checking each formula against the
arrays tokamax computed for the shape. Nothing of tokamax's code is copied.
"""

import contextlib
import dataclasses
import inspect

import jax
import jax.numpy as jnp
import numpy as np

# Scalar-prefetch operands of tokamax's forward kernel, in order (checked by name below).
PREFETCH = ("active_rows_ref", "active_cols_ref", "mask_next_ref", "bounds_start_ref", "bounds_end_ref",
            "block_mask_ref", "prng_key_ref")


def causal_work_list(nb):
    """The causal work list as formulas of the grid index g (jnp or numpy integers)."""
    def row(g):
        i = 0 * g
        for r in range(1, nb):
            i = i + (g >= r * (r + 1) // 2).astype(g.dtype)
        return i

    def col(g):
        i = row(g)
        return g - i * (i + 1) // 2

    def block_mask(g):
        i, j = row(g), col(g)
        return 1 + (j != i).astype(g.dtype)  # 1 = partial (diagonal), 2 = full

    def bounds_start(g):
        return (col(g) == 0).astype(g.dtype)

    def bounds_end(g):
        return (col(g) == row(g)).astype(g.dtype)

    tables = {"active_rows_ref": row, "active_cols_ref": col, "block_mask_ref": block_mask,
              "bounds_start_ref": bounds_start, "bounds_end_ref": bounds_end}
    return nb * (nb + 1) // 2, tables


def check_formulas(info, nb):
    """Assert the formulas equal the SMEM arrays tokamax built for this mask and blocks."""
    from tokamax._src.ops.experimental.tpu.splash_attention import splash_attention_mask_info as mi
    count, tables = causal_work_list(nb)
    assert info.mask_next is None and info.partial_mask_blocks is None, "mask_next / partial blocks in SMEM"
    assert info.q_sequence is not None, "expected the causal mask function over q_sequence"
    assert np.asarray(info.num_active_blocks).tolist() == [count], ("num_active_blocks", info.num_active_blocks)
    real = {"active_rows_ref": np.asarray(info.active_rows), "active_cols_ref": np.asarray(info.active_cols),
            "block_mask_ref": np.asarray(info.block_mask)}
    starts, ends = mi.find_bounds(info.active_rows)
    real["bounds_start_ref"], real["bounds_end_ref"] = np.asarray(starts), np.asarray(ends)
    g = np.arange(count, dtype=np.int32)
    for name, formula in tables.items():
        assert real[name].shape == (count,), (name, real[name].shape)  # no padding: one shard
        assert (formula(g) == real[name].astype(np.int32)).all(), f"{name} formula"
    return count, tables


class _Table:
    """Stands in for a scalar-prefetch ref: `ref[g]` is the formula's value at g."""

    def __init__(self, name, formula):
        self.name, self.formula = name, formula

    def __getitem__(self, index):
        return self.formula(jnp.asarray(index, jnp.int32))


class _Pallas:
    """tokamax's view of `jax.experimental.pallas`, with pallas_call made static."""

    def __init__(self, pallas, count, tables, calls):
        self._pallas, self._count, self._tables, self._calls = pallas, count, tables, calls

    def __getattr__(self, name):
        return getattr(self._pallas, name)

    def _stand_ins(self, refs):
        assert len(refs) == len(PREFETCH)
        out = []
        for name, ref in zip(PREFETCH, refs):
            if name in self._tables:
                assert ref is not None, name
                out.append(_Table(name, self._tables[name]))
            else:
                assert ref is None, f"{name} is read from SMEM and has no formula"
                out.append(None)
        return out

    def pallas_call(self, kernel, *, grid_spec, **kwargs):
        from jax.experimental.pallas import tpu as pltpu
        names = list(inspect.signature(kernel.func).parameters)[:len(PREFETCH)]
        assert kwargs.get("name") == "splash_mha_fwd_no_residuals", kwargs.get("name")
        assert tuple(names) == PREFETCH, names
        assert isinstance(grid_spec, pltpu.PrefetchScalarGridSpec) and grid_spec.num_scalar_prefetch == len(PREFETCH)
        heads, steps = grid_spec.grid
        assert isinstance(steps, jax.core.Tracer), "expected tokamax's data-dependent grid"
        self._calls.append(heads)

        def static_kernel(*refs):
            return kernel(*self._stand_ins(refs[:len(PREFETCH)]), *refs[len(PREFETCH):])

        def static_map(index_map):
            def mapped(h, g, *refs):
                return index_map(h, g, *self._stand_ins(refs))
            return mapped

        def spec(block_spec):
            if block_spec is None or block_spec.index_map is None:
                return block_spec
            return dataclasses.replace(block_spec, index_map=static_map(block_spec.index_map))

        static_spec = pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=grid_spec.num_scalar_prefetch, grid=(heads, self._count),
            in_specs=[spec(s) for s in grid_spec.in_specs], out_specs=[spec(s) for s in grid_spec.out_specs],
            scratch_shapes=grid_spec.scratch_shapes)
        return self._pallas.pallas_call(static_kernel, grid_spec=static_spec, **kwargs)


@contextlib.contextmanager
def static_causal(kernel, nb):
    """tokamax traced with its causal SMEM tables replaced by formulas (checked first);
    yields the list of intercepted forward calls (their head counts)."""
    from tokamax._src.ops.experimental.tpu.splash_attention import splash_attention_kernel as tk
    count, tables = check_formulas(kernel.fwd_mask_info, nb)
    calls = []
    original = tk.pl
    tk.pl = _Pallas(original, count, tables, calls)
    try:
        yield calls
    finally:
        tk.pl = original
