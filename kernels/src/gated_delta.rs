//! The chunked Gated DeltaNet kernel as FlyWheel tile IR, for `flywheel-tile`: a kernel
//! module like `mosaic_attention.rs` writes, whose grid is (batch, value head, chunk) with
//! the chunk axis sequential (`arbitrary`), carrying the f32 state S (Dk x Dv) in VMEM
//! scratch. Per chunk of C tokens (docs/design.md's chunk math; i, j positions in the chunk):
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
    /// The products after the inverse that do not read V' or Q (U and W, and the state
    /// read with W, W S) as one bf16 pass each with f32 accumulation, as a
    /// DEFAULT-precision source's products are. The rest keep `bf16x3` or fp32, for
    /// stability: the inverse and K Kᵀ it is built from, and V''s products (P V', the
    /// state update Kᵀ V'), which in one pass were 4x the error of the source's own
    /// DEFAULT evaluation with one key for every token at β = 1
    /// (docs/kernels/gated_delta.md).
    pub single_pass_products: bool,
    /// The state read with Q (Q S) in one bf16 pass likewise.
    pub single_pass_readout: bool,
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
    let kernel = Kernel::new(plan);
    kernel.module(symbol, &kernel.body())
}

/// A kernel being written: the plan and the shapes, windows and precisions that follow
/// from it. Its methods write the body's steps in the order the kernel runs them, each
/// through the one `Writer` that names the SSA values.
struct Kernel<'p> {
    plan: &'p GatedDeltaPlan,
    /// The chunk C, and (`dk`, `dv`) the key and value head dims.
    c: i64,
    dk: i64,
    dv: i64,
    /// Value heads per grid step.
    heads: i64,
    input: Element,
    /// Key heads per grid step; `repeats`: value heads per key head among them.
    key_slots: i64,
    repeats: i64,
    /// The step's heads stacked: row r is position r % C of head r / C.
    rows: i64,
    /// Chunks per grid step.
    per_step: i64,
    /// The chunk-parallel tiles' diagonal blocks: `block_heads` heads, B = block_heads x C
    /// rows (`block_rows`).
    block_heads: i64,
    block_rows: i64,
    q_window: Vec<i64>,
    v_window: Vec<i64>,
    o_window: Vec<i64>,
    state_window: [i64; 4],
    gamma_window: [i64; 5],
    beta_window: [i64; 5],
    k_t_window: [i64; 4],
    state_scratch: [i64; 3],
    /// The precision of the products up to the inverse and of those of V' (`precision`),
    /// of U, W and W S (`after_inverse`), and of Q S (`readout`).
    precision: Option<Precision>,
    after_inverse: Option<Precision>,
    readout: Option<Precision>,
    /// B x B, and the types of a B x B tile, a block's keys, a gate row [1, B], a state
    /// [Dk, Dv] and a block's values [B, Dv].
    square: [i64; 2],
    square_type: String,
    key_type: String,
    row_type: String,
    state_type: String,
    value_type: String,
}

/// Tiles every chunk of a grid step uses. Masks over (i, j) = (row, column) of a B x B
/// block: the lower triangle (with and without its diagonal) within each head's C x C
/// diagonal block.
struct Constants {
    on_or_below: String,
    below: String,
    zeros: String,
    identity: String,
    minus_infinity: String,
    score_scale: String,
    /// log2(e) as a gate row, with `exp2_gates`.
    log2_e: Option<String>,
    row_scale: String,
}

/// A diagonal block's gate rows ([1, B]) for one chunk: γ (in base 2 with `exp2_gates`)
/// and β, and e^{γ_C - γ}, e^{γ_C}, β e^γ and scale e^γ.
struct Gates {
    gamma: String,
    beta: String,
    decay_to_end: String,
    e_total: String,
    beta_e_gamma: String,
    scaled_e_gamma: String,
}

