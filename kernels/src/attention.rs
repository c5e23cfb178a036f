//! The baseline flash-attention kernel as FlyWheel tile IR, for `flywheel-tile`: a kernel
//! module (module attribute `stable_mosaic.version`) whose kernel function carries the
//! grid, windows and dimension semantics as Mosaic spells them, its per-grid-step program
//! in upstream vector/arith/math/scf ops plus `flywheel.matmul` (and Mosaic's `tpu.iota`
//! and `tpu.vector_store`), written as generic-form text and parsed.
//! `flywheel-lower-to-mosaic` serializes it for libtpu.
//!
//! Grid (batch, key/value head, query block, key block); the key-block axis is the reduction
//! (`arbitrary`), carrying the running max m, sum l and output accumulator in VMEM
//! scratch. Per step: S = scale · Q Kᵀ (soft-capped), key blocks wholly outside the
//! causal/window band skipped and those its edges cross masked (as is the tail of the
//! last key block when the keys are padded to whole blocks), and of a masked block the
//! sub-blocks wholly past the band's right edge or the last real key skipped too
//! (a causal diagonal block holding fewer queries than keys) and only those sub-blocks
//! an edge crosses masked, m' = max(m, rowmax S), P = exp(S - m'),
//! l = e^{m-m'} l + rowsum P, acc = e^{m-m'} acc + P V; the last step writes acc / l.
//! Each step serves one key/value head and its whole group of query heads: Q arrives as
//! [B, Nkv, T x group, D] (query t of group head g at row t x group + g), so a query
//! block is group x block_q contiguous rows and one K/V block feeds the group (GQA, MQA).

use crate::writer::{
    f32s, index_map, memref, vector, window,
    Element::{self, Bf16, Index, F32, I1, I32},
    KernelFunction, KernelOperand, Writer, FAST,
};

/// What one kernel computes.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelPlan {
    pub batch: i64,
    pub q_heads: i64,
    pub kv_heads: i64,
    pub queries: i64,
    pub keys: i64,
    pub head_dim: i64,
    pub value_dim: i64,
    pub block_q: i64,
    pub block_kv: i64,
    /// Element type of q, k, v (`bf16` or `f32`) and of the output.
    pub input: Element,
    pub output: Element,
    pub scale: f64,
    pub causal: bool,
    /// `(left, right)`: key j allowed for query i only if i - left <= j <= i + right.
    pub window: Option<(i64, i64)>,
    pub soft_cap: Option<f64>,
    /// A boolean mask operand (passed as i32, nonzero = allowed), [B|1, N|1, Tq, Tk].
    pub mask: Option<Extra>,
    /// An additive bias operand, [B|1, N|1, Tq, Tk].
    pub bias: Option<Extra>,
    /// The transposed formulation: scores as Sᵀ = K·Qᵀ ([keys, rows]) and the output as
    /// Oᵀ = Vᵀ·Pᵀ, so Pᵀ is the MXU's stationary operand (deep and wide) and the softmax
    /// reductions run across sublanes; V arrives as [B, Nkv, Dv, Tk]. No mask or bias.
    pub transposed: bool,
    /// The row sum l computed by the MXU: V arrives with 128 columns of ones after its
    /// own ([..., Dv + 128]), so P·[V | 1] yields the output and, lane-replicated, l
    /// (free where Dv leaves the MXU half empty). Standard orientation, Dv a multiple of
    /// 128, key blocks of whole lane tiles.
    pub row_sum_on_mxu: bool,
    /// The scoped VMEM (MiB) the kernel asks libtpu for; 0: libtpu's default.
    pub vmem_limit: i64,
    /// Sub-blocks per key block, software-pipelined (1: none). Divides `block_kv` into
    /// whole lane tiles.
    pub key_splits: i64,
}

/// A [B|1, N|1, Tq, Tk] operand: whether it is shared across the batch or the heads,
/// and its element type.
#[derive(Clone, Debug, PartialEq)]
pub struct Extra {
    pub one_batch: bool,
    pub one_head: bool,
    pub element: Element,
}

/// The name of the kernel function in an attention kernel module.
pub const KERNEL_NAME: &str = "kernel";

/// Lanes of a TPU vector register.
const LANES: i64 = 128;

/// A logit no key gets after masking: finite, so a row whose keys in one block are all
/// masked stays finite (its weight is wiped out by the rescale once an allowed key
/// comes, and every row has one: the planner keeps ops where a row could have none).
const MASKED: f64 = -0.7 * f32::MAX as f64;

/// The logit of a padding key: below `MASKED`, so padding gets no weight even in a row
/// whose real keys are all masked (that row stays uniform over the real keys only).
const PADDING: f64 = -0.95 * f32::MAX as f64;

impl KernelPlan {
    /// Query heads per key/value head; a grid step serves the whole group.
    pub fn group(&self) -> i64 {
        self.q_heads / self.kv_heads
    }

    /// The query length the kernel sees: padded at the end to whole blocks.
    pub fn padded_queries(&self) -> i64 {
        whole_blocks(self.queries, self.block_q)
    }

    /// The key length the kernel sees: padded at the end to whole blocks, the padding
    /// masked. Only the last key block holds padding.
    pub fn padded_keys(&self) -> i64 {
        whole_blocks(self.keys, self.block_kv)
    }

    /// (batch, key/value head, query block, key block).
    pub fn grid(&self) -> [i64; 4] {
        [self.batch, self.kv_heads, self.padded_queries() / self.block_q, self.padded_keys() / self.block_kv]
    }

