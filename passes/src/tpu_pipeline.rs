//! `flywheel-tpu`: the whole chain for a TPU target. Raise attention and Gated DeltaNet,
//! verify, put them in manually partitioned regions in a program sharded over chips
//! (`flywheel-shard`), choose kernel layouts (`flywheel-layout`: the transposed orientation
//! where it wins), tile each attention the kernel serves (block sizes per target, key
//! blocks in two sub-blocks, one in transposed kernels from 1024 keys a block unless
//! causal ones skip part of their diagonal blocks) and each
//! Gated DeltaNet (chunks of the op's chunk size), rewrite the softmax
//! (`flywheel-exp-softmax`: the max lagged in transposed kernels, and on v6e in causal
//! ones, and replaced there by one from the running sum), software-pipeline the key blocks (`flywheel-pipeline`),
//! block GDN's triangular inverse (`flywheel-tri-inverse`; on v6e in one bf16 pass and
//! a Newton step), serialize the kernels for
//! Mosaic, and lower what is left to plain StableHLO.

use crate::{
    options::{Generation, OptionKind, OptionSpec, PassOptions, TARGETS},
    registry::PipelineInfo,
};

const OPTIONS: &[OptionSpec] = &[
    OptionSpec { name: "target", kind: OptionKind::Choice(TARGETS), default: "v6e", help: "The TPU generation" },
    OptionSpec {
        name: "auto-blocks",
        kind: OptionKind::Bool,
        default: "false",
        help: "Choose block sizes by compiling candidates for the target (flywheel-tile auto-blocks; cached)",
    },
    OptionSpec {
        name: "remarks",
        kind: OptionKind::Bool,
        default: "false",
        help: "Remark on what each pass did and did not do",
    },
];

pub const PIPELINE: PipelineInfo = PipelineInfo {
    name: "flywheel-tpu",
    summary: "Raise, verify, lower attention to Mosaic kernels and the rest to StableHLO, for a TPU target",
    options: OPTIONS,
    expand,
};

/// Query and key block sizes per target, plain and causal, when `auto-blocks` is off: the
/// fastest the kernel gave in an auto-blocks search (libtpu 0.0.50.1 static cycles, MHA 8
/// heads x 2048 tokens x 128, bf16, flywheel-tpu's transforms). Plain, on v6e: 105K at
/// 512x1024, 91K at 512x2048, 94K at 1024x1024, 88K at 1024x2048, 88K at 2048x1024.
/// Causal, on v6e: 107K at 512x512, 89K at 512x1024, 102K at 1024x512, 80K at 1024x1024,
/// 123K at 2048x512. On v6e, whose VMEM takes twice the score tile without a mask or bias
/// operand, plain 2048 x 2048 (the transposed kernel with the lagged max, MHA 8 x 8192: 983,414
/// cycles against 1,082,308 at 1024 x 2048; 8 x 2048: 64,125 against 70,192).
/// `flywheel-tile` caps them at the sequence lengths and at its VMEM budget.
fn blocks(target: Generation) -> ((i64, i64), (i64, i64)) {
    match target {
        Generation::V6e => ((2048, 2048), (1024, 1024)),
        Generation::V5e | Generation::Tpu7x => ((1024, 2048), (1024, 1024)),
    }
}

/// The chain for the options' target. Key blocks are two sub-blocks, which
/// flywheel-pipeline overlaps, except in transposed kernels from 1024 keys a block, where
/// the lagged max already lets exp follow the QKᵀ matmul (libtpu 0.0.50.1 static cycles,
/// one sub-block against two: v6e MHA 8 x 8192 975,734 against 983,414, causal GQA 32/8 x
/// 8192 2,719,194 against 2,780,762, MHA 8 x 1024 21,155 against 21,707; tpu7x MHA 8 x
/// 8192 1,162,138 against 1,230,490, causal GQA 32/8 x 8192 3,616,861 against 3,636,701;
/// at 512 keys two are the faster: v6e MHA 8 x 512 10,666 against 11,002, causal 10,602
/// against 10,674, tpu7x causal 10,510 against 10,646).
fn expand(options: &PassOptions) -> String {
    let remarks = options.bool("remarks");
    let (generation, auto_blocks) = (options.generation("target"), options.bool("auto-blocks"));
    let ((block_q, block_kv), (causal_q, causal_kv)) = blocks(generation);
    let target = generation.name();
    format!(
        "flywheel-raise-attention{{remarks={remarks}}},flywheel-raise-gated-delta{{remarks={remarks}}},flywheel-verify,\
         flywheel-shard{{remarks={remarks}}},flywheel-layout{{orientation=auto target={target} remarks={remarks}}},flywheel-tile{{block-q={block_q} block-kv={block_kv} causal-block-q={causal_q} \
         causal-block-kv={causal_kv} key-splits=2 transposed-whole-keys=1024 auto-blocks={auto_blocks} target={target} remarks={remarks}}},{},\
         flywheel-tri-inverse{{{} remarks={remarks}}},flywheel-lower-to-mosaic,flywheel-lower-to-stablehlo",
        kernel_transforms(generation, remarks),
        inverse(generation)
    )
}

