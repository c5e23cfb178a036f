//! `flywheel-tile` (see [`PASS`]): plans each kernel (grid, blocks, layouts, VMEM) and
//! writes it as tile IR with the kernel builders of `flywheel_kernels`.

mod attention;
pub mod block_search;
mod gated_delta;

use crate::{
    analysis::atoms::{Atoms, Axis},
    analysis::hlo::{materialize, HloBuilder},
    options::Options,
    pass::{external_pass, Anchor, PassId, PassInfo},
    target::Generation,
};
use attention::{tile, Blocks};
use flywheel_dialect::ir::string_attribute;
use flywheel_dialect::{
    layout::{Axis as Role, Layout},
    tensor::TensorInfo,
};
use flywheel_kernels::tile_ir::{parse_kernel_module, top_module};
use flywheel_kernels::Element;
use gated_delta::{
    gated_delta_chunks, gated_delta_rows, tile_gated_delta, GatedDeltaOptions, GdnPrecision, TokenMajor,
};
use melior::{
    ir::{
        operation::{OperationBuilder, OperationLike, OperationMutLike, OperationRef},
        BlockLike, RegionLike, Type, Value, ValueLike,
    },
    pass::Pass,
};

static PASS_ID: PassId = PassId;

crate::pass_options! {
    pub struct TileOptions {
        /// Queries per grid step (capped at the sequence length, and by the VMEM budget of the score tile)
        block_q: i64 = ("block-q", "1024"),
        /// Keys per grid step (capped at the sequence length)
        block_kv: i64 = ("block-kv", "2048"),
        /// Queries per grid step for causal attention
        causal_block_q: i64 = ("causal-block-q", "1024"),
        /// Keys per grid step for causal attention (smaller blocks skip more above the diagonal)
        causal_block_kv: i64 = ("causal-block-kv", "1024"),
        /// Sub-blocks per key block, each its own online-softmax update, in program order (flywheel-pipeline overlaps
        /// them); lowered to the most that leave whole 128-key lane tiles
        key_splits: i64 = ("key-splits", "1"),
        /// Kernels in the transposed orientation whose key blocks hold at least this many keys take each block whole,
        /// one sub-block, except causal ones whose key blocks are longer than their query blocks (their diagonal blocks
        /// skip the sub-blocks past the band); smaller key blocks take key-splits (0: every block takes key-splits)
        transposed_whole_keys: i64 = ("transposed-whole-keys", "0"),
        /// Choose block sizes by compiling candidates with libtpu's static profile for `target` (cached)
        auto_blocks: bool = ("auto-blocks", "false"),
        /// The TPU generation: the one auto-blocks compiles for, and whose rows gdn-heads=0 fills
        target: Generation = ("target", "v6e"),
        /// Tokens per chunk of the Gated DeltaNet kernel (0: the op's chunk_size)
        chunk: i64 = ("chunk", "0"),
        /// Value heads per grid step of the Gated DeltaNet kernel, stacked into its matmuls (0: as many as fill the
        /// target's rows, 1024 on v6e, 512 on tpu7x, 256 on v5e; lowered to the most that divide the heads and fit the
        /// key-head groups)
        gdn_heads: i64 = ("gdn-heads", "0"),
        /// How the Gated DeltaNet kernel multiplies f32 operands: Mosaic's fp32, or three bf16 passes of their high and
        /// low parts
        gdn_precision: GdnPrecision = ("gdn-precision", "bf16x3"),
        /// In the Gated DeltaNet kernel, the products after the inverse that do not read V' (U and W, the state
        /// readouts W S and Q S) as one bf16 pass each with f32 accumulation, whatever the op's precision (they always
        /// are where it is "DEFAULT", Q S where its readout_precision is, as the source's products were); the inverse,
        /// K Kᵀ and V''s products keep gdn-precision
        gdn_single_pass: bool = ("gdn-single-pass", "false"),
        /// Chunks one grid step of the Gated DeltaNet kernel runs in order, the state passed on in registers, so a
        /// chunk's chunk-parallel work can overlap the previous chunk's state products (1, 2 or 4; 0: the most of 4, 2,
        /// 1 that divides the chunks, so no step pads, up to 2 on tpu7x, whose VMEM four overflowed)
        gdn_chunks_per_step: i64 = ("gdn-chunks-per-step", "0"),
        /// Rows of the diagonal blocks the Gated DeltaNet kernel's chunk-parallel tiles (decay, K Kᵀ, Q Kᵀ, A, the
        /// inverse, the output weights) are worked on in, whole heads of a step (0: the step's whole stacked tile,
        /// heads x chunk square)
        gdn_block_rows: i64 = ("gdn-block-rows", "128"),
        /// Which of the Gated DeltaNet kernel's windows are token-major, [B, T, N x D], where the op is laid out with
        /// tokens before heads: the output's (XLA then relayouts it to BTNH instead of transposing it), q, k and v's
        /// too (all: their transposes become relayouts, which libtpu prices both ways), or none
        gdn_token_major: TokenMajor = ("gdn-token-major", "output"),
        /// In the Gated DeltaNet kernel, gates in base 2 (the γ and γ_C rows x log2(e) once per chunk) and exp2 for
        /// every exponential of a gate sum (off: libtpu's static cycles gave no gain)
        gdn_exp2: bool = ("gdn-exp2", "false"),
        /// Remark on each kernel emitted and each op kept
        remarks: bool = ("remarks", "false"),
    }
}

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-tile",
    summary: "Plan a Mosaic kernel for each flywheel.attention and write it as FlyWheel tile IR",
    description: "Turns each `flywheel.attention` and `flywheel.gated_delta` a kernel serves into FlyWheel tile \
IR: a kernel plan (for attention a grid over batch, key/value heads and query blocks with a key-block reduction \
loop; for Gated DeltaNet a grid over batch and head groups with the chunks in order), the operands padded and \
rearranged into the kernel's layout, and a `flywheel.attention_kernel` or `flywheel.gated_delta_kernel` op holding \
the kernel module, which the FlyWheel transforms rewrite and `flywheel-lower-to-mosaic` serializes. Block sizes come \
from the options, capped at the sequence lengths and the target's VMEM, or with auto-blocks from compiling the \
candidates. An op no kernel serves stays (for the reference lowering), with a remark saying why.",
    options: TileOptions::SPECS,
    create: |text| Ok(create(TileOptions::parse(text)?)),
};

