//! The chunked Gated DeltaNet kernel as FlyWheel tile IR, for `flywheel-tile`: a kernel
//! module like `mosaic_attention.rs` writes, whose grid is (batch, value head, chunk) with
//! the chunk axis sequential (`arbitrary`), carrying the f32 state S (Dk x Dv) in VMEM
//! scratch. Per chunk of C tokens (DESIGN.md's chunk math; i, j positions in the chunk):
//!
//!   γ = cumsum(g)   D_ij = exp(γ_i - γ_j) for j <= i, else 0
//!   A = strictly_lower(β_i (k_i·k_j) D_ij)   T = (I + A)⁻¹  (forward substitution)
//!   U = T (β V)   W = T (β e^γ K)                      -- chunk-parallel
//!   V' = U - W S   O = (scale e^γ Q) S + (scale Q Kᵀ ⊙ D) V'
//!   S = e^{γ_C} S + (e^{γ_C - γ} K)ᵀ V'               -- the serial recurrence
//!
//! The forward substitution is an `scf.for` of X ← I - A X from X = I: row i of X is
//! final after i steps (A is strictly lower triangular), C - 1 steps in all;
//! `flywheel-tri-inverse` replaces it by blocked inversion. Per-token gates arrive as rows
//! ([1, C] per chunk): β, and γ with beside it γ_C repeated over the chunk (the chunk-local
//! cumsum is taken outside the kernel, at full f32 precision: inside, it took two small
//! products per chunk, each loading a weight tile into the MXU); a row becomes the column
//! a tile's rows are scaled by through a transpose of its broadcast. Token t of the padded
//! tail has g = β = 0 and k = v = 0: the state passes it unchanged.
//!
//! A grid step serves `heads_per_step` value heads stacked into the matmul rows (row r is
//! position r % C of head r / C): the chunk-parallel part is a B x B program (B =
//! `block_heads` x C rows, by default 128) per diagonal block of the step's R x R tile (R =
//! heads x C), whose masks keep each head's C x C diagonal block, so A is block diagonal
//! and one forward substitution of C - 1 steps inverts every head's block of it;
//! `flywheel-tri-inverse` solves the blocks' (and the chunks') inverses together. The
//! state products run per head, stage by stage across the heads. Q and K are loaded once per key head and
//! repeated for the value heads reading it; Kᵀ, for the state updates, is one transpose
//! per key head and chunk, or with `keys_transposed` sliced from a second copy of K laid
//! out [B, Nk, Dk, T'] (transposed once in HBM, outside the kernel). q, k, v and the
//! output are [B, N, T', D], or token-major [B, T', N x D], each head's [C, D] tile at
//! its own lanes (`token_major_inputs`, `token_major_output`): from and to BTNH that is
//! XLA's relayout of the tiles, where head-major windows take a transpose. With
//! `shared_operands`, products that share an operand are one product: T [βV | βe^γK]
//! and, per head, [W; e^γ Q] S. With `exp2_gates`, the gates are taken in base 2
//! (γ · log2(e) and γ_C · log2(e), a multiply of each gate row) and every exponential
//! of a gate sum is an `exp2`, meant to save the multiply by log2(e) each `exp` of the
//! B x B decay tile carries; libtpu's static cycles show no gain, so it is off by default.

use crate::{
    attention::whole_blocks,
    writer::{
        f32s, index_map, memref, vector, window,
        Element::{self, Bf16, F32, I1, I32},
        KernelFunction, KernelOperand, Precision, Writer, FAST,
    },
};

