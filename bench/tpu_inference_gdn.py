"""tpu-inference's Gated DeltaNet prefill kernel (v3, `fused_conv1d_gdn`) and tokamax's copy
of it: libtpu static cycle estimates (deviceless, cached in bench/.cache like
bench/attention.py), for comparison with FlyWheel's GDN kernel (bench/gated_delta.py).

    .venv/bin/python bench/tpu_inference_gdn.py [--lengths 512] [--targets v6e,tpu7x]
        [--kernels tpu-inference,tokamax] [--variants original,static] [--dtype float32]

What is traced: the package's public `fused_conv1d_gdn` (tpu-inference: its jit unwrapped;
the kernel modules are imported without running `tpu_inference/__init__.py`, which imports
vllm) for one new sequence of T tokens: query_start_loc (0, T), seq_lens (T), state slot 1
(slot 0 is the null block), distribution (0, 1, 1) (no decode sequences, one prefill), 16
query/key heads, 32 value heads, head dims 128, conv kernel 4, tiles (chunks) of 64 tokens,
compute in f32 (the kernel's default). The kernel is not GDN alone: it fuses the causal
conv1d + SiLU before it and computes beta = sigmoid(b), g = -exp(A_log) softplus(a + dt_bias)
itself (a, b given in f32); its module also holds its BATCHED (decode) kernel, which runs
no tile here, and the wrapper's casts / padding. Rows: the module total and each Pallas
kernel op (`name.N` in libtpu's per-op profile).

Activations (qkv, hence the output) default to f32: with bf16 qkv libtpu 0.0.50.1 fails
to compile the kernel (LLO type check "Expected vector-int16, got vector-bf16packed ...
vunpack"), reported as such with --dtype bfloat16.

Static variant: the kernels read all their sequence metadata from SMEM (a MetadataRef:
num_tiles, the emit_pipeline grid size; per tile a packed record r_base / r_size / s_idx /
first- and last-tile flags, which size and place every DMA; per sequence has_initial_state
and the state slots). libtpu's simulator reads SMEM as 0: num_tiles 0, every DMA of 0 rows.
The harness wraps the package's `outer_kernel` while tracing and hands it a MetadataRef
whose fields are stand-ins: `[i]` returns a formula of the (traced) index, the true value
for this shape (PER_SEQ: num_tiles = ceil(T/64), tile p: r_base 64p, r_size min(64, T-64p),
s_idx 0, first = p == 0, last = p == num_tiles-1; BATCHED: num_tiles 0, records 0; tables:
no initial state, slot 1, offset 0). Each formula is checked against the metadata the
package itself computed (its `compute_*_metadata`, rerun on the same concrete inputs)
before use. The SMEM inputs are still passed (and copied) as before. The BATCHED (decode)
kernel gets decode_tile_size=1: it runs no tile here either way.
Even with true metadata the PER_SEQ kernel still issues DMAs of 0 rows (the state read of
a sequence without initial state, the state write of every tile but the last) and waits
on them; libtpu 0.0.50.1 then aborts ("No DMA issue node found for sync flag"). So the
static variant also wraps `pltpu.make_async_copy` as the kernels' memory_ref module sees
it (`SkipEmpty`): a DMA of traced size starts and is waited for only if that size is > 0
(a no-op on hardware either way).
Nothing of tpu-inference's or tokamax's code is copied.

Outcome with libtpu 0.0.50.1 at 512 tokens (f32 activations, tiles of 64; the script
prints it, nothing here is hard-coded): original (tpu-inference and tokamax, v6e and
tpu7x) -> "No DMA issue node found for sync flag" on the first kernel (BATCHED; with it
made static the abort moves to PER_SEQ); true metadata without SkipEmpty -> the same abort
on PER_SEQ; true metadata + SkipEmpty -> no DMA abort, but after 1-3 min of compiling
(the unguarded abort comes after ~14 s) "Ran out of memory in memory space vmem"
(tpu-inference: 139.04 MiB of 127.94 MiB on v6e, 82.81 of 63.94 on tpu7x, 132.47 on v6e
with tiles of 32; tokamax: 152.40 on v6e): no cycles. Whether that VMEM use is the
kernels' own at 32 unsharded value heads or is caused by the guards was not settled.
At 2048 tokens the static v6e compile passed 22 GiB of host RAM after 10 min (stopped).
"""

import argparse
import contextlib
import importlib
import importlib.util
import json
import pathlib
import sys
import types

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from attention import TOPOLOGIES, cache_file, cycles, stablehlo  # noqa: E402

KEY_HEADS, VALUE_HEADS, DIM, CONV, TILE = 16, 32, 128, 4, 64
PACKAGES = {"tpu-inference": "tpu_inference.kernels.gdn.v3",
            "tokamax": "tokamax._src.ops.causal_conv1d_gated_delta_rule"}