impl<'p> Kernel<'p> {
    fn new(plan: &'p GatedDeltaPlan) -> Kernel<'p> {
        let (c, dk, dv, heads) = (plan.chunk, plan.key_dim, plan.value_dim, plan.heads_per_step);
        let key_slots = plan.key_heads_per_step();
        let rows = heads * c;
        let per_step = plan.chunks_per_step;
        let tokens = per_step * c;
        let (q_window, v_window) = if plan.token_major_inputs {
            (vec![1, tokens, key_slots * dk], vec![1, tokens, heads * dv])
        } else {
            (vec![1, key_slots, tokens, dk], vec![1, heads, tokens, dv])
        };
        let o_window = if plan.token_major_output { vec![1, tokens, heads * dv] } else { vec![1, heads, tokens, dv] };
        let precision = plan.bf16x3.then_some(Precision::Bf16x3);
        let block_rows = plan.block_heads * c;
        let square = [block_rows, block_rows];
        Kernel {
            plan,
            c,
            dk,
            dv,
            heads,
            input: plan.input,
            key_slots,
            repeats: heads / key_slots,
            rows,
            per_step,
            block_heads: plan.block_heads,
            block_rows,
            q_window,
            v_window,
            o_window,
            state_window: [1, heads, dk, dv],
            // Gate rows per chunk: γ and γ_C (two rows), β (one).
            gamma_window: [1, 1, per_step, 2, rows],
            beta_window: [1, 1, per_step, 1, rows],
            k_t_window: [1, key_slots, dk, per_step * c],
            state_scratch: [heads, dk, dv],
            precision,
            after_inverse: if plan.single_pass_products { Some(Precision::Bf16) } else { precision },
            readout: if plan.single_pass_readout { Some(Precision::Bf16) } else { precision },
            square,
            square_type: f32s(&square),
            key_type: vector(&[block_rows, dk], plan.input),
            row_type: f32s(&[1, block_rows]),
            state_type: f32s(&[dk, dv]),
            value_type: f32s(&[block_rows, dv]),
        }
    }

    /// The kernel function's body: the step's chunks in order, each state handed to the
    /// next in registers, between the state scratch's load and store.
    fn body(&self) -> String {
        let (dk, dv) = (self.dk, self.dv);
        let mut w = Writer::new(2);
        self.start_from_initial_state(&mut w);
        let constants = self.constants(&mut w);
        let step_keys_transposed = self.step_keys_transposed(&mut w);
        let mut states: Vec<String> = (0..self.heads)
            .map(|head| w.load_block("%state", &self.state_scratch, F32, &[1, dk, dv], &[head, 0, 0], &[dk, dv]))
            .collect();
        for sub in 0..self.per_step {
            states = self.chunk(&mut w, &constants, step_keys_transposed.as_deref(), sub, &states);
        }
        self.save_states(&mut w, &states);
        w.line("\"func.return\"() : () -> ()");
        w.text
    }

    /// The first chunk starts from the initial state (or zeros).
    fn start_from_initial_state(&self, w: &mut Writer) {
        let (dk, dv) = (self.dk, self.dv);
        let first = w.equals("%c", 0);
        w.when(&first, |w| {
            for head in 0..self.heads {
                let initial = if self.plan.initial_state {
                    w.load_block("%s0", &self.state_window, F32, &[1, 1, dk, dv], &[0, head, 0, 0], &[dk, dv])
                } else {
                    w.splat(0.0, &[dk, dv])
                };
                w.store_block(&initial, &[dk, dv], "%state", &self.state_scratch, F32, &[1, dk, dv], &[head, 0, 0]);
            }
        });
    }

    /// The masks, the identity and the constant tiles and rows every chunk multiplies by.
    fn constants(&self, w: &mut Writer) -> Constants {
        let square = &self.square;
        let ints = vector(square, I32);
        let bools = vector(square, I1);
        let row = w.op("tpu.iota", &[], "{dimensions = array<i32: 0>}", &ints);
        let column = w.op("tpu.iota", &[], "{dimensions = array<i32: 1>}", &ints);
        let on_or_below = w.cmpi(5, &row, &column, &ints, &bools);
        let below = w.cmpi(4, &row, &column, &ints, &bools);
        let diagonal = w.cmpi(0, &row, &column, &ints, &bools);
        let same_head = if self.block_heads == 1 {
            None
        } else {
            let chunk = w.constant(&format!("dense<{}>", self.c), &ints);
            let (row_head, column_head) =
                (w.binary("arith.divsi", &row, &chunk, &ints), w.binary("arith.divsi", &column, &chunk, &ints));
            Some(w.cmpi(0, &row_head, &column_head, &ints, &bools))
        };
        let within = |w: &mut Writer, mask: &str| match &same_head {
            Some(same) => w.binary("arith.andi", mask, same, &bools),
            None => mask.to_owned(),
        };
        let (on_or_below, below) = (within(w, &on_or_below), within(w, &below));
        let (ones, zeros) = (w.splat(1.0, square), w.splat(0.0, square));
        let identity = w.select(&diagonal, &ones, &zeros, square);
        let minus_infinity = w.splat(f64::NEG_INFINITY, square);
        let score_scale = w.splat(self.plan.scale, square);
        let log2_e = self.plan.exp2_gates.then(|| w.splat(std::f64::consts::LOG2_E, &[1, self.block_rows]));
        let row_scale = w.splat(self.plan.scale, &[1, self.block_rows]);
        Constants { on_or_below, below, zeros, identity, minus_infinity, score_scale, log2_e, row_scale }
    }

    /// With `keys_transposed`, each key head's Kᵀ for the whole step, [Dk, chunks x C] in
    /// f32, read once and sliced per chunk.
    fn step_keys_transposed(&self, w: &mut Writer) -> Option<Vec<String>> {
        let (dk, width) = (self.dk, self.per_step * self.c);
        self.plan.keys_transposed.then(|| {
            (0..self.key_slots)
                .map(|slot| {
                    let tile = w.load_block(
                        "%k_t",
                        &self.k_t_window,
                        self.input,
                        &[1, 1, dk, width],
                        &[0, slot, 0, 0],
                        &[dk, width],
                    );
                    self.to_f32(w, &tile, &[dk, width])
                })
                .collect()
        })
    }

    /// Chunk `sub` of the step: its chunk-parallel work, then the serial part from
    /// `states`, which writes the chunk's output; returns the states after the chunk.
    fn chunk(
        &self,
        w: &mut Writer,
        constants: &Constants,
        step_keys_transposed: Option<&[String]>,
        sub: i64,
        states: &[String],
    ) -> Vec<String> {
        let (q_tiles, k_tiles) = (self.load_keys(w, "%q", sub), self.load_keys(w, "%k", sub));
        let (q_step, k_step) = (self.stacked(w, &q_tiles), self.stacked(w, &k_tiles));
        let keys_transposed = self.keys_transposed(w, step_keys_transposed, sub);
        let mut parallel = ChunkParallel::default();
        for block in 0..self.heads / self.block_heads {
            self.chunk_parallel(w, constants, (&q_step, &k_step), sub, block, &mut parallel);
        }
        // The serial part, per head, stage by stage across the heads so their independent
        // chains interleave.
        let (new_values, from_state) = self.new_values(w, &parallel, states);
        let decayed_values = self.output(w, &parallel, &new_values, &from_state, sub);
        self.updated_states(w, &parallel, &decayed_values, &keys_transposed, states)
    }

    /// Kᵀ of each of the step's key heads in chunk `sub`, [Dk, C] in f32, for the state
    /// updates: sliced from the step's transposed keys, or a transpose of the chunk's K.
    fn keys_transposed(&self, w: &mut Writer, step_keys_transposed: Option<&[String]>, sub: i64) -> Vec<String> {
        let (c, dk) = (self.c, self.dk);
        (0..self.key_slots)
            .map(|slot| {
                if let Some(columns) = step_keys_transposed {
                    let attributes = format!("{{offsets = [0, {}], sizes = [{dk}, {c}], strides = [1, 1]}}", sub * c);
                    return w.op(
                        "vector.extract_strided_slice",
                        &[(&columns[slot as usize], &f32s(&[dk, self.per_step * c]))],
                        &attributes,
                        &f32s(&[dk, c]),
                    );
                }
                let tile = self.key_tile(w, "%k", sub, slot);
                let tile = self.to_f32(w, &tile, &[c, dk]);
                w.op(
                    "vector.transpose",
                    &[(&tile, &f32s(&[c, dk]))],
                    "{permutation = array<i64: 1, 0>}",
                    &f32s(&[dk, c]),
                )
            })
            .collect()
    }

    /// The chunk-parallel work of diagonal block `block` in chunk `sub` (from the step's
    /// stacked Q and K), its results added to `parallel`.
    fn chunk_parallel(
        &self,
        w: &mut Writer,
        constants: &Constants,
        (q_step, k_step): (&str, &str),
        sub: i64,
        block: i64,
        parallel: &mut ChunkParallel,
    ) {
        let (dk, dv, block_rows) = (self.dk, self.dv, self.block_rows);
        let (q, k) = (self.block_of(w, q_step, dk, self.input, block), self.block_of(w, k_step, dk, self.input, block));
        let kk = w.matmul((&k, &self.key_type), (&k, &self.key_type), &self.square, true, self.precision);
        let qk = w.matmul((&q, &self.key_type), (&k, &self.key_type), &self.square, true, self.precision);
        let (q, k) = (self.to_f32(w, &q, &[block_rows, dk]), self.to_f32(w, &k, &[block_rows, dk]));
        let v = self.load_values(w, sub, block);
        let gates = self.gates(w, constants, sub, block);
        let decay = self.decay(w, constants, &gates.gamma);
        let t = self.inverse(w, constants, &kk, &decay, &gates.beta);
        let (u, w_tile) = self.u_and_w(w, &t, &v, &k, &gates);
        let q_scale = self.column_of(w, &gates.scaled_e_gamma, dk);
        parallel.q_scaled.push(w.binary("arith.mulf", &q_scale, &q, &f32s(&[block_rows, dk])));
        parallel.to_end.push(self.column_of(w, &gates.decay_to_end, dv));
        parallel.e_total.push(self.column_of(w, &gates.e_total, dv));
        let weights = w.binary("arith.mulf", &qk, &decay, &self.square_type);
        parallel.weights.push(w.binary("arith.mulf", &weights, &constants.score_scale, &self.square_type));
        parallel.u.push(u);
        parallel.w.push(w_tile);
    }

    /// Block `block`'s values in chunk `sub`, [B, Dv].
    fn load_values(&self, w: &mut Writer, sub: i64, block: i64) -> String {
        let (c, dv, block_heads) = (self.c, self.dv, self.block_heads);
        if self.plan.token_major_inputs {
            let tiles: Vec<String> = (block * block_heads..(block + 1) * block_heads)
                .map(|head| {
                    w.load_block("%v", &self.v_window, self.input, &[1, c, dv], &[0, sub * c, head * dv], &[c, dv])
                })
                .collect();
            w.concatenate(&tiles, &[c, dv], self.input, 0)
        } else {
            w.load_block(
                "%v",
                &self.v_window,
                self.input,
                &[1, block_heads, c, dv],
                &[0, block * block_heads, sub * c, 0],
                &[self.block_rows, dv],
            )
        }
    }

    /// Block `block`'s gate rows in chunk `sub`: γ = cumsum(g) within each head's chunk,
    /// γ_C (each head's last entry of γ) repeated across its positions, β; and their
    /// exponentials.
    fn gates(&self, w: &mut Writer, constants: &Constants, sub: i64, block: i64) -> Gates {
        let block_rows = self.block_rows;
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
            gate(w, "%gamma", &self.gamma_window, 0),
            gate(w, "%gamma", &self.gamma_window, 1),
            gate(w, "%beta", &self.beta_window, 0),
        );
        let row_type = &self.row_type;
        let (gamma, total) = match &constants.log2_e {
            Some(log2_e) => {
                (w.binary("arith.mulf", &gamma, log2_e, row_type), w.binary("arith.mulf", &total, log2_e, row_type))
            }
            None => (gamma, total),
        };
        let e_gamma = self.exp(w, &gamma, &[1, block_rows]);
        let to_end = w.binary("arith.subf", &total, &gamma, row_type);
        let decay_to_end = self.exp(w, &to_end, &[1, block_rows]);
        let e_total = self.exp(w, &total, &[1, block_rows]);
        let beta_e_gamma = w.binary("arith.mulf", &beta, &e_gamma, row_type);
        let scaled_e_gamma = w.binary("arith.mulf", &e_gamma, &constants.row_scale, row_type);
        Gates { gamma, beta, decay_to_end, e_total, beta_e_gamma, scaled_e_gamma }
    }