    /// MXU flops the kernel does (causal counts the blocks it computes).
    pub fn flops(&self) -> i64 {
        let per_block = 2 * self.block_q * self.block_kv * (self.head_dim + self.value_dim);
        self.batch * self.q_heads * self.computed_blocks() * per_block
    }

    pub fn transcendentals(&self) -> i64 {
        self.batch * self.q_heads * self.computed_blocks() * self.block_q * (self.block_kv + 1)
    }

    /// The allowed band of key positions around each query: j >= i - left (if bounded)
    /// and j <= i + right (if bounded), combining `causal` and `window`.
    pub fn band(&self) -> (Option<i64>, Option<i64>) {
        let right = match (self.causal, self.window) {
            (true, Some((_, right))) => Some(right.min(0)),
            (true, None) => Some(0),
            (false, window) => window.map(|(_, right)| right),
        };
        (self.window.map(|(left, _)| left), right)
    }

    /// Whether every query has at least one allowed key.
    pub fn every_row_attends(&self) -> bool {
        let (left, right) = self.band();
        (0..self.queries).all(|i| {
            let first = left.map_or(0, |l| (i - l).max(0));
            let last = right.map_or(self.keys - 1, |r| (i + r).min(self.keys - 1));
            first <= last
        })
    }

    /// Whether the key block `j` holds an allowed key for some query of block `i`.
    fn needed(&self, i: i64, j: i64) -> bool {
        let (left, right) = self.band();
        let (q0, q1) = (i * self.block_q, i * self.block_q + self.block_q - 1);
        let (k0, k1) = (j * self.block_kv, j * self.block_kv + self.block_kv - 1);
        right.is_none_or(|r| k0 <= q1 + r) && left.is_none_or(|l| k1 >= q0 - l)
    }

    /// The (query block, key block) pairs the kernel computes: `needed`, in grid order.
    fn needed_blocks(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        let [_, _, q_blocks, kv_blocks] = self.grid();
        (0..q_blocks).flat_map(move |i| (0..kv_blocks).map(move |j| (i, j))).filter(|&(i, j)| self.needed(i, j))
    }

    /// How many of key block `j`'s `key_splits` sub-blocks hold a key some query of block
    /// `i` may see: those up to the band's right edge and the last real key (the kernel
    /// computes the same from its grid indices and skips the rest).
    fn sub_blocks_reached(&self, i: i64, j: i64) -> i64 {
        let right_reach = self.band().1.map(|right| i * self.block_q + self.block_q - 1 + right);
        let padding_reach = (self.padded_keys() > self.keys).then_some(self.keys - 1);
        match right_reach.into_iter().chain(padding_reach).min() {
            Some(reach) => ((reach - j * self.block_kv) / (self.block_kv / self.key_splits) + 1).min(self.key_splits),
            None => self.key_splits,
        }
    }

    /// Whether some (query, key) pair of query block `i` and keys `first..=last` is not
    /// allowed (the band's edges) or is padding, as the kernel's block test reads it.
    fn crossed(&self, i: i64, first: i64, last: i64) -> bool {
        let (left, right) = self.band();
        let (q0, q1) = (i * self.block_q, i * self.block_q + self.block_q - 1);
        right.is_some_and(|r| last > q0 + r)
            || left.is_some_and(|l| first < q1 - l)
            || (self.padded_keys() > self.keys && last > self.keys - 1)
    }

    /// Which sub-blocks of the masked key blocks reaching `count` sub-blocks (any count:
    /// None) an edge crosses: the others need no mask in that step body.
    fn masked_sub_blocks(&self, count: Option<i64>) -> Vec<bool> {
        let sub = self.block_kv / self.key_splits;
        let mut masked = vec![false; self.key_splits as usize];
        for (i, j) in self.needed_blocks() {
            let first = j * self.block_kv;
            if self.crossed(i, first, first + self.block_kv - 1)
                && count.is_none_or(|n| self.sub_blocks_reached(i, j) == n)
            {
                for (c, flag) in masked.iter_mut().enumerate() {
                    let start = first + c as i64 * sub;
                    *flag |= self.crossed(i, start, start + sub - 1);
                }
            }
        }
        masked
    }

    /// The sub-block counts the needed key blocks reach (`sub_blocks_reached`), ascending.
    fn reached_counts(&self) -> Vec<i64> {
        let counts: std::collections::BTreeSet<i64> =
            self.needed_blocks().map(|(i, j)| self.sub_blocks_reached(i, j)).collect();
        counts.into_iter().collect()
    }

    fn computed_blocks(&self) -> i64 {
        self.needed_blocks().count() as i64
    }

    pub fn bytes_accessed(&self) -> i64 {
        let size = |element: Element| if element == Bf16 { 2 } else { 4 };
        let (i, o) = (size(self.input), size(self.output));
        let (queries, keys) = (self.padded_queries(), self.padded_keys());
        let q = self.batch * self.q_heads * queries * self.head_dim * i;
        let kv = self.batch * self.kv_heads * keys * (self.head_dim + self.value_dim) * i;
        let out = self.batch * self.q_heads * queries * self.value_dim * o;
        let extras: i64 = [&self.mask, &self.bias]
            .into_iter()
            .flatten()
            .map(|extra| {
                let (b, h) =
                    (if extra.one_batch { 1 } else { self.batch }, if extra.one_head { 1 } else { self.q_heads });
                b * h * queries * keys * size(extra.element)
            })
            .sum();
        q + kv + out + extras
    }
}

/// `length` rounded up to a multiple of `block`.
pub fn whole_blocks(length: i64, block: i64) -> i64 {
    (length + block - 1) / block * block
}

