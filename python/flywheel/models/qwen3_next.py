"""A small Qwen3-Next-style decoder stack in plain JAX, with seeded random weights.

    from flywheel.models import qwen3_next
    config = qwen3_next.Config(layers=4, pattern="GA")
    params = qwen3_next.init_params(config, seed=0)            # or param_specs(config)
    y = qwen3_next.forward(params, x, config=config)           # x: [B, T, hidden] bf16

Layers follow `config.pattern` cycled over `config.layers` (Qwen3-Next's is "GGGA"):
`G` a Gated DeltaNet token mixer, `A` GQA causal softmax attention with RoPE; each is a
pre-RMSNorm residual block followed by a pre-RMSNorm SwiGLU MLP, and a final RMSNorm
closes the stack. The input is hidden states (no embedding, no LM head).

Each block is inputs -> mixer -> output (`BLOCKS`, `block_output`), so that the mixers,
which FlyWheel replaces, can be lowered and profiled alone. The mixers are written in the
forms FlyWheel raises, from test/fixtures/generate.py (imported, not copied): attention
is `jax.nn.dot_product_attention(..., is_causal=True, implementation="xla")` on RoPE'd
q and k, as its `transformer_block` writes it; the GDN mixer is its `gdn_layer`
(L2-normalized q and k, g = -softplus(a), beta = sigmoid(b)) over `gdn_recurrent`, a
per-token `lax.scan`. (Its `gdn_chunked`, the WY form, is not used: at batch 1
flywheel-raise-gated-delta does not raise it, "U and W do not come from a triangular
solve".) Value heads are grouped as in Qwen3-Next: more value heads than query/key
heads, value head h reading key head h // (Nv / Nk), by `jnp.repeat` of q and k before
the L2 norm (`grouped`).

Left out of Qwen3-Next: the short causal convolution on q, k and v, the output gates
(gated RMSNorm after GDN, sigmoid gate after attention), q/k RMSNorm and partial RoPE in
attention, the mixture of experts (a dense SwiGLU MLP here), embeddings and the LM head.
"""

import base64
import dataclasses
import importlib.util
import os
import re

import jax
import jax.numpy as jnp

from flywheel.jax import REPOSITORY


def _fixture_math():
    """test/fixtures/generate.py as a module. It is imported rather than moved here because
    the committed fixtures' debug locations name its lines. Its import sets XLA_FLAGS (four
    host devices, for its sharded fixture); the caller's setting is put back."""
    path = REPOSITORY / "test" / "fixtures" / "generate.py"
    spec = importlib.util.spec_from_file_location("flywheel_fixture_math", path)
    module = importlib.util.module_from_spec(spec)
    flags = os.environ.get("XLA_FLAGS")
    spec.loader.exec_module(module)
    if flags is None:
        os.environ.pop("XLA_FLAGS", None)
    else:
        os.environ["XLA_FLAGS"] = flags
    return module


generate = _fixture_math()
rms_norm = generate.rms_norm


@dataclasses.dataclass(frozen=True)
class Config:
    """Widths; the defaults are bench/model.py's, chosen so that libtpu's static profile
    estimates the pieces (Qwen3-Next-80B itself: hidden 2048, 48 layers, attention 16/2
    heads x 256, GDN 16 query/key and 32 value heads x 128)."""
    hidden: int = 1024
    mlp: int = 2048
    layers: int = 8
    pattern: str = "GGGA"  # cycled over the layers: G Gated DeltaNet, A attention
    attention_heads: int = 8
    kv_heads: int = 2
    head_dim: int = 128
    gdn_key_heads: int = 4  # query/key heads
    gdn_value_heads: int = 8
    gdn_head_dim: int = 128  # key and value head dim

    @property
    def kinds(self):
        """One of "gdn" / "attention" per layer."""
        names = {"G": "gdn", "A": "attention"}
        return tuple(names[self.pattern[i % len(self.pattern)]] for i in range(self.layers))


def layer_shapes(config, kind):
    """Each weight's shape; norms are f32 (as in the fixtures), matrices bf16."""
    d, f = config.hidden, config.mlp
    shapes = {"norm1": (d,), "norm2": (d,), "w_gate": (d, f), "w_up": (d, f), "w_down": (f, d)}
    if kind == "attention":
        q, kv = config.attention_heads * config.head_dim, config.kv_heads * config.head_dim
        shapes.update(wq=(d, q), wk=(d, kv), wv=(d, kv), wo=(q, d))
    else:
        nk, nv, dh = config.gdn_key_heads, config.gdn_value_heads, config.gdn_head_dim
        shapes.update(w_qkv=(d, (2 * nk + nv) * dh), w_ba=(d, 2 * nv), wo=(nv * dh, d))
    return shapes


def dtype(name):
    return jnp.float32 if name.startswith("norm") else jnp.bfloat16


def layer_specs(config, kind):
    """One layer's parameters as jax.ShapeDtypeStruct, for tracing alone."""
    return {name: jax.ShapeDtypeStruct(shape, dtype(name)) for name, shape in layer_shapes(config, kind).items()}