    /// D_ij = exp(γ_i - γ_j) on and below the diagonal of each head's block, 0 elsewhere
    /// (never exp of a rise).
    fn decay(&self, w: &mut Writer, constants: &Constants, gamma: &str) -> String {
        let gamma_i = self.column_of(w, gamma, self.block_rows);
        let gamma_j = w.op("vector.broadcast", &[(gamma, &self.row_type)], "", &self.square_type);
        let rise = w.binary("arith.subf", &gamma_i, &gamma_j, &self.square_type);
        let rise = w.select(&constants.on_or_below, &rise, &constants.minus_infinity, &self.square);
        self.exp(w, &rise, &self.square)
    }

    /// A = β_i (k_i·k_j) D_ij strictly below the diagonal within each head, T = (I + A)⁻¹
    /// by forward substitution: A is block diagonal, so C - 1 steps settle every row.
    fn inverse(&self, w: &mut Writer, constants: &Constants, kk: &str, decay: &str, beta: &str) -> String {
        let beta_i = self.column_of(w, beta, self.block_rows);
        let a = w.binary("arith.mulf", kk, decay, &self.square_type);
        let a = w.binary("arith.mulf", &a, &beta_i, &self.square_type);
        let a = w.select(&constants.below, &a, &constants.zeros, &self.square);
        w.repeat(0, self.c - 1, (&constants.identity, &self.square_type), |w, _, x| {
            let ax = w.matmul((&a, &self.square_type), (x, &self.square_type), &self.square, false, self.precision);
            w.binary("arith.subf", &constants.identity, &ax, &self.square_type)
        })
    }