/// How the running max and sum are laid out beside the score tile.
#[derive(Clone, Copy)]
struct Statistics {
    /// [rows, 1] or lane-replicated [rows, 128] (standard), or [1, rows] (transposed).
    shape: [i64; 2],
    transposed: bool,
}

impl Statistics {
    /// The score tile's key axis, which the softmax reduces.
    fn key_axis(&self) -> i64 {
        if self.transposed {
            0
        } else {
            1
        }
    }

    fn rows(&self) -> i64 {
        self.shape[self.key_axis() as usize ^ 1]
    }

    /// The max or sum (`kind`) of the score tile `scores` over its keys, as a statistic.
    fn reduce(&self, w: &mut Writer, kind: &str, scores: &str, score_shape: &[i64; 2], initial: f64) -> String {
        let rows = self.rows();
        let start = w.splat(initial, &[rows]);
        let attributes = format!("{{kind = #vector.kind<{kind}>, reduction_dims = array<i64: {}>}}", self.key_axis());
        let reduced = w.op(
            "vector.multi_reduction",
            &[(scores, &f32s(score_shape)), (&start, &f32s(&[rows]))],
            &attributes,
            &f32s(&[rows]),
        );
        let single = if self.transposed { [1, rows] } else { [rows, 1] };
        let statistic = w.op("vector.shape_cast", &[(&reduced, &f32s(&[rows]))], "", &f32s(&single));
        if single == self.shape {
            statistic
        } else {
            w.op("vector.broadcast", &[(&statistic, &f32s(&single))], "", &f32s(&self.shape))
        }
    }

    /// A statistic repeated along a tile's other axis, `width` long: for a transposed
    /// statistic a sublane broadcast; else a lane broadcast of a column, or of a
    /// lane-replicated one its first `width` lanes or whole lane tiles side by side.
    fn widen(&self, w: &mut Writer, value: &str, width: i64) -> String {
        let shape = &self.shape;
        let wide = if self.transposed { [width, shape[1]] } else { [shape[0], width] };
        let lanes = shape[1];
        if wide == *shape {
            return value.to_owned();
        }
        if self.transposed || lanes == 1 {
            return w.op("vector.broadcast", &[(value, &f32s(shape))], "", &f32s(&wide));
        }
        if width < lanes {
            return w.columns(value, shape, 0, width);
        }
        w.concatenate(&vec![value.to_owned(); (width / lanes) as usize], shape, F32, 1)
    }
}

/// The block tests of a kernel with a causal or windowed band, or padded keys, computed
/// once per step.
struct BandTests {
    left: Option<i64>,
    right: Option<i64>,
    /// The last real key, when keys are padded.
    last_real_key: Option<i64>,
    first_query: String,
    first_key: String,
    /// The key block holds an allowed key for some query of the query block (None: every
    /// block does).
    needed: Option<String>,
    /// Some (query, key) pair of the blocks is not allowed: the block needs the mask.
    crosses: String,
    /// The last keys some query of the query block may see: the band's right edge and the
    /// last real key, where there are; past either a key block's trailing sub-blocks are
    /// wholly masked.
    reaches: Vec<String>,
}

fn band_tests(w: &mut Writer, plan: &KernelPlan, kv_step: &str) -> Option<BandTests> {
    let (left, right) = plan.band();
    let last_real_key = (plan.padded_keys() > plan.keys).then_some(plan.keys - 1);
    if left.is_none() && right.is_none() && last_real_key.is_none() {
        return None;
    }
    let (bq, bk) = (plan.block_q, plan.block_kv);
    let (block_kv, block_q) = (w.i32(bk), w.i32(bq));
    let first_key = w.binary("arith.muli", kv_step, &block_kv, I32.name());
    let last_key_offset = w.i32(bk - 1);
    let last_key = w.binary("arith.addi", &first_key, &last_key_offset, I32.name());
    let first_query = w.binary("arith.muli", "%qb", &block_q, I32.name());
    let last_query_offset = w.i32(bq - 1);
    let last_query = w.binary("arith.addi", &first_query, &last_query_offset, I32.name());
    let (mut needed, mut crosses) = (Vec::new(), Vec::new());
    // The last key the block's last query may see: how far its key blocks reach.
    let right_reach = right.map(|right| {
        let offset = w.i32(right);
        let (last_allowed_first, last_allowed_last) = (
            w.binary("arith.addi", &first_query, &offset, I32.name()),
            w.binary("arith.addi", &last_query, &offset, I32.name()),
        );
        needed.push(w.cmpi(3, &first_key, &last_allowed_last, I32.name(), I1.name()));
        crosses.push(w.cmpi(4, &last_key, &last_allowed_first, I32.name(), I1.name()));
        last_allowed_last
    });
    if let Some(left) = left {
        let offset = w.i32(left);
        let (first_allowed_first, first_allowed_last) = (
            w.binary("arith.subi", &first_query, &offset, I32.name()),
            w.binary("arith.subi", &last_query, &offset, I32.name()),
        );
        needed.push(w.cmpi(5, &last_key, &first_allowed_first, I32.name(), I1.name()));
        crosses.push(w.cmpi(2, &first_key, &first_allowed_last, I32.name(), I1.name()));
    }
    let padding_reach = last_real_key.map(|last_real_key| {
        let limit = w.i32(last_real_key);
        crosses.push(w.cmpi(4, &last_key, &limit, I32.name(), I1.name()));
        limit
    });
    let needed = needed.into_iter().reduce(|a, b| w.binary("arith.andi", &a, &b, I1.name()));
    let crosses = crosses.into_iter().reduce(|a, b| w.binary("arith.ori", &a, &b, I1.name())).expect("a bound");
    let reaches = right_reach.into_iter().chain(padding_reach).collect();
    Some(BandTests { left, right, last_real_key, first_query, first_key, needed, crosses, reaches })
}

