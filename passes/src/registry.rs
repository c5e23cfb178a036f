//! The one list of FlyWheel passes and pipelines, by the names pipelines and `--flag`s
//! use. Only the drivers (`flywheel-opt`, pipeline parsing) read it.

use crate::pass::{PassInfo, PipelineInfo};

/// Every named pipeline.
pub fn pipelines() -> &'static [PipelineInfo] {
    static PIPELINES: &[PipelineInfo] = &[crate::pipelines::tpu::PIPELINE];
    PIPELINES
}

pub fn find_pipeline(name: &str) -> Option<&'static PipelineInfo> {
    pipelines().iter().find(|pipeline| pipeline.name == name)
}

/// Every FlyWheel pass, in pipeline order.
pub fn passes() -> &'static [PassInfo] {
    static PASSES: &[PassInfo] = &[
        crate::prepare::verify::PASS,
        crate::raise::attention::PASS,
        crate::raise::gated_delta::PASS,
        crate::prepare::shard::PASS,
        crate::prepare::layout::PASS,
        crate::transforms::software_pipeline::PASS,
        crate::tile::PASS,
        crate::transforms::exp_softmax::PASS,
        crate::transforms::tri_inverse::PASS,
        crate::lower::to_mosaic::PASS,
        crate::lower::to_stablehlo::PASS,
    ];
    PASSES
}

pub fn find_pass(name: &str) -> Option<&'static PassInfo> {
    passes().iter().find(|pass| pass.name == name)
}