    /// U = T (β V), W = T (β e^γ K), for all the block's heads at once. With shared
    /// operands one product T [βV | βe^γK] (as wide as the MXU at head dims 128) gives both.
    fn u_and_w(&self, w: &mut Writer, t: &str, v: &str, k: &str, gates: &Gates) -> (String, String) {
        let (dk, dv, block_rows) = (self.dk, self.dv, self.block_rows);
        let vf = self.to_f32(w, v, &[block_rows, dv]);
        let beta_v = self.column_of(w, &gates.beta, dv);
        let beta_v = w.binary("arith.mulf", &beta_v, &vf, &f32s(&[block_rows, dv]));
        let beta_k = self.column_of(w, &gates.beta_e_gamma, dk);
        let beta_k = w.binary("arith.mulf", &beta_k, k, &f32s(&[block_rows, dk]));
        let t = (t, self.square_type.as_str());
        if self.plan.shared_operands {
            let joined_shape = [block_rows, dv + dk];
            let joined_type = f32s(&joined_shape);
            let joined = w.op(
                "tpu.concatenate",
                &[(&beta_v, &f32s(&[block_rows, dv])), (&beta_k, &f32s(&[block_rows, dk]))],
                "{dimension = 1 : i32}",
                &joined_type,
            );
            let both = w.matmul(t, (&joined, &joined_type), &joined_shape, false, self.after_inverse);
            (w.columns(&both, &joined_shape, 0, dv), w.columns(&both, &joined_shape, dv, dk))
        } else {
            let product = |w: &mut Writer, operand: &str, width: i64| {
                let shape = [block_rows, width];
                w.matmul(t, (operand, &f32s(&shape)), &shape, false, self.after_inverse)
            };
            (product(w, &beta_v, dv), product(w, &beta_k, dk))
        }
    }

