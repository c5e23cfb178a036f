//! `flywheel-tpu`: the whole chain for a TPU target. Raise attention and Gated DeltaNet,
//! verify, tile each attention the kernel serves (block sizes per target), rewrite its
//! softmax (`flywheel-exp-softmax`), serialize the kernel for Mosaic, and lower what is
//! left to plain StableHLO.

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

/// Query and key block sizes per target, plain and causal: the fastest the baseline
/// kernel's plain grid gave (libtpu 0.0.50.1 static cycles, MHA 8 heads x 2048 tokens x
/// 128, bf16). Plain, on v6e: 1.96M cycles at 128x128, 599K at 256x256, 206K at
/// 256x1024, 149K at 256x2048 (v5e 192K, tpu7x 146K). Causal, on v6e: 271K at 256x2048,
/// 307K at 256x512, 204K at 512x512 (tpu7x 178K). Capped at the sequence lengths.
fn blocks(target: &str) -> ((i64, i64), (i64, i64)) {
    match target {
        "v5e" | "v6e" | "tpu7x" => ((256, 2048), (512, 512)),
        _ => unreachable!("a checked choice"),
    }
}

fn expand(options: &PassOptions) -> String {
    let remarks = options.bool("remarks");
    let ((block_q, block_kv), (causal_q, causal_kv)) = blocks(options.choice("target"));
    format!(
        "flywheel-raise-attention{{remarks={remarks}}},flywheel-raise-gated-delta{{remarks={remarks}}},flywheel-verify,\
         flywheel-tile{{block-q={block_q} block-kv={block_kv} causal-block-q={causal_q} \
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
        assert!(text.contains("flywheel-tile{block-q=256 block-kv=2048 causal-block-q=512 causal-block-kv=512 remarks=true}"), "{text}");
        assert!(crate::pipeline::parse(&text).is_ok());
        assert!(pipeline.expand_with("target=v7x").unwrap_err().contains("v7x"));
    }
}