fn create(options: TileOptions) -> Pass {
    let blocks = Blocks {
        plain: (options.block_q, options.block_kv),
        causal: (options.causal_block_q, options.causal_block_kv),
        key_splits: options.key_splits,
        transposed_whole_keys: options.transposed_whole_keys,
        generation: options.target,
    };
    let (remarks, search) = (options.remarks, options.auto_blocks);
    let kernel = GatedDeltaOptions {
        chunk: options.chunk,
        heads: options.gdn_heads,
        stacked_rows: gated_delta_rows(blocks.generation),
        most_chunks_per_step: gated_delta_chunks(blocks.generation),
        bf16x3: options.gdn_precision == GdnPrecision::Bf16x3,
        single_pass_products: options.gdn_single_pass,
        exp2_gates: options.gdn_exp2,
        chunks_per_step: options.gdn_chunks_per_step,
        block_rows: options.gdn_block_rows,
        token_major: options.gdn_token_major,
    };
    external_pass(&PASS, &PASS_ID, Anchor::Any, move |op: OperationRef| {
        tile(op, blocks, search, remarks) && tile_gated_delta(op, kernel, remarks)
    })
}

/// The kernels' floating element type `name` names: bf16 or f32.
fn floating(name: &str) -> Option<Element> {
    Element::named(name).filter(|element| matches!(element, Element::Bf16 | Element::F32))
}

fn shape(value: Value) -> Result<(Vec<i64>, String), String> {
    let info = TensorInfo::of_value(value).ok_or("an operand is not a ranked tensor")?;
    let dims = info.shape.iter().map(|d| d.ok_or("dynamic shape")).collect::<Result<Vec<_>, _>>()?;
    Ok((dims, info.element_name()))
}

/// The axes of an operand in `layout`, given those of batch, sequence, heads and head dim.
fn in_layout(layout: Layout, [batch, sequence, heads, dim]: [&Axis; 4]) -> Vec<Axis> {
    layout
        .order()
        .iter()
        .map(|role| match role {
            Role::Batch => batch.clone(),
            Role::Sequence => sequence.clone(),
            Role::Heads => heads.clone(),
            Role::HeadDim => dim.clone(),
        })
        .collect()
}