    /// V' = U - W S per head, and (scale e^γ Q) S, each stacked back into its block's
    /// [B, Dv] tile. With shared operands one product [W; e^γ Q] S gives W S and Q S.
    fn new_values(&self, w: &mut Writer, parallel: &ChunkParallel, states: &[String]) -> (Vec<String>, Vec<String>) {
        let (c, dk, dv) = (self.c, self.dk, self.dv);
        let mut new_values = Vec::new();
        let mut from_state = Vec::new();
        for (head, s) in states.iter().enumerate() {
            let head = head as i64;
            let (w_head, q_head) =
                (self.head_rows(w, &parallel.w, dk, head), self.head_rows(w, &parallel.q_scaled, dk, head));
            let state = (s.as_str(), self.state_type.as_str());
            let ws = if self.plan.shared_operands {
                let stacked = w.op(
                    "tpu.concatenate",
                    &[(&w_head, &f32s(&[c, dk])), (&q_head, &f32s(&[c, dk]))],
                    "{dimension = 0 : i32}",
                    &f32s(&[2 * c, dk]),
                );
                // One product: one pass only where both may take one.
                let shared = if self.readout == self.after_inverse { self.after_inverse } else { self.precision };
                let both = w.matmul((&stacked, &f32s(&[2 * c, dk])), state, &[2 * c, dv], false, shared);
                from_state.push(self.rows_at(w, &both, [2 * c, dv], c));
                self.rows_at(w, &both, [2 * c, dv], 0)
            } else {
                from_state.push(w.matmul((&q_head, &f32s(&[c, dk])), state, &[c, dv], false, self.readout));
                w.matmul((&w_head, &f32s(&[c, dk])), state, &[c, dv], false, self.after_inverse)
            };
            let u_head = self.head_rows(w, &parallel.u, dv, head);
            new_values.push(w.binary("arith.subf", &u_head, &ws, &f32s(&[c, dv])));
        }
        let by_block = |w: &mut Writer, parts: &[String]| -> Vec<String> {
            parts.chunks(self.block_heads as usize).map(|parts| self.stack(w, parts)).collect()
        };
        (by_block(w, &new_values), by_block(w, &from_state))
    }

    /// O = (scale e^γ Q) S + (scale Q Kᵀ ⊙ D) V' per block, written out; returns each
    /// block's e^{γ_C - γ} ⊙ V' for the state updates.
    fn output(
        &self,
        w: &mut Writer,
        parallel: &ChunkParallel,
        new_values: &[String],
        from_state: &[String],
        sub: i64,
    ) -> Vec<String> {
        (0..new_values.len())
            .map(|block| {
                let intra = w.matmul(
                    (&parallel.weights[block], &self.square_type),
                    (&new_values[block], &self.value_type),
                    &[self.block_rows, self.dv],
                    false,
                    self.precision,
                );
                let o = w.binary("arith.addf", &from_state[block], &intra, &self.value_type);
                self.store_output(w, o, block as i64, sub);
                w.binary("arith.mulf", &parallel.to_end[block], &new_values[block], &self.value_type)
            })
            .collect()
    }