/// What one Gated DeltaNet kernel computes.
#[derive(Clone, Debug, PartialEq)]
pub struct GatedDeltaPlan {
    pub batch: i64,
    pub key_heads: i64,
    pub value_heads: i64,
    pub length: i64,
    pub key_dim: i64,
    pub value_dim: i64,
    pub chunk: i64,
    /// Element type of q, k, v (`bf16` or `f32`) and of the output.
    pub input: Element,
    pub output: Element,
    pub scale: f64,
    /// Whether an initial state operand ([B, Nv, Dk, Dv] f32) is read.
    pub initial_state: bool,
    /// Products that share an operand done as one: T [βV | βe^γK] and [W; e^γ Q] S.
    pub shared_operands: bool,
    /// f32 products as three bf16 passes (hi·hi + hi·lo + lo·hi) instead of Mosaic's fp32.
    pub bf16x3: bool,
    /// The products after the inverse (U and W, the state products, P V') as one bf16
    /// pass each with f32 accumulation, as fla's kernels take them; the inverse keeps
    /// `bf16x3` or fp32.
    pub single_pass_products: bool,
    /// Gates in base 2 (γ · log2(e), γ_C · log2(e)) and `exp2` for every exponential of a
    /// gate sum.
    pub exp2_gates: bool,
    /// Value heads one grid step serves (their chains are independent, so the scheduler
    /// can interleave them); divides the value heads, and the group or a multiple of it.
    pub heads_per_step: i64,
    /// Kᵀ read from a transposed copy of K ([B, Nk, Dk, T'], after the initial state
    /// among the operands) instead of transposed in each chunk.
    pub keys_transposed: bool,
    /// Value heads whose chunk-parallel tiles (decay, K Kᵀ, Q Kᵀ, A, T) are one block
    /// diagonal tile (a divisor of `heads_per_step`): those tiles are zero off each head's
    /// C x C block, so the step's R x R program runs as R / (block_heads x C) diagonal
    /// blocks of it, and its work grows with the heads, not their square.
    pub block_heads: i64,
    /// Chunks one grid step runs, in order, the state passed from one to the next in
    /// registers: a chunk's chunk-parallel work does not wait for the state, so the
    /// scheduler can overlap it with the previous chunk's state products.
    pub chunks_per_step: i64,
    /// q, k and v read token-major, [B, T', N x D] (a step's heads side by side along the
    /// lanes), instead of [B, N, T', D]: for operands laid out with tokens before heads
    /// (BTNH), which then need no transpose outside the kernel, only a relayout.
    pub token_major_inputs: bool,
    /// The output written token-major, [B, T', Nv x Dv], likewise.
    pub token_major_output: bool,
}

/// A chunk's chunk-parallel results, one tile per diagonal block of `block_heads` heads:
/// U and W, scale e^γ Q, e^{γ_C - γ} and e^{γ_C} as columns, and the weights scale Q Kᵀ ⊙ D.
#[derive(Default)]
struct ChunkParallel {
    u: Vec<String>,
    w: Vec<String>,
    q_scaled: Vec<String>,
    to_end: Vec<String>,
    e_total: Vec<String>,
    weights: Vec<String>,
}

/// The name of the kernel function in a Gated DeltaNet kernel module.
pub const KERNEL_NAME: &str = "gated_delta_kernel";

/// The grid's indices as the kernel and its index maps name them.
const GRID_ARGUMENTS: [&str; 3] = ["%b", "%h", "%c"];

impl GatedDeltaPlan {
    /// The length padded to whole grid steps.
    pub fn padded_length(&self) -> i64 {
        whole_blocks(self.length, self.chunk * self.chunks_per_step)
    }

    pub fn chunks(&self) -> i64 {
        self.padded_length() / self.chunk
    }

    /// Value heads per key head.
    pub fn group(&self) -> i64 {
        self.value_heads / self.key_heads
    }

    /// Key heads one grid step reads: its value heads' (at least one).
    pub fn key_heads_per_step(&self) -> i64 {
        (self.heads_per_step / self.group()).max(1)
    }

    /// (batch, block of value heads, block of chunks).
    pub fn grid(&self) -> [i64; 3] {
        [self.batch, self.value_heads / self.heads_per_step, self.chunks() / self.chunks_per_step]
    }

    /// The chunked form's matmul flops: per chunk and value head K Kᵀ, Q Kᵀ, T [βV | βe^γK],
    /// W S, Q S, (Q Kᵀ ⊙ D) V' and Kᵀ V' (the inverse and the gate arithmetic not counted).
    pub fn flops(&self) -> i64 {
        let (c, dk, dv) = (self.chunk, self.key_dim, self.value_dim);
        let per_chunk = 2 * c * c * dk * 2 + 2 * c * c * (dk + dv) + 2 * c * dk * dv * 3 + 2 * c * c * dv;
        self.batch * self.value_heads * self.chunks() * per_chunk
    }

    pub fn transcendentals(&self) -> i64 {
        self.batch * self.value_heads * self.chunks() * (self.chunk * self.chunk + 3 * self.chunk)
    }

