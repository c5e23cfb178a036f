"""RPA v3 (tpu-inference 0.32.0's Ragged Paged Attention v3), prefill only, made static
for libtpu's static cycle estimates (its simulator reads every SMEM / scalar-prefetch
value as 0), for bench/attention.py.

Install: .venv/bin/pip install --no-deps tpu-inference==0.32.0 (nothing else: the kernel
module needs only jax; `kernel_module()` imports it without running the package's
`__init__`, which imports vllm). libtpu must be loadable next to other processes
(ALLOW_MULTIPLE_LIBTPU_LOAD=1) since tracing asks jax.experimental.topologies for a mesh.

What is traced: tpu-inference's public `ragged_paged_attention` (its jit unwrapped, so the
TPU generation patched per target is not cached across targets) for one sequence of `seq`
new tokens (q_len = kv_len = seq, everything from the new K/V, written to the paged cache
as RPA does; page size 256, identity page table, distribution (0, 1, 1), static
chunk_prefill_size = seq, so its PREFILL kernel does the work). Its inputs are in RPA's API
layout ([tokens, heads, dim]); the module therefore also holds RPA's own layout work
(q transpose/pad, K/V merge, output transpose, the copies the aliased kv cache needs)
and its DECODE and MIXED kernels, which run no sequence (their seq loops are empty,
~1.2K cycles each). The kernel alone is the `RPAp-...` custom call (the second
`name.N` in libtpu's per-op profile). bf16 Q is packed two heads per 32-bit word, so for
MHA (1 query head per KV head) RPA pads to 2 query heads per KV head and does twice the
matmul work: RPA's real behaviour, kept. Block sizes: RPA's own default prefill heuristic
for the target, query block halved while its VMEM estimate exceeds VMEM_BUDGET; the
decode / mixed kernels get the same blocks (their defaults need more VMEM than exists;
the original program OOMs with "Ran out of memory in memory space vmem" otherwise) and
vmem_limit_bytes = VMEM_LIMIT (RPA's default, the whole VMEM, leaves XLA none).

What is made static (`Prefill`, wired in by `static_prefill`, which replaces the kernel
module's `pl` while tracing: `pallas_call` wraps the kernel so its 7 scalar-prefetch refs
are stand-ins, and `pl.loop` records the loop indices in scope so reads can be formulas
of them): every SMEM read. The tables (kv_lens, cu_q_lens, page_indices, distribution)
are checked against the arrays passed to RPA. The double-buffer bookkeeping RPA keeps in
SMEM (sem_ids: which q / kv / out buffer is current; bo_ids: which output DMA each out
buffer still has in flight; bkv_update_ids: which kv-cache write each kv buffer still has
in flight) is written and read back by the kernel; the simulator reads it as 0, so DMA
waits pick the wrong buffer / semaphore and libtpu aborts with "No DMA issue node found
for sync flag". The stand-ins drop those writes and return the value the state has at
each read, a formula of (query block b, key block k) derived from RPA's schedule (see
`Prefill`). Nothing of tpu-inference's code is copied.

Approximation (DRAIN = False): even with exact bookkeeping, libtpu 0.0.50.1's static
profiler aborts with "INTERNAL: No DMA issue node found for sync flag: 522" (or 521
without kv-cache writes) at the kernel's epilogue, the final drain that waits for the
last output DMA of each out buffer and the last kv-cache writes of each kv buffer (flags
521 / 522 are those semaphores by elimination: dropping the cache writes moves the
failure from 522 to 521, and dropping the epilogue's waits removes it). The waits
inside the loops (q / kv prefetch waits, output-buffer reuse, cache-write reuse) are
kept exactly. So the static variant omits the epilogue's waits: the last <= 2 output
DMAs and <= 2 kv-cache page writes are issued but their completion is not waited for,
a slight underestimate (at most a few DMA latencies). DRAIN = True keeps them (and
aborts).

Measured (flywheel profile --target v6e --json, libtpu 0.0.50.1):
  test shape 1 x 8 x 8 heads x 512 tokens x 128, causal, blocks (256, 256, 256, 256):
  module 23,172 cycles, RPA prefill kernel 5,972 (efficiency 2*8*512*512*128 /
  (5,972 * 524288) = 0.17 of the MXU peak for the kernel alone).
  causal_mha8_s2048 / causal_gqa32_8_s8192 on v6e / tpu7x: not measured yet (the
  S=2048 profile did not finish within 15 minutes on the loaded build machine).
  Original (not static) causal_mha8_s2048 on v6e: 109,179 module cycles, each kernel
  ~1,236 (its loops run 0 times when the metadata reads as 0): invalid, as expected.
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


def block_sizes(shape, target, page_size):
    """(bq_sz, bkv_sz, bq_csz, bkv_csz): RPA's own default prefill heuristic for
    `target` (get_default_block_sizes with its TPU generation set), then halved on
    the query side while its VMEM estimate exceeds VMEM_BUDGET."""
    _, b, hq, hkv, s, d, _ = shape
    rk = kernel_module()
    with tpu_version(target):
        sizes = rk.get_default_block_sizes(jnp.bfloat16, jnp.bfloat16, hq, hkv, d, page_size, b * s, 1,
                                           -(-s // page_size), case=rk.RpaCase.PREFILL)
    bq, bkv, bq_c, bkv_c = sizes["bq_sz"], sizes["bkv_sz"], sizes["bq_csz"], sizes["bkv_csz"]
    while rk.get_vmem_estimate_bytes(hkv, hq // hkv, d, bq, bkv, jnp.bfloat16, jnp.bfloat16) > VMEM_BUDGET[target]:
        bq //= 2
        bq_c = min(bq_c, bq)
    return bq, bkv, bq_c, bkv_c


# VMEM per TensorCore and the share of it RPA's own estimate of its scratch may take
# (the rest is left to Mosaic's internal scratch for the score / probability tiles).
VMEM_BYTES = {"v6e": 128 << 20, "tpu7x": 64 << 20}
VMEM_LIMIT = {"v6e": 64 << 20, "tpu7x": 48 << 20}
VMEM_BUDGET = {"v6e": 48 << 20, "tpu7x": 32 << 20}


@contextlib.contextmanager
def tpu_version(target):
    """RPA asks jax.devices() for the TPU generation (this machine has no TPU)."""
    rk = kernel_module()
    original = rk.get_tpu_version
    rk.get_tpu_version = lambda: VERSIONS[target]
    try:
        yield
    finally:
        rk.get_tpu_version = original


def cdiv(a, b):
    return -(-a // b)


class Prefill:
    """The true values of RPA's scalar-prefetch operands for one prefill sequence of
    `s` tokens (q_len = kv_len = s, identity page table, distribution (0, 1, 1)), as
    formulas of the kernel's loop indices.

    Tables (read only): kv_lens[i] = s, cu_q_lens[i] = i s, page_indices[i] = i,
    distribution = (0, 1, 1).

    Bookkeeping (SMEM state the kernel writes and reads back; a formula of the loop
    indices at the point of each read): with nbq = cdiv(s, bq) query blocks, query block
    b visits nkv(b) = cdiv(min(s, (b+1) bq), bkv) key blocks (causal), so its key block
    k is global step t = P[b] + k with P the prefix sums of nkv.
      sem_ids[0] (q buffer) = b % 2, sem_ids[1] (kv buffer) = t % 2, sem_ids[2] (out
      buffer) = b % 2.
      bo_ids[slot], bo_ids[slot + 2] (sequence and query block of the output DMA still
      in flight from out buffer `slot`): the last query block before b with that parity,
      sequence 0 (or -1, -1 if none); after the loop, the last one overall.
      bkv_update_ids[slot + 2 f] (f = 0 sequence, 1 offset, 2 size of the kv-cache
      write still in flight from kv buffer `slot`): writes are issued in the last query
      block only, at every step, and waited for at the next step's prefetch into the
      same buffer, so at step t's prefetch only step t-1's write is pending (if t-1 is
      in the last query block); after the loop the last two steps' writes are.
      Before the loop every entry has its initial value (0 for sem_ids, -1 otherwise).
    """

    def __init__(self, s, page_size, bq, bkv, update_kv_cache=True):
        self.s, self.page_size, self.bkv, self.update = s, page_size, bkv, update_kv_cache
        self.drain = DRAIN
        self.bq = min(bq, s)
        self.nbq = cdiv(s, self.bq)
        self.nkv = [cdiv(min(s, (b + 1) * self.bq), bkv) for b in range(self.nbq)]
        self.prefix = [sum(self.nkv[:b]) for b in range(self.nbq)]
        self.steps = sum(self.nkv)
        self.pages = cdiv(s, page_size)

    def arrays(self):
        """The operands RPA is called with (max_num_seqs = 1)."""
        return dict(kv_lens=np.array([self.s], np.int32), page_indices=np.arange(self.pages, dtype=np.int32),
                    cu_q_lens=np.array([0, self.s], np.int32), distribution=np.array([0, 1, 1], np.int32))

    # Read-only tables.
    def table(self, name, i):
        if name == "distribution_ref":
            assert isinstance(i, int), "distribution read with a traced index"
            return (0, 1, 1)[i]
        i = jnp.asarray(i, jnp.int32)
        if name == "kv_lens_ref":
            return jnp.int32(self.s) + 0 * i
        if name == "cu_q_lens_ref":
            return i * self.s
        if name == "page_indices_ref":
            return i
        raise KeyError(name)

    def check_tables(self, operands):
        """Assert the table formulas equal the arrays RPA was called with."""
        for name, real in operands.items():
            real = np.asarray(real)
            for i in range(real.shape[0]):
                value = self.table(name, i)
                assert int(value) == int(real[i]), (name, i, int(value), int(real[i]))

    # Bookkeeping.
    def step(self, b, k):
        p = 0 * b
        for row in range(1, self.nbq):
            p = p + jnp.where(b == row, self.prefix[row], 0)
        return p + k

    def sem_ids(self, i, loops, after):
        assert isinstance(i, int)
        if not loops:
            assert not after
            return jnp.int32(0)
        if i == 1:
            assert len(loops) == 3, ("kv buffer read outside the kv loop", len(loops))
            return jnp.remainder(self.step(loops[1], loops[2]), 2)
        assert len(loops) == 2, ("q / out buffer read outside the q loop", i, len(loops))
        return jnp.remainder(loops[1], 2)

    def bo_ids(self, i, loops, after):
        i = jnp.asarray(i, jnp.int32)
        slot, field = jnp.remainder(i, 2), i // 2
        if len(loops) == 2:
            b = loops[1]
        elif after and not self.drain:  # epilogue, approximated: see DRAIN
            return jnp.int32(-1)
        elif after:  # epilogue: after the last query block
            b = jnp.int32(self.nbq)
        else:
            return jnp.int32(-1)
        last = b - 1 - jnp.remainder(b - 1 - slot, 2)
        return jnp.where(last >= 0, jnp.where(field == 0, 0, last), -1)

    def bkv_update_ids(self, i, loops, after):
        i = jnp.asarray(i, jnp.int32)
        slot, field = jnp.remainder(i, 2), i // 2
        last_row = self.nbq - 1
        if len(loops) == 3:
            b, k = loops[1], loops[2]
            t = self.step(b, k)
            pending = (b == last_row) & (k >= 1) & (slot == jnp.remainder(t - 1, 2))
            ku = k - 1
        elif after and not self.drain:  # epilogue, approximated: see DRAIN
            return jnp.int32(-1)
        elif after:  # epilogue: the last two steps' writes (those in the last query block)
            n = self.nkv[last_row]
            t_last = self.steps - 1
            # step u = t_last - j (j = 0, 1) lands in buffer u % 2, key block n - 1 - j.
            j = jnp.remainder(t_last - slot, 2)
            ku = n - 1 - j
            pending = ku >= 0
        else:
            return jnp.int32(-1)
        if not self.update:  # no kv-cache writes: nothing is ever pending
            return jnp.int32(-1)
        size = jnp.minimum(self.bkv, self.s - ku * self.bkv)
        value = jnp.where(field == 0, 0, jnp.where(field == 1, ku * self.bkv, size))
        return jnp.where(pending, value, jnp.where(field == 2, 0, -1))


class _Ref:
    """Stands in for one of RPA's SMEM refs: reads are formulas, writes are dropped
    (their values are what the formulas give at the next read)."""

    def __init__(self, name, real, read):
        self.name, self.shape, self.dtype, self._read = name, real.shape, real.dtype, read
        self.writes = 0

    def __getitem__(self, index):
        return self._read(self.name, index)

    def __setitem__(self, index, value):
        self.writes += 1


class _Pallas:
    """RPA's view of `jax.experimental.pallas`: pallas_call's kernel gets stand-ins for
    its scalar-prefetch refs, and pl.loop records the loop indices those read."""

    def __init__(self, pallas, prefill, calls):
        self._pallas, self._prefill, self._calls = pallas, prefill, calls
        self._loops, self._after = [], False

    def __getattr__(self, name):
        return getattr(self._pallas, name)

    def loop(self, lower, upper, **kwargs):
        decorator = self._pallas.loop(lower, upper, **kwargs)

        def wrap(body):
            def recorded(index, *carry):
                self._loops.append(index)
                if len(self._loops) == 2:
                    self._after = True  # the q loop has been traced: later depth-1 reads are the epilogue's
                try:
                    return body(index, *carry)
                finally:
                    self._loops.pop()
            return decorator(recorded)
        return wrap

    def _read(self, name, index):
        prefill = self._prefill
        if name in ("kv_lens_ref", "cu_q_lens_ref", "page_indices_ref", "distribution_ref"):
            return prefill.table(name, index)
        loops = list(self._loops)
        return getattr(prefill, name[:-4])(index, loops, self._after)

    def pallas_call(self, kernel, *, grid_spec, **kwargs):
        import inspect
        from jax.experimental.pallas import tpu as pltpu
        rk = kernel_module()
        assert isinstance(kernel, functools.partial) and kernel.func is rk._ragged_paged_attention_kernel
        names = list(inspect.signature(rk._ragged_paged_attention_kernel_loop).parameters)[1:1 + len(PREFETCH)]
        assert tuple(names) == PREFETCH, names
        assert isinstance(grid_spec, pltpu.PrefetchScalarGridSpec) and grid_spec.num_scalar_prefetch == len(PREFETCH)
        assert tuple(grid_spec.grid) == (1,), grid_spec.grid
        case = kernel.keywords["case"]
        keywords = kernel.keywords
        if case == rk.RpaCase.PREFILL:
            assert min(keywords["bq_sz"], self._prefill.s) == self._prefill.bq, keywords["bq_sz"]
            assert keywords["bkv_sz"] == self._prefill.bkv, keywords["bkv_sz"]
            assert keywords["static_q_len"] == self._prefill.s and keywords["sliding_window"] is None
        call = dict(case=case, refs=None)
        self._calls.append(call)

        def static_kernel(*refs):
            stand_ins = [_Ref(name, ref, self._read) for name, ref in zip(PREFETCH, refs[:len(PREFETCH)])]
            call["refs"] = stand_ins
            self._loops, self._after = [], False
            return kernel(*stand_ins, *refs[len(PREFETCH):])

        inner = self._pallas.pallas_call(static_kernel, grid_spec=grid_spec, **kwargs)

        return inner


@contextlib.contextmanager
def static_prefill(prefill, target):
    """RPA traced for `target` with its SMEM reads replaced by `prefill`'s formulas."""
    rk = kernel_module()
    calls = []
    original = rk.pl
    rk.pl = _Pallas(original, prefill, calls)
    try:
        with tpu_version(target):
            yield calls
    finally:
        rk.pl = original