    /// Block `block`'s f32 output tile [B, Dv] in chunk `sub`, in the output's element
    /// type: head by head at their lanes when token-major.
    fn store_output(&self, w: &mut Writer, o: String, block: i64, sub: i64) {
        let (c, dv, block_heads, block_rows) = (self.c, self.dv, self.block_heads, self.block_rows);
        let (window, output) = (&self.o_window, self.plan.output);
        if self.plan.token_major_output {
            for head in block * block_heads..(block + 1) * block_heads {
                let o = self.rows_at(w, &o, [block_rows, dv], head % block_heads * c);
                let o = self.to_output(w, o, c);
                w.store_block(&o, &[c, dv], "%o", window, output, &[1, c, dv], &[0, sub * c, head * dv]);
            }
        } else {
            let o = self.to_output(w, o, block_rows);
            w.store_block(
                &o,
                &[block_rows, dv],
                "%o",
                window,
                output,
                &[1, block_heads, c, dv],
                &[0, block * block_heads, sub * c, 0],
            );
        }
    }

    /// S = e^{γ_C} S + Kᵀ (e^{γ_C - γ} ⊙ V') per head.
    fn updated_states(
        &self,
        w: &mut Writer,
        parallel: &ChunkParallel,
        decayed_values: &[String],
        keys_transposed: &[String],
        states: &[String],
    ) -> Vec<String> {
        let (c, dk, dv, block_heads) = (self.c, self.dk, self.dv, self.block_heads);
        let state_type = &self.state_type;
        states
            .iter()
            .enumerate()
            .map(|(head, s)| {
                let head = head as i64;
                let values = self.head_rows(w, decayed_values, dv, head);
                let k_t = &keys_transposed[(head / self.repeats) as usize];
                let update =
                    w.matmul((k_t, &f32s(&[dk, c])), (&values, &f32s(&[c, dv])), &[dk, dv], false, self.precision);
                // e^{γ_C} of this head over its whole state: its first row of the column form.
                let attributes =
                    format!("{{offsets = [{}, 0], sizes = [1, {dv}], strides = [1, 1]}}", head % block_heads * c);
                let factor = w.op(
                    "vector.extract_strided_slice",
                    &[(&parallel.e_total[(head / block_heads) as usize], &self.value_type)],
                    &attributes,
                    &f32s(&[1, dv]),
                );
                let state_decay = w.op("vector.broadcast", &[(&factor, &f32s(&[1, dv]))], "", state_type);
                let s = w.binary("arith.mulf", &state_decay, s, state_type);
                w.binary("arith.addf", &s, &update, state_type)
            })
            .collect()
    }

    /// The step's states back to the scratch, and after the last step out as the final
    /// states.
    fn save_states(&self, w: &mut Writer, states: &[String]) {
        let (dk, dv) = (self.dk, self.dv);
        for (head, s) in states.iter().enumerate() {
            w.store_block(s, &[dk, dv], "%state", &self.state_scratch, F32, &[1, dk, dv], &[head as i64, 0, 0]);
        }
        let last = w.equals("%c", self.plan.grid()[2] - 1);
        w.when(&last, |w| {
            for (head, s) in states.iter().enumerate() {
                w.store_block(
                    s,
                    &[dk, dv],
                    "%s_final",
                    &self.state_window,
                    F32,
                    &[1, 1, dk, dv],
                    &[0, head as i64, 0, 0],
                );
            }
        });
    }

    /// `value`, a tile of `shape` in the input's element type, in f32.
    fn to_f32(&self, w: &mut Writer, value: &str, shape: &[i64]) -> String {
        if self.input == F32 {
            value.to_owned()
        } else {
            w.op("arith.extf", &[(value, &vector(shape, self.input))], "", &f32s(shape))
        }
    }

    /// The exponential of a gate sum: `exp2` with gates in base 2.
    fn exp(&self, w: &mut Writer, value: &str, shape: &[i64]) -> String {
        let name = if self.plan.exp2_gates { "math.exp2" } else { "math.exp" };
        w.op(name, &[(value, &f32s(shape))], FAST, &f32s(shape))
    }

    /// Key head `slot`'s [C, Dk] tile of chunk `sub` in `name` (%q or %k).
    fn key_tile(&self, w: &mut Writer, name: &str, sub: i64, slot: i64) -> String {
        let (c, dk) = (self.c, self.dk);
        if self.plan.token_major_inputs {
            w.load_block(name, &self.q_window, self.input, &[1, c, dk], &[0, sub * c, slot * dk], &[c, dk])
        } else {
            w.load_block(name, &self.q_window, self.input, &[1, 1, c, dk], &[0, slot, sub * c, 0], &[c, dk])
        }
    }