    pub fn bytes_accessed(&self) -> i64 {
        let size = |element: Element| if element == Bf16 { 2 } else { 4 };
        let tokens = self.batch * self.value_heads * self.padded_length();
        let states =
            self.batch * self.value_heads * self.key_dim * self.value_dim * 4 * (1 + i64::from(self.initial_state));
        let key_copies = 2 + i64::from(self.keys_transposed);
        tokens
            * ((key_copies * self.key_dim + self.value_dim) * size(self.input)
                + self.value_dim * size(self.output)
                + 3 * 4)
            + states
    }
}

/// The kernel module for `plan`, as text.
pub fn kernel_module(plan: &GatedDeltaPlan, symbol: &str) -> String {
    let (c, dk, dv, heads) = (plan.chunk, plan.key_dim, plan.value_dim, plan.heads_per_step);
    let input = plan.input;
    let key_slots = plan.key_heads_per_step();
    // The step's heads stacked: row r is position r % C of head r / C.
    let rows = heads * c;
    let per_step = plan.chunks_per_step;
    let tokens = per_step * c;
    let (q_window, v_window) = if plan.token_major_inputs {
        (vec![1, tokens, key_slots * dk], vec![1, tokens, heads * dv])
    } else {
        (vec![1, key_slots, tokens, dk], vec![1, heads, tokens, dv])
    };
    let o_window = if plan.token_major_output { vec![1, tokens, heads * dv] } else { vec![1, heads, tokens, dv] };
    let state_window = [1, heads, dk, dv];
    // Gate rows per chunk: γ and γ_C (two rows), β (one).
    let (gamma_window, beta_window) = ([1, 1, per_step, 2, rows], [1, 1, per_step, 1, rows]);
    let k_t_window = [1, key_slots, dk, per_step * c];
    let state_scratch = [heads, dk, dv];
    let precision = plan.bf16x3.then_some(Precision::Bf16x3);
    let after_inverse = if plan.single_pass_products { Some(Precision::Bf16) } else { precision };
    let mut w = Writer::new(2);

    // The first chunk starts from the initial state (or zeros).
    let first = w.equals("%c", 0);
    w.when(&first, |w| {
        for head in 0..heads {
            let initial = if plan.initial_state {
                w.load_block("%s0", &state_window, F32, &[1, 1, dk, dv], &[0, head, 0, 0], &[dk, dv])
            } else {
                w.splat(0.0, &[dk, dv])
            };
            w.store_block(&initial, &[dk, dv], "%state", &state_scratch, F32, &[1, dk, dv], &[head, 0, 0]);
        }
    });
    let to_f32 = |w: &mut Writer, value: &str, shape: &[i64]| {
        if input == F32 {
            value.to_owned()
        } else {
            w.op("arith.extf", &[(value, &vector(shape, input))], "", &f32s(shape))
        }
    };
    let exp_name = if plan.exp2_gates { "math.exp2" } else { "math.exp" };
    let exp = |w: &mut Writer, value: &str, shape: &[i64]| w.op(exp_name, &[(value, &f32s(shape))], FAST, &f32s(shape));

    // The chunk-parallel tiles are block diagonal over the step's heads; they are worked
    // on as diagonal blocks of `block_heads` heads (B = block_heads x C rows), since
    // everything off those blocks is zero. Masks over (i, j) = (row, column) of a B x B
    // block: the lower triangle (with and without its diagonal) within each head's C x C
    // diagonal block.
    let block_heads = plan.block_heads;
    let block_rows = block_heads * c;
    let square = [block_rows, block_rows];
    let square_type = f32s(&square);
    let ints = vector(&square, I32);
    let bools = vector(&square, I1);
    let row = w.op("tpu.iota", &[], "{dimensions = array<i32: 0>}", &ints);
    let column = w.op("tpu.iota", &[], "{dimensions = array<i32: 1>}", &ints);
    let on_or_below = w.cmpi(5, &row, &column, &ints, &bools);
    let below = w.cmpi(4, &row, &column, &ints, &bools);
    let diagonal = w.cmpi(0, &row, &column, &ints, &bools);
    let same_head = if block_heads == 1 {
        None
    } else {
        let chunk = w.constant(&format!("dense<{c}>"), &ints);
        let (row_head, column_head) =
            (w.binary("arith.divsi", &row, &chunk, &ints), w.binary("arith.divsi", &column, &chunk, &ints));
        Some(w.cmpi(0, &row_head, &column_head, &ints, &bools))
    };
    let within = |w: &mut Writer, mask: &str| match &same_head {
        Some(same) => w.binary("arith.andi", mask, same, &bools),
        None => mask.to_owned(),
    };
    let (on_or_below, below) = (within(&mut w, &on_or_below), within(&mut w, &below));
    let (ones, zeros) = (w.splat(1.0, &square), w.splat(0.0, &square));
    let identity = w.select(&diagonal, &ones, &zeros, &square);
    let minus_infinity = w.splat(f64::NEG_INFINITY, &square);
    let score_scale = w.splat(plan.scale, &square);

    // Q and K stacked like the value heads reading them: each key head's tiles repeated
    // for its value heads in the step. Kᵀ per key head, for the state updates.
    let repeats = heads / key_slots;
    // Key head `slot`'s [C, Dk] tile of chunk `sub` in `name` (%q or %k).
    let key_tile = |w: &mut Writer, name: &str, sub: i64, slot: i64| {
        if plan.token_major_inputs {
            w.load_block(name, &q_window, input, &[1, c, dk], &[0, sub * c, slot * dk], &[c, dk])
        } else {
            w.load_block(name, &q_window, input, &[1, 1, c, dk], &[0, slot, sub * c, 0], &[c, dk])
        }
    };
    // The step's key heads' tiles of chunk `sub`, [key_slots, 1, C, Dk].
    let load_keys = |w: &mut Writer, name: &str, sub: i64| {
        if !plan.token_major_inputs {
            return w.load_block(
                name,
                &q_window,
                input,
                &[1, key_slots, c, dk],
                &[0, 0, sub * c, 0],
                &[key_slots, 1, c, dk],
            );
        }
        let tiles: Vec<String> = (0..key_slots).map(|slot| key_tile(w, name, sub, slot)).collect();
        let joined = w.concatenate(&tiles, &[c, dk], input, 0);
        w.op(
            "vector.shape_cast",
            &[(&joined, &vector(&[key_slots * c, dk], input))],
            "",
            &vector(&[key_slots, 1, c, dk], input),
        )
    };
    let stacked = |w: &mut Writer, tiles: &str| {
        let spread = w.op(
            "vector.broadcast",
            &[(tiles, &vector(&[key_slots, 1, c, dk], input))],
            "",
            &vector(&[key_slots, repeats, c, dk], input),
        );
        w.op(
            "vector.shape_cast",
            &[(&spread, &vector(&[key_slots, repeats, c, dk], input))],
            "",
            &vector(&[rows, dk], input),
        )
    };
    // Shapes and helpers every chunk of the step uses; a gate row is [1, B].
    let key_type = vector(&[block_rows, dk], input);
    let row_type = f32s(&[1, block_rows]);
    // A row as the column [B, width] whose row i is entry i, repeated.
    let column_of = |w: &mut Writer, value: &str, width: i64| {
        let wide = w.op("vector.broadcast", &[(value, &row_type)], "", &f32s(&[width, block_rows]));
        w.op(
            "vector.transpose",
            &[(&wide, &f32s(&[width, block_rows]))],
            "{permutation = array<i64: 1, 0>}",
            &f32s(&[block_rows, width]),
        )
    };
    // Rows first .. first + C of a [height, width] tile.
    let rows_at = |w: &mut Writer, value: &str, [height, width]: [i64; 2], first: i64| {
        let attributes = format!("{{offsets = [{first}, 0], sizes = [{c}, {width}], strides = [1, 1]}}");
        w.op("vector.extract_strided_slice", &[(value, &f32s(&[height, width]))], &attributes, &f32s(&[c, width]))
    };
    // Rows first .. first + B of a stacked [R, width] tile of `element`s.
    let block_of = |w: &mut Writer, value: &str, width: i64, element: Element, block: i64| {
        if block_heads == heads {
            return value.to_owned();
        }
        let attributes =
            format!("{{offsets = [{}, 0], sizes = [{block_rows}, {width}], strides = [1, 1]}}", block * block_rows);
        w.op(
            "vector.extract_strided_slice",
            &[(value, &vector(&[rows, width], element))],
            &attributes,
            &vector(&[block_rows, width], element),
        )
    };
    // Head `head`'s rows of its block's [B, width] tile.
    let head_rows = |w: &mut Writer, blocks: &[String], width: i64, head: i64| {
        rows_at(w, &blocks[(head / block_heads) as usize], [block_rows, width], head % block_heads * c)
    };
    let state_type = f32s(&[dk, dv]);
    // A block's heads' [C, Dv] tiles stacked into its [B, Dv] tile.
    let stack = |w: &mut Writer, parts: &[String]| w.concatenate(parts, &[c, dv], F32, 0);
    // An f32 [rows, Dv] tile of the output in the output's element type.
    let to_output = |w: &mut Writer, o: String, rows: i64| {
        if plan.output == F32 {
            o
        } else {
            w.op("arith.truncf", &[(&o, &f32s(&[rows, dv]))], "", &vector(&[rows, dv], plan.output))
        }
    };
    // Constant rows every chunk multiplies by.
    let log2_e = plan.exp2_gates.then(|| w.splat(std::f64::consts::LOG2_E, &[1, block_rows]));
    let row_scale = w.splat(plan.scale, &[1, block_rows]);
    // The step's chunks in order, each state handed to the next in registers.
    let step_keys_transposed: Option<Vec<String>> = plan.keys_transposed.then(|| {
        (0..key_slots)
            .map(|slot| {
                let tile = w.load_block(
                    "%k_t",
                    &k_t_window,
                    input,
                    &[1, 1, dk, per_step * c],
                    &[0, slot, 0, 0],
                    &[dk, per_step * c],
                );
                to_f32(&mut w, &tile, &[dk, per_step * c])
            })
            .collect()
    });
    let mut states: Vec<String> = (0..heads)
        .map(|head| w.load_block("%state", &state_scratch, F32, &[1, dk, dv], &[head, 0, 0], &[dk, dv]))
        .collect();
    for sub in 0..per_step {
        let (q_tiles, k_tiles) = (load_keys(&mut w, "%q", sub), load_keys(&mut w, "%k", sub));
        let (q_step, k_step) = (stacked(&mut w, &q_tiles), stacked(&mut w, &k_tiles));
        let keys_transposed: Vec<String> = (0..key_slots)
            .map(|slot| {
                if let Some(columns) = &step_keys_transposed {
                    let attributes = format!("{{offsets = [0, {}], sizes = [{dk}, {c}], strides = [1, 1]}}", sub * c);
                    return w.op(
                        "vector.extract_strided_slice",
                        &[(&columns[slot as usize], &f32s(&[dk, per_step * c]))],
                        &attributes,
                        &f32s(&[dk, c]),
                    );
                }
                let tile = key_tile(&mut w, "%k", sub, slot);
                let tile = to_f32(&mut w, &tile, &[c, dk]);
                w.op(
                    "vector.transpose",
                    &[(&tile, &f32s(&[c, dk]))],
                    "{permutation = array<i64: 1, 0>}",
                    &f32s(&[dk, c]),
                )
            })
            .collect();
        let mut parallel = ChunkParallel::default();
        for block in 0..heads / block_heads {
            let (q, k) = (block_of(&mut w, &q_step, dk, input, block), block_of(&mut w, &k_step, dk, input, block));
            let kk = w.matmul((&k, &key_type), (&k, &key_type), &square, true, precision);
            let qk = w.matmul((&q, &key_type), (&k, &key_type), &square, true, precision);
            let (q, k) = (to_f32(&mut w, &q, &[block_rows, dk]), to_f32(&mut w, &k, &[block_rows, dk]));
            let v = if plan.token_major_inputs {
                let tiles: Vec<String> = (block * block_heads..(block + 1) * block_heads)
                    .map(|head| w.load_block("%v", &v_window, input, &[1, c, dv], &[0, sub * c, head * dv], &[c, dv]))
                    .collect();
                w.concatenate(&tiles, &[c, dv], input, 0)
            } else {
                w.load_block(
                    "%v",
                    &v_window,
                    input,
                    &[1, block_heads, c, dv],
                    &[0, block * block_heads, sub * c, 0],
                    &[block_rows, dv],
                )
            };
            // Gate rows: γ = cumsum(g) within each head's chunk, γ_C (each head's last
            // entry of γ) repeated across its positions, β.
            let gate = |w: &mut Writer, name: &str, window: &[i64], row: i64| {
                w.load_block(
                    name,
                    window,
                    F32,
                    &[1, 1, 1, 1, block_rows],
                    &[0, 0, sub, row, block * block_rows],
                    &[1, block_rows],
                )
            };
            let (gamma, total, beta) = (
                gate(&mut w, "%gamma", &gamma_window, 0),
                gate(&mut w, "%gamma", &gamma_window, 1),
                gate(&mut w, "%beta", &beta_window, 0),
            );
            let (gamma, total) = match &log2_e {
                Some(log2_e) => (
                    w.binary("arith.mulf", &gamma, log2_e, &row_type),
                    w.binary("arith.mulf", &total, log2_e, &row_type),
                ),
                None => (gamma, total),
            };
            let e_gamma = exp(&mut w, &gamma, &[1, block_rows]);
            let to_end = w.binary("arith.subf", &total, &gamma, &row_type);
            let decay_to_end = exp(&mut w, &to_end, &[1, block_rows]);
            let e_total = exp(&mut w, &total, &[1, block_rows]);
            let beta_e_gamma = w.binary("arith.mulf", &beta, &e_gamma, &row_type);
            let scaled_e_gamma = w.binary("arith.mulf", &e_gamma, &row_scale, &row_type);

            // D_ij = exp(γ_i - γ_j) on and below the diagonal of each head's block, 0
            // elsewhere (never exp of a rise).
            let gamma_i = column_of(&mut w, &gamma, block_rows);
            let gamma_j = w.op("vector.broadcast", &[(&gamma, &row_type)], "", &square_type);
            let rise = w.binary("arith.subf", &gamma_i, &gamma_j, &square_type);
            let rise = w.select(&on_or_below, &rise, &minus_infinity, &square);
            let decay = exp(&mut w, &rise, &square);

            // A = β_i (k_i·k_j) D_ij strictly below the diagonal within each head, T = (I +
            // A)⁻¹ by forward substitution: A is block diagonal, so C - 1 steps settle
            // every row.
            let beta_i = column_of(&mut w, &beta, block_rows);
            let a = w.binary("arith.mulf", &kk, &decay, &square_type);
            let a = w.binary("arith.mulf", &a, &beta_i, &square_type);
            let a = w.select(&below, &a, &zeros, &square);
            let t = w.repeat(0, c - 1, (&identity, &square_type), |w, _, x| {
                let ax = w.matmul((&a, &square_type), (x, &square_type), &square, false, precision);
                w.binary("arith.subf", &identity, &ax, &square_type)
            });

            // U = T (β V), W = T (β e^γ K), for all the block's heads at once.
            let vf = to_f32(&mut w, &v, &[block_rows, dv]);
            let beta_v = column_of(&mut w, &beta, dv);
            let beta_v = w.binary("arith.mulf", &beta_v, &vf, &f32s(&[block_rows, dv]));
            let beta_k = column_of(&mut w, &beta_e_gamma, dk);
            let beta_k = w.binary("arith.mulf", &beta_k, &k, &f32s(&[block_rows, dk]));
            // With shared operands one product T [βV | βe^γK] (as wide as the MXU at head
            // dims 128) gives both.
            let (u, w_tile) = if plan.shared_operands {
                let joined_type = f32s(&[block_rows, dv + dk]);
                let joined = w.op(
                    "tpu.concatenate",
                    &[(&beta_v, &f32s(&[block_rows, dv])), (&beta_k, &f32s(&[block_rows, dk]))],
                    "{dimension = 1 : i32}",
                    &joined_type,
                );
                let both =
                    w.matmul((&t, &square_type), (&joined, &joined_type), &[block_rows, dv + dk], false, after_inverse);
                (w.columns(&both, &[block_rows, dv + dk], 0, dv), w.columns(&both, &[block_rows, dv + dk], dv, dk))
            } else {
                let u = w.matmul(
                    (&t, &square_type),
                    (&beta_v, &f32s(&[block_rows, dv])),
                    &[block_rows, dv],
                    false,
                    after_inverse,
                );
                (
                    u,
                    w.matmul(
                        (&t, &square_type),
                        (&beta_k, &f32s(&[block_rows, dk])),
                        &[block_rows, dk],
                        false,
                        after_inverse,
                    ),
                )
            };
            let q_scale = column_of(&mut w, &scaled_e_gamma, dk);
            parallel.q_scaled.push(w.binary("arith.mulf", &q_scale, &q, &f32s(&[block_rows, dk])));
            parallel.to_end.push(column_of(&mut w, &decay_to_end, dv));
            parallel.e_total.push(column_of(&mut w, &e_total, dv));
            let weights = w.binary("arith.mulf", &qk, &decay, &square_type);
            parallel.weights.push(w.binary("arith.mulf", &weights, &score_scale, &square_type));
            parallel.u.push(u);
            parallel.w.push(w_tile);
        }

        // The serial part, per head, stage by stage across the heads so their independent
        // chains interleave: V' = U - W S; O = (scale e^γ Q) S + (scale Q Kᵀ ⊙ D) V';
        // S = e^{γ_C} S + Kᵀ (e^{γ_C - γ} ⊙ V').
        let mut new_values = Vec::new();
        let mut from_state = Vec::new();
        for (head, s) in states.iter().enumerate() {
            let head = head as i64;
            let (w_head, q_head) =
                (head_rows(&mut w, &parallel.w, dk, head), head_rows(&mut w, &parallel.q_scaled, dk, head));
            // With shared operands one product [W; e^γ Q] S gives W S and Q S.
            let ws = if plan.shared_operands {
                let stacked = w.op(
                    "tpu.concatenate",
                    &[(&w_head, &f32s(&[c, dk])), (&q_head, &f32s(&[c, dk]))],
                    "{dimension = 0 : i32}",
                    &f32s(&[2 * c, dk]),
                );
                let both =
                    w.matmul((&stacked, &f32s(&[2 * c, dk])), (s, &state_type), &[2 * c, dv], false, after_inverse);
                from_state.push(rows_at(&mut w, &both, [2 * c, dv], c));
                rows_at(&mut w, &both, [2 * c, dv], 0)
            } else {
                from_state.push(w.matmul((&q_head, &f32s(&[c, dk])), (s, &state_type), &[c, dv], false, after_inverse));
                w.matmul((&w_head, &f32s(&[c, dk])), (s, &state_type), &[c, dv], false, after_inverse)
            };
            let u_head = head_rows(&mut w, &parallel.u, dv, head);
            new_values.push(w.binary("arith.subf", &u_head, &ws, &f32s(&[c, dv])));
        }
        let by_block =
            |parts: &[String]| parts.chunks(block_heads as usize).map(<[String]>::to_vec).collect::<Vec<_>>();
        let (new_values, from_state): (Vec<String>, Vec<String>) = (
            by_block(&new_values).iter().map(|parts| stack(&mut w, parts)).collect(),
            by_block(&from_state).iter().map(|parts| stack(&mut w, parts)).collect(),
        );
        let value_type = f32s(&[block_rows, dv]);
        let mut decayed_values = Vec::new();
        for block in 0..(heads / block_heads) as usize {
            let intra = w.matmul(
                (&parallel.weights[block], &square_type),
                (&new_values[block], &value_type),
                &[block_rows, dv],
                false,
                after_inverse,
            );
            let o = w.binary("arith.addf", &from_state[block], &intra, &value_type);
            if plan.token_major_output {
                for head in block as i64 * block_heads..(block as i64 + 1) * block_heads {
                    let o = rows_at(&mut w, &o, [block_rows, dv], head % block_heads * c);
                    let o = to_output(&mut w, o, c);
                    w.store_block(&o, &[c, dv], "%o", &o_window, plan.output, &[1, c, dv], &[0, sub * c, head * dv]);
                }
            } else {
                let o = to_output(&mut w, o, block_rows);
                w.store_block(
                    &o,
                    &[block_rows, dv],
                    "%o",
                    &o_window,
                    plan.output,
                    &[1, block_heads, c, dv],
                    &[0, block as i64 * block_heads, sub * c, 0],
                );
            }
            decayed_values.push(w.binary("arith.mulf", &parallel.to_end[block], &new_values[block], &value_type));
        }
        let mut new_states = Vec::new();
        for (head, s) in states.iter().enumerate() {
            let head = head as i64;
            let values = head_rows(&mut w, &decayed_values, dv, head);
            let k_t = &keys_transposed[(head / repeats) as usize];
            let update = w.matmul((k_t, &f32s(&[dk, c])), (&values, &f32s(&[c, dv])), &[dk, dv], false, after_inverse);
            // e^{γ_C} of this head over its whole state: its first row of the column form.
            let attributes =
                format!("{{offsets = [{}, 0], sizes = [1, {dv}], strides = [1, 1]}}", head % block_heads * c);
            let factor = w.op(
                "vector.extract_strided_slice",
                &[(&parallel.e_total[(head / block_heads) as usize], &value_type)],
                &attributes,
                &f32s(&[1, dv]),
            );
            let state_decay = w.op("vector.broadcast", &[(&factor, &f32s(&[1, dv]))], "", &state_type);
            let s = w.binary("arith.mulf", &state_decay, s, &state_type);
            let s = w.binary("arith.addf", &s, &update, &state_type);
            new_states.push(s);
        }
        states = new_states;
    }
    for (head, s) in states.iter().enumerate() {
        w.store_block(s, &[dk, dv], "%state", &state_scratch, F32, &[1, dk, dv], &[head as i64, 0, 0]);
    }
    // The last step writes the final states.
    let last = w.equals("%c", plan.grid()[2] - 1);
    w.when(&last, |w| {
        for (head, s) in states.iter().enumerate() {
            w.store_block(s, &[dk, dv], "%s_final", &state_window, F32, &[1, 1, dk, dv], &[0, head as i64, 0, 0]);
        }
    });
    w.line("\"func.return\"() : () -> ()");

    // Operands in the call's order: q, k, v, g, beta, [initial state], [Kᵀ], then o and
    // the final state, then the state scratch.
    let (key_windows, value_windows) =
        if plan.token_major_inputs { ("key_tokens", "value_tokens") } else { ("key_chunks", "value_chunks") };
    let operand = |name: &'static str, shape: &[i64], element: Element, transform: &str| KernelOperand {
        name,
        memref: memref(shape, element),
        window: window(shape, transform),
    };
    let mut operands = vec![
        operand("%q", &q_window, input, key_windows),
        operand("%k", &q_window, input, key_windows),
        operand("%v", &v_window, input, value_windows),
        operand("%gamma", &gamma_window, F32, "gate_chunks"),
        operand("%beta", &beta_window, F32, "gate_chunks"),
    ];
    if plan.initial_state {
        operands.push(operand("%s0", &state_window, F32, "states"));
    }
    if plan.keys_transposed {
        operands.push(operand("%k_t", &k_t_window, input, "key_chunks_transposed"));
    }
    operands.push(operand(
        "%o",
        &o_window,
        plan.output,
        if plan.token_major_output { "value_tokens" } else { "value_chunks" },
    ));
    operands.push(operand("%s_final", &state_window, F32, "states"));
    let scratch = [("%state", memref(&state_scratch, F32))];
    // Step h serves value heads h x heads ..; value head n reads key head n / group, so
    // the step's key heads start at h x heads / group, in blocks of key_slots.
    let key_block = format!(
        "    %heads = \"arith.constant\"() {{value = {heads} : i32}} : () -> i32\n    %group = \"arith.constant\"() {{value = {} : i32}} : () -> i32\n    %slots = \"arith.constant\"() {{value = {key_slots} : i32}} : () -> i32\n    %first_value_head = \"arith.muli\"(%h, %heads) : (i32, i32) -> i32\n    %first_key_head = \"arith.divsi\"(%first_value_head, %group) : (i32, i32) -> i32\n    %key_block = \"arith.divsi\"(%first_key_head, %slots) : (i32, i32) -> i32\n",
        plan.group()
    );
    // Windows of heads then tokens (…_chunks) or of tokens then heads x lanes (…_tokens).
    let mut maps = if plan.token_major_inputs {
        index_map("key_tokens", &GRID_ARGUMENTS, &key_block, "%b, %c, %key_block", 3)
    } else {
        index_map("key_chunks", &GRID_ARGUMENTS, &key_block, "%b, %key_block, %c, %zero", 4)
    };
    if plan.token_major_inputs || plan.token_major_output {
        maps += &index_map("value_tokens", &GRID_ARGUMENTS, "", "%b, %c, %h", 3);
    }
    if !plan.token_major_inputs || !plan.token_major_output {
        maps += &index_map("value_chunks", &GRID_ARGUMENTS, "", "%b, %h, %c, %zero", 4);
    }
    maps += &index_map("gate_chunks", &GRID_ARGUMENTS, "", "%b, %h, %c, %zero, %zero", 5);
    maps += &index_map("states", &GRID_ARGUMENTS, "", "%b, %h, %zero, %zero", 4);
    if plan.keys_transposed {
        maps += &index_map("key_chunks_transposed", &GRID_ARGUMENTS, &key_block, "%b, %key_block, %zero, %c", 4);
    }
    let function = KernelFunction {
        name: KERNEL_NAME,
        grid_arguments: &GRID_ARGUMENTS,
        grid: &plan.grid(),
        parallel: &[true, true, false],
        operands: &operands,
        scratch: &scratch,
        body: &w.text,
    };
    function.module(symbol, &maps)
}
