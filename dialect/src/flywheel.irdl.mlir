// The FlyWheel dialect, defined in IRDL and loaded into every FlyWheel context.
//
// IRDL checks the op structure (operands, results, required attributes and their
// kinds). What IRDL cannot say (shapes agreeing, head counts dividing, dtypes, the
// optional attributes) is checked by `flywheel_dialect::verify`, which reports at the
// op's location. IRDL ops always print in generic form.
//
// Axis letters in `layout` (a permutation of "BTNH", names as in jax.nn):
//   B batch, T sequence, N heads, H head dimension.
//
// =====================================================================================
// flywheel.attention: softmax attention.
//
//   operands: q [B, Tq, Nq, D], k [B, Tk, Nkv, D], v [B, Tk, Nkv, Dv]  (all in `layout`)
//             mask?  i1 [B|1, Nq|1, Tq, Tk]   true = the key may be attended
//             bias?  float [B|1, Nq|1, Tq, Tk] additive logit bias
//             q_segment_ids? int [B, Tq], kv_segment_ids? int [B, Tk] (both or neither)
//             `operandSegmentSizes` gives which optional operands are present.
//   result:   o [B, Tq, Nq, Dv] in `layout`, its element type as written.
//   required attributes:
//     scale : f32      multiplies q.k
//     causal : i1      key j is allowed for query i only if j <= i (top-left aligned)
//     layout : string  axis order of q, k, v and o
//     q_heads, kv_heads : i64   Nq and Nkv; Nkv divides Nq and query head h reads
//                               key/value head h / (Nq / Nkv) (GQA, MQA when Nkv = 1)
//   optional attributes:
//     window : array<i64: left, right>  key j allowed for query i only if
//                                       i - left <= j <= i + right
//     logit_soft_cap : f32 (c > 0)      s <- c * tanh(s / c), before bias and masks
//
//   Semantics, per batch b, query head h, query i:
//     s_j  = f32(scale * sum_d q[i,d] * k[j,d])   products exact, f32 accumulation
//     s_j  = soft-cap(s_j) + bias[i,j]            (each only if present)
//     allowed_j = mask[i,j] and causal and window and q_seg[i] == kv_seg[j]
//     p_j  = exp(s_j - m) / sum_{allowed} exp(s_l - m) for allowed j, 0 otherwise,
//            m = max over allowed s_l, all in f32; a row with no allowed key takes
//            p_j = 1 / Tk (JAX's finite mask fill gives the same)
//     o[i] = sum_j round(p_j to v's element type) * v[j], f32 accumulation, rounded
//            once to o's element type.
//   A program raised into this op may have rounded its scores to bf16 before the softmax
//   (JAX's bf16 einsum); the op does not, so it is at least as precise as its source.
irdl.dialect @flywheel {
  irdl.operation @attention {
    // Each constraint value binds one type or attribute, so every operand and attribute
    // gets its own (sharing one would force them to be equal).
    %q = irdl.base "!builtin.tensor"
    %k = irdl.base "!builtin.tensor"
    %v = irdl.base "!builtin.tensor"
    %mask = irdl.base "!builtin.tensor"
    %bias = irdl.base "!builtin.tensor"
    %q_segment_ids = irdl.base "!builtin.tensor"
    %kv_segment_ids = irdl.base "!builtin.tensor"
    %o = irdl.base "!builtin.tensor"
    %scale = irdl.base "#builtin.float"
    %causal = irdl.base "#builtin.integer"
    %layout = irdl.base "#builtin.string"
    %q_heads = irdl.base "#builtin.integer"
    %kv_heads = irdl.base "#builtin.integer"
    irdl.operands(q: %q, k: %k, v: %v, mask: optional %mask, bias: optional %bias,
                  q_segment_ids: optional %q_segment_ids,
                  kv_segment_ids: optional %kv_segment_ids)
    irdl.results(o: %o)
    irdl.attributes {
      "scale" = %scale,
      "causal" = %causal,
      "layout" = %layout,
      "q_heads" = %q_heads,
      "kv_heads" = %kv_heads
    }
  }

// =====================================================================================
// flywheel.gated_delta: Gated DeltaNet (delta-rule linear attention with a decay gate).
//
//   operands: q [B, T, Nk, Dk], k [B, T, Nk, Dk], v [B, T, Nv, Dv]  (in `layout`)
//             g    f32 [B, T, Nv] log decay (g <= 0), beta f32 [B, T, Nv] write strength
//             (g and beta in `layout` with the H axis dropped)
//             initial_state? f32 [B, Nv, Dk, Dv]
//   results:  o [B, T, Nv, Dv] in `layout`, final_state f32 [B, Nv, Dk, Dv]
//   required attributes:
//     scale : f32        multiplies q
//     chunk_size : i64   the chunk length kernels use (a power of two); no effect on
//                        the mathematical result
//     layout : string    axis order of q, k, v and o
//   optional attributes:
//     precision : string "DEFAULT", "HIGH" or "HIGHEST": what the source's products asked
//                        for, as a StableHLO dot_general's precision_config says it
//                        (DEFAULT: one bf16 pass of the MXU, each f32 operand rounded to
//                        bf16); absent means HIGHEST, f32 throughout as below
//     readout_precision : string  the same for the products that read the state with q
//                        (o_t below), where the source asked otherwise for them
//   Nk divides Nv; value head h reads query/key head h / (Nv / Nk).
//
//   Semantics, per batch b and value head h, state S (Dk x Dv, f32) = initial_state or 0:
//     for t = 0 .. T-1:
//       S   = exp(g_t) * S
//       u   = beta_t * (v_t - S^T k_t)
//       S   = S + k_t u^T
//       o_t = S^T (scale * q_t)
//   all in f32 from the inputs' values (the products at `precision`); o rounded once
//   to o's element type;
//   final_state = S after the last token.
  irdl.operation @gated_delta {
    %q = irdl.base "!builtin.tensor"
    %k = irdl.base "!builtin.tensor"
    %v = irdl.base "!builtin.tensor"
    %g = irdl.base "!builtin.tensor"
    %beta = irdl.base "!builtin.tensor"
    %initial_state = irdl.base "!builtin.tensor"
    %o = irdl.base "!builtin.tensor"
    %final_state = irdl.base "!builtin.tensor"
    %scale = irdl.base "#builtin.float"
    %chunk_size = irdl.base "#builtin.integer"
    %layout = irdl.base "#builtin.string"
    irdl.operands(q: %q, k: %k, v: %v, g: %g, beta: %beta,
                  initial_state: optional %initial_state)
    irdl.results(o: %o, final_state: %final_state)
    irdl.attributes {
      "scale" = %scale,
      "chunk_size" = %chunk_size,
      "layout" = %layout
    }
  }

// =====================================================================================
// Tile IR: what `flywheel-tile` makes of a flywheel.attention, what the FlyWheel
// transforms rewrite, and what `flywheel-lower-to-mosaic` serializes for libtpu.
//
// flywheel.attention_kernel: a flywheel.attention as a Mosaic kernel call.
//   operands: q [B, Nkv, Tq' x group, D] (query t of group head g at row t x group + g),
//             k, v [B, Nkv, Tk', D|Dv], mask? i32 and bias? [B|1, Nkv|1, rows, Tk'] laid
//             out like q (or [B|1, 1, Tq', Tk'] when shared by the heads), lengths
//             padded to whole blocks (`operandSegmentSizes` says which are present).
//   result:   o [B, Nkv, Tq' x group, Dv], laid out like q.
//   attributes: kernel : the symbol of the kernel module, a `builtin.module` at the top
//             of the program: the kernel function (grid, windows and dimension
//             semantics as Mosaic spells them: `iteration_bounds`, `window_params`,
//             ...), its index maps, `stable_mosaic.version`. The per-grid-step program
//             is upstream vector/arith/math/scf ops plus flywheel.matmul; scale, max,
//             exp, sum, rescale, normalization and masks are separate ops.
//             flops, transcendentals, bytes_accessed : i64, the cost libtpu is told.
  irdl.operation @attention_kernel {
    %q = irdl.base "!builtin.tensor"
    %k = irdl.base "!builtin.tensor"
    %v = irdl.base "!builtin.tensor"
    %mask = irdl.base "!builtin.tensor"
    %bias = irdl.base "!builtin.tensor"
    %o = irdl.base "!builtin.tensor"
    %flops = irdl.base "#builtin.integer"
    %transcendentals = irdl.base "#builtin.integer"
    %bytes_accessed = irdl.base "#builtin.integer"
    %kernel = irdl.base "#builtin.symbol_ref"
    irdl.operands(q: %q, k: %k, v: %v, mask: optional %mask, bias: optional %bias)
    irdl.results(o: %o)
    irdl.attributes {
      "flops" = %flops,
      "transcendentals" = %transcendentals,
      "bytes_accessed" = %bytes_accessed,
      "kernel" = %kernel
    }
  }

// flywheel.gated_delta_kernel: a flywheel.gated_delta as a Mosaic kernel call.
//   operands: q, k [B, Nk, T', Dk], v [B, Nv, T', Dv] (T' the length padded to whole
//             chunks), g and beta f32 [B, Nv / H, T' / C, 1, H x C] (one row per chunk
//             and block of H value heads, the heads one grid step serves),
//             initial_state? f32 [B, Nv, Dk, Dv], keys_transposed? (K again, as
//             [B, Nk, Dk, T']: Kᵀ for the state updates).
//   results:  o [B, Nv, T', Dv], final_state f32 [B, Nv, Dk, Dv].
//   attributes: kernel, flops, transcendentals, bytes_accessed as for attention_kernel.
  irdl.operation @gated_delta_kernel {
    %q = irdl.base "!builtin.tensor"
    %k = irdl.base "!builtin.tensor"
    %v = irdl.base "!builtin.tensor"
    %g = irdl.base "!builtin.tensor"
    %beta = irdl.base "!builtin.tensor"
    %initial_state = irdl.base "!builtin.tensor"
    %keys_transposed = irdl.base "!builtin.tensor"
    %o = irdl.base "!builtin.tensor"
    %final_state = irdl.base "!builtin.tensor"
    %flops = irdl.base "#builtin.integer"
    %transcendentals = irdl.base "#builtin.integer"
    %bytes_accessed = irdl.base "#builtin.integer"
    %kernel = irdl.base "#builtin.symbol_ref"
    irdl.operands(q: %q, k: %k, v: %v, g: %g, beta: %beta, initial_state: optional %initial_state, keys_transposed: optional %keys_transposed)
    irdl.results(o: %o, final_state: %final_state)
    irdl.attributes {
      "flops" = %flops,
      "transcendentals" = %transcendentals,
      "bytes_accessed" = %bytes_accessed,
      "kernel" = %kernel
    }
  }

// flywheel.matmul: one MXU product in a kernel, acc + lhs . rhs (rhs^T when
// `transpose_rhs`), 2-D vectors; bf16 or f32 operands, products exact, f32 accumulator.
  irdl.operation @matmul {
    %lhs = irdl.base "!builtin.vector"
    %rhs = irdl.base "!builtin.vector"
    %acc = irdl.base "!builtin.vector"
    %result = irdl.base "!builtin.vector"
    %transpose_rhs = irdl.base "#builtin.integer"
    irdl.operands(lhs: %lhs, rhs: %rhs, acc: %acc)
    irdl.results(result: %result)
    irdl.attributes {
      "transpose_rhs" = %transpose_rhs
    }
  }
}
