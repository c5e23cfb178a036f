//! `flywheel-tpu`: the whole chain for a TPU target. Raise attention and Gated DeltaNet,
//! verify, choose kernel layouts (`flywheel-layout`) and the key loop's software
//! pipeline (`flywheel-pipeline`), tile each attention the kernel serves (block sizes
//! per target), rewrite its softmax (`flywheel-exp-softmax`), serialize the kernel for
//! Mosaic, and lower what is left to plain StableHLO.

use crate::{
    options::{OptionKind, OptionSpec, PassOptions},
    registry::PipelineInfo,
};

const OPTIONS: &[OptionSpec] = &[
    OptionSpec { name: "target", kind: OptionKind::Choice(&["v5e", "v6e", "tpu7x"]), default: "v6e", help: "The TPU generation" },
    OptionSpec { name: "remarks", kind: OptionKind::Bool, default: "false", help: "Remark on what each pass did and did not do" },
];

pub const PIPELINE: PipelineInfo = PipelineInfo {
    name: "flywheel-tpu",
    summary: "Raise, verify, lower attention to Mosaic kernels and the rest to StableHLO, for a TPU target",
    options: OPTIONS,
    expand,
};

/// Query and key block sizes per target, plain and causal: the fastest the kernel gave
/// (libtpu 0.0.50.1 static cycles, MHA 8 heads x 2048 tokens x 128, bf16, with
/// flywheel-exp-softmax). Plain, on v6e: 148K cycles at 256x2048, 133K at 512x2048,
/// 161K at 1024x1024, 118K at 1024x2048 (tpu7x 115K), 117K at 2048x2048. Causal, on
/// v6e: 202K at 512x512, 195K at 512x1024, 200K at 1024x512, 172K at 1024x1024 (tpu7x
/// 164K). `flywheel-tile` caps them at the sequence lengths and at its VMEM budget.
fn blocks(target: &str) -> ((i64, i64), (i64, i64)) {
    match target {
        "v5e" | "v6e" | "tpu7x" => ((1024, 2048), (1024, 1024)),
        _ => unreachable!("a checked choice"),
    }
}

fn expand(options: &PassOptions) -> String {
    let remarks = options.bool("remarks");
    let ((block_q, block_kv), (causal_q, causal_kv)) = blocks(options.choice("target"));
    format!(
        "flywheel-raise-attention{{remarks={remarks}}},flywheel-raise-gated-delta{{remarks={remarks}}},flywheel-verify,\
         flywheel-layout{{remarks={remarks}}},flywheel-pipeline{{remarks={remarks}}},flywheel-tile{{block-q={block_q} block-kv={block_kv} causal-block-q={causal_q} \
         causal-block-kv={causal_kv} remarks={remarks}}},flywheel-exp-softmax{{remarks={remarks}}},flywheel-lower-to-mosaic,\
         flywheel-lower-to-stablehlo"
    )
}

#[cfg(test)]
mod tests {
    use crate::registry::find_pipeline;

    #[test]
    fn expands_with_target_blocks_and_rejects_unknown_targets() {
        let pipeline = find_pipeline("flywheel-tpu").unwrap();
        let text = pipeline.expand_with("target=v5e remarks=true").unwrap();
        assert!(text.contains("flywheel-tile{block-q=1024 block-kv=2048 causal-block-q=1024 causal-block-kv=1024 remarks=true}"), "{text}");
        assert!(crate::pipeline::parse(&text).is_ok());
        assert!(pipeline.expand_with("target=v7x").unwrap_err().contains("v7x"));
    }
}