    /// The step's key heads' tiles of chunk `sub` in `name`, [key_slots, 1, C, Dk].
    fn load_keys(&self, w: &mut Writer, name: &str, sub: i64) -> String {
        let (c, dk, key_slots, input) = (self.c, self.dk, self.key_slots, self.input);
        if !self.plan.token_major_inputs {
            return w.load_block(
                name,
                &self.q_window,
                input,
                &[1, key_slots, c, dk],
                &[0, 0, sub * c, 0],
                &[key_slots, 1, c, dk],
            );
        }
        let tiles: Vec<String> = (0..key_slots).map(|slot| self.key_tile(w, name, sub, slot)).collect();
        let joined = w.concatenate(&tiles, &[c, dk], input, 0);
        w.op(
            "vector.shape_cast",
            &[(&joined, &vector(&[key_slots * c, dk], input))],
            "",
            &vector(&[key_slots, 1, c, dk], input),
        )
    }

    /// Key heads' tiles [key_slots, 1, C, Dk] stacked like the value heads reading them,
    /// [R, Dk]: each key head's tile repeated for its value heads in the step.
    fn stacked(&self, w: &mut Writer, tiles: &str) -> String {
        let (c, dk, key_slots, input) = (self.c, self.dk, self.key_slots, self.input);
        let spread_type = vector(&[key_slots, self.repeats, c, dk], input);
        let spread = w.op("vector.broadcast", &[(tiles, &vector(&[key_slots, 1, c, dk], input))], "", &spread_type);
        w.op("vector.shape_cast", &[(&spread, &spread_type)], "", &vector(&[self.rows, dk], input))
    }

    /// A gate row as the column [B, width] whose row i is entry i, repeated.
    fn column_of(&self, w: &mut Writer, value: &str, width: i64) -> String {
        let wide_type = f32s(&[width, self.block_rows]);
        let wide = w.op("vector.broadcast", &[(value, &self.row_type)], "", &wide_type);
        w.op(
            "vector.transpose",
            &[(&wide, &wide_type)],
            "{permutation = array<i64: 1, 0>}",
            &f32s(&[self.block_rows, width]),
        )
    }

    /// Rows first .. first + C of a [height, width] tile.
    fn rows_at(&self, w: &mut Writer, value: &str, [height, width]: [i64; 2], first: i64) -> String {
        let attributes = format!("{{offsets = [{first}, 0], sizes = [{}, {width}], strides = [1, 1]}}", self.c);
        w.op("vector.extract_strided_slice", &[(value, &f32s(&[height, width]))], &attributes, &f32s(&[self.c, width]))
    }

    /// Diagonal block `block`'s rows of a stacked [R, width] tile of `element`s.
    fn block_of(&self, w: &mut Writer, value: &str, width: i64, element: Element, block: i64) -> String {
        if self.block_heads == self.heads {
            return value.to_owned();
        }
        let block_rows = self.block_rows;
        let attributes =
            format!("{{offsets = [{}, 0], sizes = [{block_rows}, {width}], strides = [1, 1]}}", block * block_rows);
        w.op(
            "vector.extract_strided_slice",
            &[(value, &vector(&[self.rows, width], element))],
            &attributes,
            &vector(&[block_rows, width], element),
        )
    }

    /// Head `head`'s rows of its block's [B, width] tile.
    fn head_rows(&self, w: &mut Writer, blocks: &[String], width: i64, head: i64) -> String {
        let block = &blocks[(head / self.block_heads) as usize];
        self.rows_at(w, block, [self.block_rows, width], head % self.block_heads * self.c)
    }

    /// A block's heads' [C, Dv] tiles stacked into its [B, Dv] tile.
    fn stack(&self, w: &mut Writer, parts: &[String]) -> String {
        w.concatenate(parts, &[self.c, self.dv], F32, 0)
    }

    /// An f32 [rows, Dv] tile of the output in the output's element type.
    fn to_output(&self, w: &mut Writer, o: String, rows: i64) -> String {
        if self.plan.output == F32 {
            o
        } else {
            w.op("arith.truncf", &[(&o, &f32s(&[rows, self.dv]))], "", &vector(&[rows, self.dv], self.plan.output))
        }
    }

    /// The kernel module around `body`: operands, the state scratch and index maps.
    fn module(&self, symbol: &str, body: &str) -> String {
        let scratch = [("%state", memref(&self.state_scratch, F32))];
        let function = KernelFunction {
            name: KERNEL_NAME,
            grid_arguments: &GRID_ARGUMENTS,
            grid: &self.plan.grid(),
            parallel: &[true, true, false],
            operands: &self.operands(),
            scratch: &scratch,
            body,
        };
        function.module(symbol, &self.index_maps())
    }