/// Index-map ops defining `%key_block` from the grid indices `%qb`, `%kv`: `%kv`, or with
/// a band, `%kv` clamped to the key blocks query block `%qb` needs (first <= kv <= last).
fn key_block_clamp(plan: &KernelPlan) -> String {
    let (left, right) = plan.band();
    let constant =
        |name: &str, value: i64| format!("    %{name} = \"arith.constant\"() {{value = {value} : i32}} : () -> i32\n");
    let op = |result: &str, name: &str, a: &str, b: &str| {
        format!("    %{result} = \"arith.{name}\"(%{a}, %{b}) : (i32, i32) -> i32\n")
    };
    let mut text = constant("block_q", plan.block_q) + &constant("block_kv", plan.block_kv);
    let mut current = "kv".to_owned();
    if let Some(left) = left {
        // first = max(qb * block_q - left, 0) / block_kv
        text += &constant("left", left);
        text += &op("start", "muli", "qb", "block_q");
        text += &op("reach", "subi", "start", "left");
        text += &op("reach0", "maxsi", "reach", "zero");
        text += &op("first", "divsi", "reach0", "block_kv");
        text += &op("from_first", "maxsi", &current, "first");
        current = "from_first".into();
    }
    if let Some(right) = right {
        // last = min(((qb + 1) * block_q - 1 + right) / block_kv, blocks - 1)
        text += &constant("one", 1);
        text += &constant("past_right", right - 1);
        text += &constant("final", plan.grid()[3] - 1);
        text += &op("next", "addi", "qb", "one");
        text += &op("end", "muli", "next", "block_q");
        text += &op("reach_end", "addi", "end", "past_right");
        text += &op("last_any", "divsi", "reach_end", "block_kv");
        text += &op("last", "minsi", "last_any", "final");
        text += &op("to_last", "minsi", &current, "last");
        current = "to_last".into();
    }
    text + &format!("    %key_block = \"arith.addi\"(%{current}, %zero) : (i32, i32) -> i32\n")
}

/// The window of a [B|1, N|1, Tq, Tk] operand. A per-head one arrives like Q, as
/// [B|1, Nkv, Tq x group, Tk]; a head-shared one as it is, [B|1, 1, Tq, Tk].
fn extra_window(extra: &Extra, group: i64, block_q: i64, block_kv: i64) -> [i64; 4] {
    [1, 1, if extra.one_head { block_q } else { group * block_q }, block_kv]
}

/// Loads columns `(first, width)` of a [B|1, N|1, Tq, Tk] operand's block as the step's
/// stacked rows; a head-shared block has each query row repeated for the group's heads.
#[allow(clippy::too_many_arguments)]
fn load_extra(
    w: &mut Writer,
    reference: &str,
    extra: &Extra,
    element: Element,
    group: i64,
    block_q: i64,
    block_kv: i64,
    (first, width): (i64, i64),
) -> String {
    let window = extra_window(extra, group, block_q, block_kv);
    let block = [1, 1, window[2], width];
    let origin = [0, 0, 0, first];
    let stacked = [group * block_q, width];
    if extra.one_head && group > 1 {
        let rows = w.load_block(reference, &window, element, &block, &origin, &[block_q, 1, width]);
        let repeated = w.op(
            "vector.broadcast",
            &[(&rows, &vector(&[block_q, 1, width], element))],
            "",
            &vector(&[block_q, group, width], element),
        );
        w.op(
            "vector.shape_cast",
            &[(&repeated, &vector(&[block_q, group, width], element))],
            "",
            &vector(&stacked, element),
        )
    } else {
        w.load_block(reference, &window, element, &block, &origin, &stacked)
    }
}

/// The kernel module for `plan`, as text: the per-step program (reset on the first key
/// block, the key blocks' scores and online-softmax updates, the output on the last), then
/// the kernel function around it with its operands and index maps.
pub fn kernel_module(plan: &KernelPlan, symbol: &str) -> String {
    let tiles = Tiles::of(plan);
    let mut w = Writer::new(2);
    let zero = w.constant("0", Index.name());
    tiles.reset_on_first_block(&mut w, &zero);
    let band = band_tests(&mut w, plan, KV_STEP);
    let steps = Steps { tiles: &tiles, band: band.as_ref(), zero: &zero };
    steps.key_block(&mut w);
    tiles.write_output_on_last_block(&mut w, &zero);
    w.line("\"func.return\"() : () -> ()");
    tiles.function(symbol, &w.text)
}

/// The grid index of the key block, the reduction axis.
const KV_STEP: &str = "%kv";

/// The shapes a kernel works on: its windows, scratch and tiles.
struct Tiles<'p> {
    plan: &'p KernelPlan,
    /// Query rows a step stacks: the query group's heads times the query block.
    stacked: i64,
    q_window: [i64; 4],
    k_window: [i64; 4],
    v_window: [i64; 4],
    o_window: [i64; 4],
    statistics: Statistics,
    /// The running max and sum's shape.
    rows: [i64; 2],
    /// The output accumulator's shape ([rows, Dv (+ 128 ones columns)], or transposed).
    accumulator: [i64; 2],
    /// The accumulator's width: Dv, plus the 128 columns of l with the row sum on the MXU.
    width: i64,
    /// Keys per sub-block, and a sub-block's scores and V tile.
    sub: i64,
    sub_scores: [i64; 2],
    sub_v: [i64; 2],
}