def param_specs(config):
    """The model's parameters as jax.ShapeDtypeStruct."""
    return {"layers": [layer_specs(config, kind) for kind in config.kinds],
            "final_norm": jax.ShapeDtypeStruct((config.hidden,), jnp.float32)}


def init_params(config, seed=0):
    """Random weights: matrices normal with std fan_in^-1/2, norms ones."""
    def init(key, spec):
        if len(spec.shape) == 1:
            return jnp.ones(spec.shape, spec.dtype)
        return (jax.random.normal(key, spec.shape, jnp.float32) * spec.shape[0] ** -0.5).astype(spec.dtype)

    specs = param_specs(config)
    leaves, tree = jax.tree.flatten(specs)
    keys = jax.random.split(jax.random.key(seed), len(leaves))
    return jax.tree.unflatten(tree, [init(key, spec) for key, spec in zip(keys, leaves)])


def grouped(layer, group):
    """`layer` with q and k repeated to the value heads (value head h reads key head
    h // group). The repeat comes before gdn_layer's L2 norm: flywheel-raise-gated-delta
    does not see through a repeat between the norm and the recurrence ("q is not a
    rearrangement of a tensor with one axis per role")."""
    def run(q, k, v, a, b):
        return layer(jnp.repeat(q, group, axis=2), jnp.repeat(k, group, axis=2), v, a, b)
    return run


def heads(x, w, count, dim):
    """x @ w split into heads: [B, T, count, dim]."""
    return (x @ w).reshape(*x.shape[:2], count, dim)


def attention_inputs(x, p, config):
    """q, k, v for causal GQA attention: RMSNorm, projections, RoPE."""
    h = rms_norm(x, p["norm1"])
    positions = jnp.arange(x.shape[1])
    q = generate.rope(heads(h, p["wq"], config.attention_heads, config.head_dim), positions)
    k = generate.rope(heads(h, p["wk"], config.kv_heads, config.head_dim), positions)
    return q, k, heads(h, p["wv"], config.kv_heads, config.head_dim)


def attention_mixer(q, k, v):
    """Causal GQA softmax attention, as test/fixtures/generate.py's transformer_block
    writes it."""
    return jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation="xla")


def gdn_inputs(x, p, config):
    """q, k (query/key heads), v (value heads), a, b (one per value head, f32), from one
    projection for q, k and v and one for b and a, as Qwen3-Next's in_proj_qkvz and
    in_proj_ba (without z). (With a projection each, tpu7x's static profile aborts on
    them at 2048 tokens.)"""
    h = rms_norm(x, p["norm1"])
    nk, nv, dh = config.gdn_key_heads, config.gdn_value_heads, config.gdn_head_dim
    q, k, v = jnp.split(h @ p["w_qkv"], [nk * dh, 2 * nk * dh], axis=-1)
    b, a = jnp.split((h @ p["w_ba"]).astype(jnp.float32), 2, axis=-1)
    split = lambda t, count: t.reshape(*x.shape[:2], count, dh)
    return split(q, nk), split(k, nk), split(v, nv), a, b


def gdn_mixer(q, k, v, a, b):
    """Gated DeltaNet per token (generate.py's gdn_layer over gdn_recurrent), its output
    alone; value heads grouped over the query/key heads."""
    layer = grouped(generate.gdn_layer(generate.gdn_recurrent), v.shape[2] // q.shape[2])
    return layer(q, k, v, a, b)[0]


def block_output(x, o, p):
    """The mixer's output projected back and added, then the pre-norm SwiGLU MLP and its
    residual."""
    x = x + o.reshape(*x.shape[:2], -1) @ p["wo"]
    h = rms_norm(x, p["norm2"])
    return x + (jax.nn.silu(h @ p["w_gate"]) * (h @ p["w_up"])) @ p["w_down"]


BLOCKS = {"attention": (attention_inputs, attention_mixer), "gdn": (gdn_inputs, gdn_mixer)}


def block(kind, x, p, config):
    """One layer of `kind` ("attention" or "gdn")."""
    inputs, mixer = BLOCKS[kind]
    return block_output(x, mixer(*inputs(x, p, config)), p)


def forward(params, x, *, config):
    """The decoder stack on hidden states x [B, T, hidden] (bf16)."""
    for kind, p in zip(config.kinds, params["layers"]):
        x = block(kind, x, p, config)
    return rms_norm(x, params["final_norm"])


KERNEL_KINDS = {"kernel": "attention", "gated_delta_kernel": "gdn"}


def kernel_kinds(text):
    """How many FlyWheel kernels of each kind ("attention", "gdn") an optimized program
    holds, by the name of the function in each kernel's Mosaic module (base64 in the
    custom call's backend_config)."""
    counts = {"attention": 0, "gdn": 0}
    for body in re.findall(r"\\22body\\22: \\22([A-Za-z0-9+/=]+)\\22", text):
        name = re.search(r'sym_name = "([^"]*)"', base64.b64decode(body).decode()).group(1)
        counts[KERNEL_KINDS[name]] += 1
    return counts