/// `flywheel-tri-inverse`'s method for `target`. On v6e, where sixteen or more inverses
/// are solved together, their products in one bf16 pass with one Newton step (libtpu
/// 0.0.50.1 static cycles, the 8 key / 16 value head GDN at 2048 tokens, sixteen heads a
/// step, eight blocks of two heads, two chunks solved together: 170,254 against 199,678
/// with bf16x3 products); with fewer the step's two serial products cost more than the
/// passes save (4 / 8 heads at 2048 tokens, eight solved together: 109,622 refined
/// against 105,310). On tpu7x, eight heads a step, the same (its 4 / 8 head GDN at 2048
/// tokens: 118,585 against 114,953); v5e is unmeasured (its profile aborts on GDN).
fn inverse(target: Generation) -> &'static str {
    match target {
        Generation::V6e => "refine-from=16",
        Generation::V5e | Generation::Tpu7x => "refine-from=0",
    }
}

/// The passes `flywheel-tpu` runs on a tiled attention kernel for `target`, which
/// `flywheel-tile`'s block search also runs on each candidate: the softmax rewrites (the
/// lagged max where the layout chose the transposed orientation, its lagged steps keeping
/// m₀ + log(l) instead of reducing a max: libtpu 0.0.50.1 static cycles at the
/// default blocks, v6e MHA 8 x 8192 x 128 906,998 against 975,734, x 256 1,287,480
/// against 1,480,248, both with the stores below; tpu7x MHA 8 x 8192 x 128 1,105,562
/// against 1,162,138) and
/// pipelining. The step's state is stored before the redo branch, whose exact arm stores
/// its own over it (v6e MHA 8 x 2048 x 128: 58,525 cycles against 60,557 with the stores
/// in both arms; MHA 8 x 4096 x 256 329,885 against 336,477). On tpu7x the branch yields
/// the state: storing it before the branch or in it takes VMEM its transposed kernel at
/// 2048 x 1024 blocks lacks (MHA 8 x 8192: 64.18M and 64.49M of 63.94M). On v6e the
/// causal kernels the layout keeps standard are lagged too (causal GQA 16/2 x 8192 x 256:
/// 1,897,020 against 2,148,476; causal MHA 8 x 2048 x 256: 96,845 against 105,725), not
/// those with a window (MHA 8 x 2048 x 256, window 512: 124,007 against 119,303); on
/// tpu7x a causal standard kernel lagged is the slower (MHA 8 x 2048 x 64: 107,850
/// against 94,467), and v5e is unmeasured.
pub fn kernel_transforms(target: Generation, remarks: bool) -> String {
    let fold = crate::exp_softmax::fold_for_target(target);
    let redo_stores = if target == Generation::Tpu7x { "false" } else { "before" };
    let lagged = if target == Generation::V6e { "transposed-or-causal" } else { "transposed" };
    format!("flywheel-exp-softmax{{fold-scale={fold} lagged-max={lagged} lagged-stabilizer=sum redo-stores={redo_stores} remarks={remarks}}},flywheel-pipeline{{remarks={remarks}}}")
}

#[cfg(test)]
mod tests {
    use crate::registry::find_pipeline;

    #[test]
    fn expands_with_target_blocks_and_rejects_unknown_targets() {
        let pipeline = find_pipeline("flywheel-tpu").unwrap();
        let text = pipeline.expand_with("target=v5e remarks=true").unwrap();
        assert!(text.contains("flywheel-tile{block-q=1024 block-kv=2048 causal-block-q=1024 causal-block-kv=1024 key-splits=2 transposed-whole-keys=1024 auto-blocks=false target=v5e remarks=true}"), "{text}");
        assert!(text.contains("flywheel-layout{orientation=auto target=v5e remarks=true}"), "{text}");
        assert!(text.contains("flywheel-exp-softmax{fold-scale=exact lagged-max=transposed lagged-stabilizer=sum redo-stores=before remarks=true}"), "{text}");
        assert!(crate::pipeline::parse(&text).is_ok());
        assert!(pipeline.expand_with("target=tpu7x").unwrap().contains("flywheel-exp-softmax{fold-scale=split-unbanded lagged-max=transposed lagged-stabilizer=sum redo-stores=false remarks=false}"));
        assert!(pipeline
            .expand_with("target=v6e")
            .unwrap()
            .contains("lagged-max=transposed-or-causal lagged-stabilizer=sum redo-stores=before"));
        assert!(pipeline.expand_with("target=v6e").unwrap().contains("flywheel-tile{block-q=2048 block-kv=2048 causal-block-q=1024 causal-block-kv=1024 key-splits=2 transposed-whole-keys=1024"));
        assert!(pipeline
            .expand_with("target=v6e")
            .unwrap()
            .contains("flywheel-tri-inverse{refine-from=16 remarks=false}"));
        assert!(pipeline
            .expand_with("target=tpu7x")
            .unwrap()
            .contains("flywheel-tri-inverse{refine-from=0 remarks=false}"));
        assert!(pipeline.expand_with("target=v7x").unwrap_err().contains("v7x"));
    }
}