impl<'p> Tiles<'p> {
    fn of(plan: &'p KernelPlan) -> Self {
        let (bq, bk, d, dv) = (plan.block_q, plan.block_kv, plan.head_dim, plan.value_dim);
        // Q and O arrive as [B, Nkv, T x group, D]: query t of head g of the group is row
        // t * group + g, so a block of block_q queries is group x block_q contiguous rows.
        let stacked = plan.group() * bq;
        let transposed = plan.transposed;
        assert!(
            !transposed || (plan.mask.is_none() && plan.bias.is_none()),
            "the transposed kernel takes no mask or bias"
        );
        // The running max and sum: in the transposed kernel a row [1, rows]; else
        // lane-replicated [rows, 128] when key blocks are whole lane tiles and the value width
        // tiles or divides one (widening is then a tiling or a slice, no lane broadcast), else
        // [rows, 1].
        let lanes = if bk % LANES == 0 && (dv % LANES == 0 || LANES % dv == 0) { LANES } else { 1 };
        let statistics = Statistics { shape: if transposed { [1, stacked] } else { [stacked, lanes] }, transposed };
        assert!(
            !plan.row_sum_on_mxu || (!transposed && lanes == LANES && dv % LANES == 0),
            "the MXU sums rows only of a standard kernel with whole lane tiles"
        );
        // With the row sum on the MXU, the accumulator's last 128 columns hold l.
        let width = if plan.row_sum_on_mxu { dv + LANES } else { dv };
        let (accumulator, v_tile) =
            if transposed { ([dv, stacked], [dv, bk]) } else { ([stacked, width], [bk, width]) };
        // The key block runs as `key_splits` sub-blocks of `sub` keys, each its own
        // online-softmax update (flywheel-pipeline overlaps one's scores with another's
        // softmax).
        let sub = bk / plan.key_splits;
        Tiles {
            plan,
            stacked,
            q_window: [1, 1, stacked, d],
            k_window: [1, 1, bk, d],
            v_window: [1, 1, v_tile[0], v_tile[1]],
            o_window: [1, 1, stacked, dv],
            statistics,
            rows: statistics.shape,
            accumulator,
            width,
            sub,
            sub_scores: if transposed { [sub, stacked] } else { [stacked, sub] },
            sub_v: if transposed { [dv, sub] } else { [sub, v_tile[1]] },
        }
    }

    /// On the first key block, m = -inf, l = 0, acc = 0.
    fn reset_on_first_block(&self, w: &mut Writer, zero: &str) {
        let (rows, accumulator) = (self.rows, self.accumulator);
        let first = w.equals(KV_STEP, 0);
        w.when(&first, |w| {
            let minus_infinity = w.splat(f64::NEG_INFINITY, &rows);
            w.store(&minus_infinity, &rows, "%m", &rows, F32, zero);
            let zeros = w.splat(0.0, &rows);
            if !self.plan.row_sum_on_mxu {
                w.store(&zeros, &rows, "%l", &rows, F32, zero);
            }
            let zeros = w.splat(0.0, &accumulator);
            w.store(&zeros, &accumulator, "%acc", &accumulator, F32, zero);
        });
    }

    /// On the last key block, O = acc / l.
    fn write_output_on_last_block(&self, w: &mut Writer, zero: &str) {
        let (plan, rows, accumulator, stacked) = (self.plan, self.rows, self.accumulator, self.stacked);
        let dv = plan.value_dim;
        let last = w.equals(KV_STEP, plan.grid()[3] - 1);
        w.when(&last, |w| {
            let acc = w.load("%acc", &accumulator, F32, &accumulator, zero);
            let (acc, l) = if plan.row_sum_on_mxu {
                (w.columns(&acc, &accumulator, 0, dv), w.columns(&acc, &accumulator, dv, LANES))
            } else {
                (acc, w.load("%l", &rows, F32, &rows, zero))
            };
            let output_tile = if plan.transposed { [dv, stacked] } else { [stacked, dv] };
            let l = self.statistics.widen(w, &l, dv);
            let o = w.binary("arith.divf", &acc, &l, &f32s(&output_tile));
            let o = if plan.transposed {
                w.op(
                    "vector.transpose",
                    &[(&o, &f32s(&output_tile))],
                    "{permutation = array<i64: 1, 0>}",
                    &f32s(&[stacked, dv]),
                )
            } else {
                o
            };
            let o_tile = [stacked, dv];
            let o = if plan.output == F32 {
                o
            } else {
                w.op("arith.truncf", &[(&o, &f32s(&o_tile))], "", &vector(&o_tile, plan.output))
            };
            w.store(&o, &o_tile, "%o", &self.o_window, plan.output, zero);
        });
    }