    /// Operands in the call's order: q, k, v, g, beta, [initial state], [Kᵀ], then o and
    /// the final state.
    fn operands(&self) -> Vec<KernelOperand> {
        let plan = self.plan;
        let (key_windows, value_windows) =
            if plan.token_major_inputs { ("key_tokens", "value_tokens") } else { ("key_chunks", "value_chunks") };
        let operand = |name: &'static str, shape: &[i64], element: Element, transform: &str| KernelOperand {
            name,
            memref: memref(shape, element),
            window: window(shape, transform),
        };
        let mut operands = vec![
            operand("%q", &self.q_window, self.input, key_windows),
            operand("%k", &self.q_window, self.input, key_windows),
            operand("%v", &self.v_window, self.input, value_windows),
            operand("%gamma", &self.gamma_window, F32, "gate_chunks"),
            operand("%beta", &self.beta_window, F32, "gate_chunks"),
        ];
        if plan.initial_state {
            operands.push(operand("%s0", &self.state_window, F32, "states"));
        }
        if plan.keys_transposed {
            operands.push(operand("%k_t", &self.k_t_window, self.input, "key_chunks_transposed"));
        }
        operands.push(operand(
            "%o",
            &self.o_window,
            plan.output,
            if plan.token_major_output { "value_tokens" } else { "value_chunks" },
        ));
        operands.push(operand("%s_final", &self.state_window, F32, "states"));
        operands
    }

    /// The windows' index maps: of heads then tokens (…_chunks) or of tokens then heads x
    /// lanes (…_tokens).
    fn index_maps(&self) -> String {
        let plan = self.plan;
        // Step h serves value heads h x heads ..; value head n reads key head n / group, so
        // the step's key heads start at h x heads / group, in blocks of key_slots.
        let (heads, key_slots) = (self.heads, self.key_slots);
        let key_block = format!(
            "    %heads = \"arith.constant\"() {{value = {heads} : i32}} : () -> i32\n    %group = \"arith.constant\"() {{value = {} : i32}} : () -> i32\n    %slots = \"arith.constant\"() {{value = {key_slots} : i32}} : () -> i32\n    %first_value_head = \"arith.muli\"(%h, %heads) : (i32, i32) -> i32\n    %first_key_head = \"arith.divsi\"(%first_value_head, %group) : (i32, i32) -> i32\n    %key_block = \"arith.divsi\"(%first_key_head, %slots) : (i32, i32) -> i32\n",
            plan.group()
        );
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
        maps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One bf16 head pair, 100 tokens in chunks of 64 (two chunks, the second padded).
    fn plan() -> GatedDeltaPlan {
        GatedDeltaPlan {
            batch: 1,
            key_heads: 1,
            value_heads: 2,
            length: 100,
            key_dim: 128,
            value_dim: 64,
            chunk: 64,
            input: Bf16,
            output: Bf16,
            scale: 1.0,
            initial_state: false,
            shared_operands: true,
            bf16x3: true,
            single_pass_products: false,
            single_pass_readout: false,
            exp2_gates: false,
            heads_per_step: 2,
            keys_transposed: false,
            block_heads: 2,
            chunks_per_step: 1,
            token_major_inputs: false,
            token_major_output: false,
        }
    }

    #[test]
    fn costs_count_what_each_padded_chunk_reads_writes_and_computes() {
        let plan = plan();
        assert_eq!((plan.padded_length(), plan.chunks(), plan.grid()), (128, 2, [1, 1, 2]));
        // Per value head and padded token: q and k (128 bf16 each), v and o (64 bf16 each),
        // three f32 gate rows (β, γ, γ_C); per value head the f32 final state, 128 x 64.
        let tokens = 2 * 128;
        let state = 128 * 64 * 4;
        assert_eq!(plan.bytes_accessed(), tokens * (2 * 128 * 2 + 64 * 2 + 64 * 2 + 3 * 4) + 2 * state);
        let with_state = GatedDeltaPlan { initial_state: true, keys_transposed: true, ..plan.clone() };
        assert_eq!(with_state.bytes_accessed(), tokens * (3 * 128 * 2 + 64 * 2 + 64 * 2 + 3 * 4) + 2 * 2 * state);
        // Per chunk and value head, C = 64: C² exps of the decay tile and 3C of the gates.
        assert_eq!(plan.transcendentals(), 2 * 2 * (64 * 64 + 3 * 64));
        // Products per chunk: K Kᵀ and Q Kᵀ (2C²Dk each), T [βV | βe^γK] (2C²(Dk + Dv)),
        // W S, Q S and Kᵀ V' (2C Dk Dv each), P V' (2C² Dv).
        let per_chunk = 2 * 2 * 64 * 64 * 128 + 2 * 64 * 64 * (128 + 64) + 3 * 2 * 64 * 128 * 64 + 2 * 64 * 64 * 64;
        assert_eq!(plan.flops(), 2 * 2 * per_chunk);
        let doubled = GatedDeltaPlan { chunks_per_step: 2, length: 129, ..plan };
        assert_eq!((doubled.padded_length(), doubled.grid()), (256, [1, 1, 2]));
    }
}