def modules(kernel):
    """(wrapper, metadata) modules of `kernel`; tpu-inference's without its package
    __init__ (vllm)."""
    package = PACKAGES[kernel]
    if kernel == "tpu-inference" and package + ".wrapper" not in sys.modules:
        path = importlib.util.find_spec("tpu_inference").submodule_search_locations[0]
        parts = package.split(".")
        for depth in range(1, len(parts) + 1):
            name = ".".join(parts[:depth])
            if name not in sys.modules:
                stub = types.ModuleType(name)
                stub.__path__ = ["/".join([path] + parts[1:depth])]
                sys.modules[name] = stub
    return importlib.import_module(package + ".wrapper"), importlib.import_module(package + ".metadata")


class Formula:
    """A read-only SMEM stand-in: `ref[i]` is `fn(i)`."""

    def __init__(self, fn):
        self.fn = fn

    def __getitem__(self, index):
        return self.fn(index)


def static_metadata(real, num_tiles, tokens, packed):
    """A MetadataRef like `real` (the package's concrete metadata) with formula fields;
    checks each formula against `real` on the entries the kernel reads."""
    def word(p):
        size = jnp.where(p < num_tiles, jnp.minimum(tokens - TILE * p, TILE), 0)
        first, last = (p == 0) & (num_tiles > 0), p == num_tiles - 1
        return ((size << packed.R_SIZE_SHIFT) | (last.astype(p.dtype) << packed.LAST_TILE_SHIFT)
                | (first.astype(p.dtype) << packed.FIRST_TILE_SHIFT))

    def record(pos):  # records = [r_base, word] per tile; s_idx (the word's high bits) 0
        p = pos // packed.STRUCT_SIZE
        return jnp.where(pos % packed.STRUCT_SIZE == 0, jnp.where(p < num_tiles, TILE * p, 0), word(p))

    tables = {"s_idx_has_initial_state": lambda s: s < 0, "s_idx_to_state_indices": lambda s: s * 0 + 1,
              "s_idx_to_read_offset": lambda s: s * 0, "s_idx_to_read_indices": lambda s: s * 0 + 1}
    with jax.ensure_compile_time_eval():  # the check runs now, outside the kernel
        assert int(real.num_tiles) == num_tiles, (int(real.num_tiles), num_tiles)
        records = np.asarray(real.records)
        checked = packed.STRUCT_SIZE * num_tiles if num_tiles else len(records)
        assert (np.asarray(record(jnp.arange(checked))) == records[:checked]).all(), "record formula"
        for name, fn in tables.items():
            assert np.asarray(fn(jnp.int32(0))) == np.asarray(getattr(real, name))[0], name
    fields = {name: Formula(fn) for name, fn in tables.items()}
    return type(real)(num_tiles=Formula(lambda _: jnp.int32(num_tiles)),
                      records=Formula(lambda pos: record(pos).astype(jnp.int32)), shape=real.shape, **fields)


def dynamic_rows(ref):
    """The product of the traced slice sizes of `ref`'s indexers (an int if none)."""
    from jax.experimental import pallas as pl
    rows = 1
    for transform in getattr(ref, "transforms", ()):
        for index in getattr(transform, "indices", ()):
            if isinstance(index, pl.Slice) and not isinstance(index.size, int):
                rows = rows * index.size
    return rows


class SkipEmpty:
    """`pltpu` as the kernels' memory_ref module sees it, except that a DMA of traced size
    starts and is waited for only when that size is > 0 (an empty DMA moves nothing and
    its wait decrements its semaphore by 0: a no-op on hardware)."""

    def __init__(self, pltpu):
        self.pltpu = pltpu

    def __getattr__(self, name):
        return getattr(self.pltpu, name)

    def make_async_copy(self, src, dst, sem):
        from jax.experimental import pallas as pl
        copy, rows = self.pltpu.make_async_copy(src, dst, sem), dynamic_rows(src)
        if isinstance(rows, int):
            return copy
        return types.SimpleNamespace(start=lambda: pl.when(rows > 0)(copy.start),
                                     wait=lambda: pl.when(rows > 0)(copy.wait))