def stablehlo(fn, *args):
    lowered = jax.jit(fn).trace(*args).lower(lowering_platforms=("tpu",))
    return lowered.compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)


PAGE_SIZE = 256
DRAIN = False


def rpa_v3_program(shape, target, *, static=True, page_size=PAGE_SIZE, blocks=None, update_kv_cache=True):
    """StableHLO (generic form) of RPA v3 prefill for one causal sequence of `shape`
    = (name, batch, q_heads, kv_heads, seq, head_dim, causal), traced for `target`
    ("v6e" or "tpu7x"); `static` replaces its SMEM reads by formulas (Prefill)."""
    from jax.experimental import topologies
    _, b, hq, hkv, s, d, causal = shape
    assert causal and b == 1, "RPA v3 anchor: one causal sequence"
    assert s % page_size == 0
    rk = kernel_module()
    bq, bkv, bq_c, bkv_c = blocks or block_sizes(shape, target, page_size)
    prefill = Prefill(s, page_size, bq, bkv, update_kv_cache)
    arrays = prefill.arrays()
    prefill.check_tables({f"{name}_ref": value for name, value in arrays.items()})
    topology = topologies.get_topology_desc(platform="tpu", topology_name=TOPOLOGIES[target])
    mesh = jax.sharding.Mesh(np.array(topology.devices[:1]), ("x",))
    attention = rk.ragged_paged_attention.__wrapped__  # not its jit: its trace cache ignores the target

    def program(q, k, v, kv_cache):
        out, _ = attention(q, k, v, kv_cache, jnp.asarray(arrays["kv_lens"]), jnp.asarray(arrays["page_indices"]),
                           jnp.asarray(arrays["cu_q_lens"]), jnp.asarray(arrays["distribution"]),
                           sm_scale=d ** -0.5, chunk_prefill_size=s, update_kv_cache=update_kv_cache,
                           p_block_sizes=(bq, bkv, bq_c, bkv_c), vmem_limit_bytes=VMEM_LIMIT[target],
                           # The decode and mixed kernels run no sequence here (distribution (0, 1, 1));
                           # their default blocks do not fit VMEM, so they get the prefill's.
                           d_block_sizes=(1, bkv, 1, bkv_c), m_block_sizes=(bq, bkv, bq_c, bkv_c))
        return out

    q = jax.ShapeDtypeStruct((s, hq, d), jnp.bfloat16)
    kv = jax.ShapeDtypeStruct((s, hkv, d), jnp.bfloat16)
    cache = jax.ShapeDtypeStruct(rk.get_kv_cache_shape(prefill.pages, page_size, hkv, d, jnp.bfloat16), jnp.bfloat16)
    with jax.sharding.use_abstract_mesh(mesh.abstract_mesh):
        context = static_prefill(prefill, target) if static else tpu_version(target)
        with context as calls:
            text = stablehlo(program, q, kv, kv, cache)
    if static:
        cases = [call["case"].name for call in calls]
        assert cases == ["DECODE", "PREFILL", "MIXED"], cases
    return text


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", default="causal_mha8_s2048")
    parser.add_argument("--target", default="v6e")
    parser.add_argument("--original", action="store_true")
    parser.add_argument("--no-update", action="store_true")
    parser.add_argument("--blocks", default=None)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    shapes = {"causal_mha8_s2048": ("causal_mha8_s2048", 1, 8, 8, 2048, 128, True),
              "causal_gqa32_8_s8192": ("causal_gqa32_8_s8192", 1, 32, 8, 8192, 128, True)}
    blocks = tuple(int(x) for x in args.blocks.split(",")) if args.blocks else None
    shape = shapes[args.shape]
    print("blocks", blocks or block_sizes(shape, args.target, PAGE_SIZE), file=sys.stderr)
    text = rpa_v3_program(shape, args.target, static=not args.original, blocks=blocks, update_kv_cache=not args.no_update)
    open(args.out, "w").write(text)