    /// The kernel module: the kernel function around `body`, its operands in the call's
    /// order (q, k, v, [mask], [bias], then the output, then scratch), and index maps.
    fn function(&self, symbol: &str, body: &str) -> String {
        let plan = self.plan;
        let (group, bq, bk, input) = (plan.group(), plan.block_q, plan.block_kv, plan.input);
        let operand = |name: &'static str, shape: &[i64], element: Element, transform: &str| KernelOperand {
            name,
            memref: memref(shape, element),
            window: window(shape, transform),
        };
        let mut operands = vec![
            operand("%q", &self.q_window, input, "q_blocks"),
            operand("%k", &self.k_window, input, "kv_blocks"),
            operand("%v", &self.v_window, input, if plan.transposed { "v_t_blocks" } else { "kv_blocks" }),
        ];
        if let Some(mask) = &plan.mask {
            operands.push(operand("%mask", &extra_window(mask, group, bq, bk), I32, "mask_blocks"));
        }
        if let Some(bias) = &plan.bias {
            operands.push(operand("%bias", &extra_window(bias, group, bq, bk), bias.element, "bias_blocks"));
        }
        operands.push(operand("%o", &self.o_window, plan.output, "q_blocks"));
        let mut scratch = vec![("%m", memref(&self.rows, F32)), ("%acc", memref(&self.accumulator, F32))];
        if !plan.row_sum_on_mxu {
            scratch.insert(1, ("%l", memref(&self.rows, F32)));
        }
        let function = KernelFunction {
            name: KERNEL_NAME,
            grid_arguments: &GRID_ARGUMENTS,
            grid: &plan.grid(),
            parallel: &[true, true, true, false],
            operands: &operands,
            scratch: &scratch,
            body,
        };
        function.module(symbol, &index_maps(plan))
    }
}

/// The index maps: grid (b, h, qb, kv) to block indices; h is the key/value head. Key
/// blocks are named through %key_block: with a band, the key block index is clamped to
/// the blocks the query block needs, so a skipped step names the block its neighbour
/// holds and the pipeline fetches nothing new for it.
fn index_maps(plan: &KernelPlan) -> String {
    let key_block = key_block_clamp(plan);
    let transform = |name: &str, results: &str| {
        let prelude = if results.contains("%key_block") { key_block.as_str() } else { "" };
        index_map(name, &GRID_ARGUMENTS, prelude, results, 4)
    };
    let extra_map = |name: &str, extra: &Extra| {
        let (b, h) = (if extra.one_batch { "%zero" } else { "%b" }, if extra.one_head { "%zero" } else { "%h" });
        transform(name, &format!("{b}, {h}, %qb, %key_block"))
    };
    let mut maps = transform("q_blocks", "%b, %h, %qb, %zero") + &transform("kv_blocks", "%b, %h, %key_block, %zero");
    if plan.transposed {
        // Vᵀ: [B, Nkv, Dv, Tk], key blocks along the last axis.
        maps += &transform("v_t_blocks", "%b, %h, %zero, %key_block");
    }
    if let Some(mask) = &plan.mask {
        maps += &extra_map("mask_blocks", mask);
    }
    if let Some(bias) = &plan.bias {
        maps += &extra_map("bias_blocks", bias);
    }
    maps
}

/// The work of one grid step on its key block.
struct Steps<'t, 'p> {
    tiles: &'t Tiles<'p>,
    /// The block tests of a banded or padded kernel.
    band: Option<&'t BandTests>,
    /// The index constant 0.
    zero: &'t str,
}

impl Steps<'_, '_> {
    /// The key block's work. Key blocks wholly outside the band are skipped. Only key
    /// blocks the band's edges (or the end of the keys) cross need the mask: one step body
    /// with it and one without, so no score tile flows out of a branch. Of a masked block,
    /// the sub-blocks wholly past the last key its queries may see (causal blocks on the
    /// diagonal holding fewer queries than keys, the padding) are skipped: one masked body
    /// per count of sub-blocks needed.
    fn key_block(&self, w: &mut Writer) {
        match self.band.and_then(|bounds| bounds.needed.clone()) {
            Some(needed) => w.when(&needed, |w| self.masked_or_not(w)),
            None => self.masked_or_not(w),
        }
    }

    fn masked_or_not(&self, w: &mut Writer) {
        let plan = self.tiles.plan;
        let splits = plan.key_splits;
        let unmasked = vec![false; splits as usize];
        let Some(bounds) = self.band else {
            return self.step(w, &unmasked, splits);
        };
        let counts = plan.reached_counts();
        if counts == [splits] {
            w.when(&bounds.crosses, |w| self.step(w, &plan.masked_sub_blocks(None), splits));
        } else {
            for count in counts {
                // The first `count` sub-blocks reached, the next (if any) not.
                let first_ones = self.reached(w, bounds, count - 1);
                let mut runs = w.binary("arith.andi", &bounds.crosses, &first_ones, I1.name());
                if count < splits {
                    let next = self.reached(w, bounds, count);
                    let not_next = w.not(&next);
                    runs = w.binary("arith.andi", &runs, &not_next, I1.name());
                }
                w.when(&runs, |w| self.step(w, &plan.masked_sub_blocks(Some(count)), count));
            }
        }
        let clear = w.not(&bounds.crosses);
        w.when(&clear, |w| self.step(w, &unmasked, splits));
    }

    /// Whether sub-block `c` is reached: its first key is at most every reach. Sums and
    /// comparisons of the grid indices, as the block tests are: libtpu's static profile
    /// follows those, where a count taken by a division and a min priced the bodies
    /// behind it as never run.
    fn reached(&self, w: &mut Writer, bounds: &BandTests, c: i64) -> String {
        let offset = w.i32(c * self.tiles.sub);
        let first = w.binary("arith.addi", &bounds.first_key, &offset, I32.name());
        let tests: Vec<String> =
            bounds.reaches.iter().map(|reach| w.cmpi(3, &first, reach, I32.name(), I1.name())).collect();
        tests.into_iter().reduce(|a, b| w.binary("arith.andi", &a, &b, I1.name())).expect("a reach")
    }