/// `value` (with `axes`) padded with zeros at the end to the sizes of `axes`, then
/// rearranged to `target`.
fn rearranged<'c, 'a>(
    b: &HloBuilder<'c, 'a>,
    atoms: &Atoms,
    value: Value<'c, 'a>,
    axes: &[Axis],
    target: &[Axis],
) -> Result<Value<'c, 'a>, String> {
    let (dims, element) = shape(value)?;
    let padded: Vec<i64> = axes.iter().map(|axis| atoms.axis_size(axis)).collect();
    let value = b.pad_with_zeros(value, &dims, &padded, &element);
    Ok(materialize(b, atoms, value, axes, &element, target))
}

/// The kernel op `name` on `operands`, before `anchor`, with results of `result_types`,
/// its optional operands' `segments` (the `operandSegmentSizes` list) and the cost libtpu
/// is told (flops, transcendentals, bytes accessed); its kernel module, `module(symbol)`
/// text, is placed at the end of the program's top module under a fresh symbol.
#[allow(clippy::too_many_arguments)]
fn kernel_op<'c, 'a>(
    b: &HloBuilder<'c, 'a>,
    anchor: OperationRef<'c, 'a>,
    name: &str,
    module: impl FnOnce(&str) -> String,
    operands: &[Value<'c, 'a>],
    result_types: &[Type<'c>],
    segments: &str,
    [flops, transcendentals, bytes_accessed]: [i64; 3],
) -> Result<OperationRef<'c, 'a>, String> {
    let top = top_module(anchor).ok_or("the op is not inside a module")?;
    let symbol = fresh_symbol(top, "flywheel_kernel");
    let text = module(&symbol);
    let context = anchor.location().context();
    // SAFETY: the context outlives this function (the program lives in it).
    let parsed = parse_kernel_module(unsafe { context.to_ref() }, &text)?;
    let body = top.region(0).ok().and_then(|region| region.first_block()).ok_or("the top module has no body")?;
    // The parsed module's operation moves into the program (appended to its top block,
    // which then owns it), so the parsed module itself is never destroyed.
    let parsed = std::mem::ManuallyDrop::new(parsed);
    unsafe {
        mlir_sys::mlirBlockAppendOwnedOperation(body.to_raw(), mlir_sys::mlirModuleGetOperation(parsed.to_raw()))
    };
    let mut kernel = OperationBuilder::new(name, anchor.location())
        .add_operands(operands)
        .add_results(result_types)
        .build()
        .map_err(|error| error.to_string())?;
    for (attribute, value) in [
        ("operandSegmentSizes", format!("array<i32: {segments}>")),
        ("flops", format!("{flops} : i64")),
        ("transcendentals", format!("{transcendentals} : i64")),
        ("bytes_accessed", format!("{bytes_accessed} : i64")),
        ("kernel", format!("@{symbol}")),
    ] {
        kernel.set_attribute(attribute, b.attribute(&value));
    }
    Ok(b.insert_op(kernel))
}

/// `prefix_N` for the first N no op directly in `module` is named.
fn fresh_symbol(module: OperationRef, prefix: &str) -> String {
    let mut taken = std::collections::HashSet::new();
    if let Some(block) = module.region(0).ok().and_then(|region| region.first_block()) {
        let mut next = block.first_operation();
        while let Some(op) = next {
            if let Some(name) = op.attribute("sym_name").ok().and_then(string_attribute) {
                taken.insert(name);
            }
            next = op.next_in_block();
        }
    }
    (0..).map(|n| format!("{prefix}_{n}")).find(|name| !taken.contains(name)).expect("a free name")
}

/// Whether a window's block of `block` lanes, of an array `array` lanes wide, is one
/// Mosaic takes: whole 128-lane tiles, or the whole array.
fn whole_lanes(block: i64, array: i64) -> bool {
    block % 128 == 0 || block == array
}

/// Replaces `result` (an op's result, in the op's layout) by a kernel's output `value`
/// (with `axes`): rearranged to `output_axes`, then sliced to the result's unpadded shape.
fn replace_with_output<'c, 'a>(
    b: &HloBuilder<'c, 'a>,
    atoms: &Atoms,
    value: Value<'c, 'a>,
    axes: &[Axis],
    element: &str,
    output_axes: &[Axis],
    result: Value<'c, 'a>,
) -> Result<(), String> {
    let output = materialize(b, atoms, value, axes, element, output_axes);
    let padded: Vec<i64> = output_axes.iter().map(|axis| atoms.axis_size(axis)).collect();
    let output = b.leading_slice(output, &padded, &shape(result)?.0, element);
    unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(result.to_raw(), output.to_raw()) };
    Ok(())
}
