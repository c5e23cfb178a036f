//! `flywheel-tpu`: the whole chain for a TPU target (see [`PIPELINE`]).

use crate::{
    options::Options,
    pass::PipelineInfo,
    raise::profitability::Profitability,
    target::{blocks, inverse, kernel_transforms, Generation},
};

crate::pass_options! {
    pub struct TpuOptions {
        /// The TPU generation
        target: Generation = ("target", "v6e"),
        /// Choose block sizes by compiling candidates for the target (flywheel-tile auto-blocks; cached)
        auto_blocks: bool = ("auto-blocks", "false"),
        /// Remark on what each pass did and did not do
        remarks: bool = ("remarks", "false"),
        /// Keep XLA's ops for an attention whose kernel would be slower on the target (model), or give every attention a kernel (off)
        profitability: Profitability = ("profitability", "model"),
    }
}

pub const PIPELINE: PipelineInfo = PipelineInfo {
    name: "flywheel-tpu",
    summary: "Raise, verify, lower attention to Mosaic kernels and the rest to StableHLO, for a TPU target",
    description:
        "Normalizes JAX's spellings (`flywheel-normalize`), raises attention (where its kernel beats XLA's ops on the \
target: `profitability`) and Gated DeltaNet, verifies them, puts them in manually partitioned regions in a \
program sharded over chips (`flywheel-shard`), chooses kernel layouts (`flywheel-layout`: the transposed orientation \
where it wins), tiles each attention and Gated DeltaNet a kernel serves (block sizes per target; attention key \
blocks in two sub-blocks, one in transposed kernels from 1024 keys a block unless causal ones skip part of their \
diagonal blocks), rewrites the softmax (`flywheel-exp-softmax`, with the target's choices), software-pipelines the \
kernels (`flywheel-pipeline`), blocks Gated DeltaNet's triangular inverse (`flywheel-tri-inverse`), serializes the \
kernels for Mosaic, and lowers what is left to plain StableHLO.",
    options: TpuOptions::SPECS,
    expand: |text| Ok(expand(TpuOptions::parse(text)?)),
};

/// The chain for the options' target. Key blocks are two sub-blocks, which
/// flywheel-pipeline overlaps, except in transposed kernels from 1024 keys a block, where
/// the lagged max already lets exp follow the QKᵀ matmul.
fn expand(TpuOptions { target: generation, auto_blocks, remarks, profitability }: TpuOptions) -> String {
    let ((block_q, block_kv), (causal_q, causal_kv)) = blocks(generation);
    let target = generation.name();
    format!(
        "flywheel-normalize{{remarks={remarks}}},flywheel-raise-attention{{remarks={remarks} profitability={} target={target}}},flywheel-raise-gated-delta{{remarks={remarks}}},flywheel-verify,\
         flywheel-shard{{remarks={remarks}}},flywheel-layout{{orientation=auto target={target} remarks={remarks}}},flywheel-tile{{block-q={block_q} block-kv={block_kv} causal-block-q={causal_q} \
         causal-block-kv={causal_kv} key-splits=2 transposed-whole-keys=1024 auto-blocks={auto_blocks} target={target} remarks={remarks}}},{},\
         flywheel-tri-inverse{{{} remarks={remarks}}},flywheel-lower-to-mosaic,flywheel-lower-to-stablehlo",
        profitability.name(),
        kernel_transforms(generation, remarks),
        inverse(generation)
    )
}

#[cfg(test)]
mod tests {
    use super::PIPELINE as pipeline;

    #[test]
    fn expands_with_target_blocks_and_rejects_unknown_targets() {
        let text = pipeline.expand_with("target=v5e remarks=true").unwrap();
        assert!(text.contains("flywheel-tile{block-q=1024 block-kv=2048 causal-block-q=1024 causal-block-kv=1024 key-splits=2 transposed-whole-keys=1024 auto-blocks=false target=v5e remarks=true}"), "{text}");
        assert!(text.contains("flywheel-layout{orientation=auto target=v5e remarks=true}"), "{text}");
        assert!(text.contains("flywheel-exp-softmax{fold-scale=exact lagged-max=transposed lagged-stabilizer=sum redo-stores=before remarks=true}"), "{text}");
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
        assert!(pipeline
            .expand_with("target=tpu7x")
            .unwrap()
            .contains("flywheel-raise-attention{remarks=false profitability=model target=tpu7x}"));
        assert!(pipeline
            .expand_with("profitability=off")
            .unwrap()
            .contains("flywheel-raise-attention{remarks=false profitability=off target=v6e}"));
    }
}