    /// One key block's work, its first `count` sub-blocks in program order
    /// (flywheel-pipeline reorders them); `masked[c]`: sub-block c with the band's (and
    /// key padding's) mask.
    fn step(&self, w: &mut Writer, masked: &[bool], count: i64) {
        let tiles = self.tiles;
        let (rows, accumulator, zero) = (tiles.rows, tiles.accumulator, self.zero);
        let q = w.load("%q", &tiles.q_window, tiles.plan.input, &[tiles.stacked, tiles.plan.head_dim], zero);
        let m = w.load("%m", &rows, F32, &rows, zero);
        let l = (!tiles.plan.row_sum_on_mxu).then(|| w.load("%l", &rows, F32, &rows, zero));
        let acc = w.load("%acc", &accumulator, F32, &accumulator, zero);
        let mut state = (m, l, acc);
        for c in 0..count {
            let s = self.scores(w, &q, c, masked[c as usize]);
            state = self.update(w, &s, c, state);
        }
        let (m, l, acc) = state;
        if let Some(l) = l {
            w.store(&l, &rows, "%l", &rows, F32, zero);
        }
        w.store(&acc, &accumulator, "%acc", &accumulator, F32, zero);
        w.store(&m, &rows, "%m", &rows, F32, zero);
    }

    /// Sub-block `c`'s scores: scale · Q K_cᵀ, soft-capped, biased and masked.
    fn scores(&self, w: &mut Writer, q: &str, c: i64, masked: bool) -> String {
        let tiles = self.tiles;
        let plan = tiles.plan;
        let (scores, sub, d, input) = (tiles.sub_scores, tiles.sub, plan.head_dim, plan.input);
        let (group, bq, bk) = (plan.group(), plan.block_q, plan.block_kv);
        let k = w.load_block("%k", &tiles.k_window, input, &[1, 1, sub, d], &[0, 0, c * sub, 0], &[sub, d]);
        let zeros = w.splat(0.0, &scores);
        let (q, k) = ((q, vector(&[tiles.stacked, d], input)), (k.as_str(), vector(&[sub, d], input)));
        let (lhs, rhs) = if plan.transposed { (k, q) } else { (q, k) };
        let s = w.op(
            "flywheel.matmul",
            &[(lhs.0, &lhs.1), (rhs.0, &rhs.1), (&zeros, &f32s(&scores))],
            "{transpose_rhs = true}",
            &f32s(&scores),
        );
        let scale = w.splat(plan.scale, &scores);
        let mut s = w.binary("arith.mulf", &s, &scale, &f32s(&scores));
        if let Some(cap) = plan.soft_cap {
            let cap = w.splat(cap, &scores);
            let divided = w.binary("arith.divf", &s, &cap, &f32s(&scores));
            let tanh = w.op("math.tanh", &[(&divided, &f32s(&scores))], FAST, &f32s(&scores));
            s = w.binary("arith.mulf", &tanh, &cap, &f32s(&scores));
        }
        if let Some(bias) = &plan.bias {
            let loaded = load_extra(w, "%bias", bias, bias.element, group, bq, bk, (c * sub, sub));
            let loaded = if bias.element == F32 {
                loaded
            } else {
                w.op("arith.extf", &[(&loaded, &vector(&scores, bias.element))], "", &f32s(&scores))
            };
            s = w.binary("arith.addf", &s, &loaded, &f32s(&scores));
        }
        if let Some(mask) = &plan.mask {
            let ints = vector(&scores, I32);
            let loaded = load_extra(w, "%mask", mask, I32, group, bq, bk, (c * sub, sub));
            let zeros = w.constant("dense<0>", &ints);
            let allowed = w.cmpi(1, &loaded, &zeros, &ints, &vector(&scores, I1));
            let masked = w.splat(MASKED, &scores);
            s = w.op(
                "arith.select",
                &[(&allowed, &vector(&scores, I1)), (&s, &f32s(&scores)), (&masked, &f32s(&scores))],
                "",
                &f32s(&scores),
            );
        }
        match (masked, self.band) {
            (true, Some(bounds)) => self.band_mask(w, bounds, s, c),
            _ => s,
        }
    }

    /// Scores `s` of sub-block `c` with the keys outside the band masked, and padding keys
    /// below every masked key.
    fn band_mask(&self, w: &mut Writer, bounds: &BandTests, mut s: String, c: i64) -> String {
        let tiles = self.tiles;
        let (scores, group) = (tiles.sub_scores, tiles.plan.group());
        let ints = vector(&scores, I32);
        let bools = vector(&scores, I1);
        // Row t * group + g is query t of the block.
        let (query_axis, key_axis) = if tiles.plan.transposed { (1, 0) } else { (0, 1) };
        let row = w.op("tpu.iota", &[], &format!("{{dimensions = array<i32: {query_axis}>}}"), &ints);
        let row = if group > 1 {
            let heads = w.constant(&format!("dense<{group}>"), &ints);
            w.binary("arith.divsi", &row, &heads, &ints)
        } else {
            row
        };
        let row_offset = w.op("vector.broadcast", &[(&bounds.first_query, I32.name())], "", &ints);
        let row = w.binary("arith.addi", &row, &row_offset, &ints);
        let column = w.op("tpu.iota", &[], &format!("{{dimensions = array<i32: {key_axis}>}}"), &ints);
        let first_key = if c == 0 {
            bounds.first_key.clone()
        } else {
            let offset = w.i32(c * tiles.sub);
            w.binary("arith.addi", &bounds.first_key, &offset, I32.name())
        };
        let column_offset = w.op("vector.broadcast", &[(&first_key, I32.name())], "", &ints);
        let column = w.binary("arith.addi", &column, &column_offset, &ints);
        let mut conditions = Vec::new();
        if let Some(right) = bounds.right {
            // j <= i + right
            let offset = w.constant(&format!("dense<{right}>"), &ints);
            let limit = w.binary("arith.addi", &row, &offset, &ints);
            conditions.push(w.cmpi(3, &column, &limit, &ints, &bools));
        }
        if let Some(left) = bounds.left {
            // j >= i - left
            let offset = w.constant(&format!("dense<{left}>"), &ints);
            let limit = w.binary("arith.subi", &row, &offset, &ints);
            conditions.push(w.cmpi(5, &column, &limit, &ints, &bools));
        }
        let select = |w: &mut Writer, keep: &str, s: &str, value: f64| {
            let replacement = w.splat(value, &scores);
            w.op(
                "arith.select",
                &[(keep, &bools), (s, &f32s(&scores)), (&replacement, &f32s(&scores))],
                "",
                &f32s(&scores),
            )
        };
        if let Some(allowed) = conditions.into_iter().reduce(|a, b| w.binary("arith.andi", &a, &b, &bools)) {
            s = select(w, &allowed, &s, MASKED);
        }
        if let Some(last_real_key) = bounds.last_real_key {
            let limit = w.constant(&format!("dense<{last_real_key}>"), &ints);
            let real = w.cmpi(3, &column, &limit, &ints, &bools);
            s = select(w, &real, &s, PADDING);
        }
        s
    }