@contextlib.contextmanager
def static_kernel(kernel, tokens):
    """`kernel` traced with its SMEM metadata replaced by `static_metadata`."""
    wrapper, metadata = modules(kernel)
    memory_ref = importlib.import_module(PACKAGES[kernel] + ".memory_ref")
    originals = {name: getattr(metadata, name) for name in ("compute_batched_seq_metadata", "compute_per_seq_metadata")}
    outer = wrapper.outer_kernel
    real, calls = {}, []

    def recording(name):
        def compute(*, cfg, **kwargs):  # their function again, on the concrete inputs
            values = sequence(tokens)
            distribution = values.pop("distribution")
            values.update(read_indices=values.pop("read_state_indices"), read_offsets=np.zeros(1, np.int32),
                          start_seq=distribution[0], end_seq=distribution[-1 if cfg.mode == "per_seq" else 0])
            with jax.ensure_compile_time_eval():
                real[cfg.mode] = originals[name](cfg=cfg, **{key: values[key] for key in kwargs})
            return originals[name](cfg=cfg, **kwargs)
        return compute

    def outer_kernel(metadata_ref, *refs, cfg, **scratches):
        per_seq = cfg.mode == "per_seq"
        assert cfg.tile_size == TILE or not per_seq
        num_tiles = -(-tokens // TILE) if per_seq else 0
        calls.append((str(cfg.mode), num_tiles))
        return outer(static_metadata(real[cfg.mode], num_tiles, tokens, memory_ref.PackedPIdRecord), *refs, cfg=cfg,
                     **scratches)

    for name in originals:
        setattr(metadata, name, recording(name))
    wrapper.outer_kernel = outer_kernel
    tpu = memory_ref.pltpu
    memory_ref.pltpu = SkipEmpty(tpu)
    try:
        yield calls
    finally:
        for name, fn in originals.items():
            setattr(metadata, name, fn)
        wrapper.outer_kernel = outer
        memory_ref.pltpu = tpu


def sequence(tokens):
    """The ragged metadata of one new sequence of `tokens` tokens in state slot 1."""
    return {"query_start_loc": np.array([0, tokens], np.int32), "state_indices": np.array([1], np.int32),
            "distribution": np.array([0, 1, 1], np.int32), "seq_lens": np.array([tokens], np.int32),
            "read_state_indices": np.array([1], np.int32)}


def program(kernel, tokens, target, static, dtype="float32"):
    """StableHLO (generic form) of `kernel`'s fused_conv1d_gdn for one prefill sequence."""
    from jax.experimental import topologies
    wrapper, _ = modules(kernel)
    gdn = getattr(wrapper.fused_conv1d_gdn, "__wrapped__", wrapper.fused_conv1d_gdn)
    dim = 2 * KEY_HEADS * DIM + VALUE_HEADS * DIM

    def fn(qkv, b, a, conv_state, recurrent_state, conv_weight, a_log, dt_bias):
        meta = {name: jnp.asarray(value) for name, value in sequence(tokens).items()}
        (conv, recurrent), out = gdn(
            qkv, b, a, conv_state, recurrent_state, conv_weight, None, a_log, dt_bias, **meta,
            n_kq=KEY_HEADS, n_v=VALUE_HEADS, d_k=DIM, d_v=DIM, kernel_size=CONV, mixed_tile_size=TILE,
            decode_tile_size=1)
        return out, conv, recurrent

    s = jax.ShapeDtypeStruct
    args = (s((tokens, dim), jnp.dtype(dtype)), s((tokens, VALUE_HEADS), jnp.float32),
            s((tokens, VALUE_HEADS), jnp.float32), s((2, CONV - 1, dim), jnp.float32),
            s((2, VALUE_HEADS, DIM, DIM), jnp.float32), s((dim, 1, CONV), jnp.float32),
            s((VALUE_HEADS,), jnp.float32), s((VALUE_HEADS,), jnp.float32))
    topology = topologies.get_topology_desc(platform="tpu", topology_name=TOPOLOGIES[target])
    mesh = jax.sharding.Mesh(np.array(topology.devices[:1]), ("x",))
    with jax.sharding.use_abstract_mesh(mesh.abstract_mesh):
        context = static_kernel(kernel, tokens) if static else contextlib.nullcontext()
        with context as calls:
            text = stablehlo(fn, *args)
    if static:
        assert calls == [("batched", 0), ("per_seq", -(-tokens // TILE))], calls
    return text


def measure(kernel, tokens, target, variant, dtype):
    label = f"{kernel} {variant}, {tokens} tokens"
    text = program(kernel, tokens, target, variant == "static", dtype)
    total = cycles(text, target, label)
    record = json.loads(cache_file(text, target).read_text())
    ops = {op["hlo_op"]: op["cycles"] for op in record.get("ops", []) if op["hlo_op"].startswith("name.")}
    return total, ops, record.get("error")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="512")  # 2048 static: >22 GiB of host RAM, killed
    parser.add_argument("--targets", default="v6e,tpu7x")
    parser.add_argument("--kernels", default="tpu-inference,tokamax")
    parser.add_argument("--variants", default="original,static")
    parser.add_argument("--dtype", default="float32", help="qkv (activation) dtype")
    args = parser.parse_args()
    print(f"{'kernel':<26} {'tokens':>6} {'target':<6} {'module cycles':>14}  kernel ops (name.N: cycles) / failure")
    for kernel in args.kernels.split(","):
        for tokens in map(int, args.lengths.split(",")):
            for target in args.targets.split(","):
                for variant in args.variants.split(","):
                    try:
                        total, ops, error = measure(kernel, tokens, target, variant, args.dtype)
                    except Exception as exc:  # a trace-time failure is a row too
                        total, ops, error = None, {}, f"trace failed: {type(exc).__name__}: {exc}"[:200]
                    shown = f"{total:,}" if total else "—"
                    detail = error or ", ".join(f"{name}: {c:,}" for name, c in ops.items())
                    print(f"{kernel + ', ' + variant:<26} {tokens:>6} {target:<6} {shown:>14}  {detail}", flush=True)


if __name__ == "__main__":
    main()
