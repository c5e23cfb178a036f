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
    options::{OptionKind, OptionSpec, PassOptions},
    pass::PipelineInfo,
    target::{blocks, inverse, kernel_transforms, TARGETS},
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
        assert!(crate::pipelines::parse::parse(&text).is_ok());
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