    /// The online-softmax update of (m, l, acc) by sub-block `c`'s scores `s`.
    fn update(
        &self,
        w: &mut Writer,
        s: &str,
        c: i64,
        (m, l, acc): (String, Option<String>, String),
    ) -> (String, Option<String>, String) {
        let tiles = self.tiles;
        let plan = tiles.plan;
        let (scores, rows, accumulator, sub, input) =
            (tiles.sub_scores, tiles.rows, tiles.accumulator, tiles.sub, plan.input);
        let statistics = tiles.statistics;
        let row_max = statistics.reduce(w, "maximumf", s, &scores, f64::NEG_INFINITY);
        let m_new = w.binary("arith.maximumf", &m, &row_max, &f32s(&rows));
        let m_wide = statistics.widen(w, &m_new, sub);
        let shifted = w.binary("arith.subf", s, &m_wide, &f32s(&scores));
        let p = w.op("math.exp", &[(&shifted, &f32s(&scores))], FAST, &f32s(&scores));
        let drop = w.binary("arith.subf", &m, &m_new, &f32s(&rows));
        let alpha = w.op("math.exp", &[(&drop, &f32s(&rows))], FAST, &f32s(&rows));
        let l = l.map(|l| {
            let l = w.binary("arith.mulf", &alpha, &l, &f32s(&rows));
            let row_sum = statistics.reduce(w, "add", &p, &scores, 0.0);
            w.binary("arith.addf", &l, &row_sum, &f32s(&rows))
        });
        let alpha_wide = statistics.widen(w, &alpha, tiles.width);
        let acc = w.binary("arith.mulf", &alpha_wide, &acc, &f32s(&accumulator));
        let p =
            if input == F32 { p } else { w.op("arith.truncf", &[(&p, &f32s(&scores))], "", &vector(&scores, input)) };
        let origin = if plan.transposed { [0, 0, 0, c * sub] } else { [0, 0, c * sub, 0] };
        let sub_v = tiles.sub_v;
        let v = w.load_block("%v", &tiles.v_window, input, &[1, 1, sub_v[0], sub_v[1]], &origin, &sub_v);
        let zeros = w.splat(0.0, &accumulator);
        let (p, v) = ((p.as_str(), vector(&scores, input)), (v.as_str(), vector(&sub_v, input)));
        let (lhs, rhs) = if plan.transposed { (v, p) } else { (p, v) };
        let pv = w.op(
            "flywheel.matmul",
            &[(lhs.0, &lhs.1), (rhs.0, &rhs.1), (&zeros, &f32s(&accumulator))],
            "{transpose_rhs = false}",
            &f32s(&accumulator),
        );
        let acc = w.binary("arith.addf", &acc, &pv, &f32s(&accumulator));
        (m_new, l, acc)
    }
}

/// The grid's indices as the kernel and its index maps name them.
const GRID_ARGUMENTS: [&str; 4] = ["%b", "%h", "%qb", "%kv"];

#[cfg(test)]
mod tests {
    use super::*;

    /// 256 queries and keys in blocks of 128, keys split in two, within a window of 127
    /// keys back and 127 ahead.
    fn windowed() -> KernelPlan {
        KernelPlan {
            batch: 1,
            q_heads: 1,
            kv_heads: 1,
            queries: 256,
            keys: 256,
            head_dim: 128,
            value_dim: 128,
            block_q: 128,
            block_kv: 128,
            input: Bf16,
            output: Bf16,
            scale: 1.0,
            causal: false,
            window: Some((127, 127)),
            soft_cap: None,
            mask: None,
            bias: None,
            transposed: false,
            row_sum_on_mxu: false,
            vmem_limit: 0,
            key_splits: 2,
        }
    }

    #[test]
    fn keys_cross_the_window_edge_exactly_where_some_query_may_not_see_them() {
        let plan = windowed();
        // Query block 1 holds queries 128..=255. Its last, 255, sees keys from 128 on;
        // its first, 128, keys up to 255.
        assert!(!plan.crossed(1, 128, 255));
        assert!(plan.crossed(1, 127, 254));
        assert!(plan.crossed(1, 129, 256));
    }
}
