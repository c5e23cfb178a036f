//! What FlyWheel's chain chooses per TPU generation: block sizes, how the softmax is
//! rewritten, and how Gated DeltaNet's triangular inverse is solved. Each choice is the
//! fastest of the variants measured with libtpu's static cycle estimates
//! (docs/benchmarks.md has the measurements). `flywheel-tpu` expands to passes with these
//! options, and `flywheel-tile`'s block search runs the same kernel transforms on each
//! candidate.

crate::choice! {
    /// A TPU generation, as a `target` option names it.
    pub enum Generation {
        V5e = "v5e",
        V6e = "v6e",
        /// Its 64 MiB of VMEM is half v6e's.
        Tpu7x = "tpu7x",
    }
}

/// Query and key block sizes, plain and causal, when `auto-blocks` is off: the fastest an
/// auto-blocks search gave at MHA 8 heads x 2048 tokens x 128. On v6e, whose VMEM takes
/// twice the score tile without a mask or bias operand, plain 2048 x 2048.
/// `flywheel-tile` caps them at the sequence lengths and at its VMEM budget.
pub fn blocks(target: Generation) -> ((i64, i64), (i64, i64)) {
    match target {
        Generation::V6e => ((2048, 2048), (1024, 1024)),
        Generation::V5e | Generation::Tpu7x => ((1024, 2048), (1024, 1024)),
    }
}

/// `flywheel-tri-inverse`'s method: on v6e, where sixteen or more inverses are solved
/// together, their products in one bf16 pass with one Newton step; with fewer, the step's
/// two serial products cost more than the passes save, as they do on tpu7x. v5e is
/// unmeasured (libtpu's profile aborts on its GDN kernels).
pub fn inverse(target: Generation) -> &'static str {
    match target {
        Generation::V6e => "refine-from=16",
        Generation::V5e | Generation::Tpu7x => "refine-from=0",
    }
}

/// `flywheel-exp-softmax`'s `fold-scale`: `split` where the MXU is 256 deep (v6e, tpu7x:
/// at head dim 128 the split rides in the contraction's empty half), except in tpu7x's
/// banded kernels, where libtpu 0.0.50.1's static profile aborts on it; `exact` on v5e,
/// whose 128-deep MXU would take a second pass.
pub fn fold_scale(target: Generation) -> &'static str {
    match target {
        Generation::V5e => "exact",
        Generation::V6e => "split",
        Generation::Tpu7x => "split-unbanded",
    }
}

/// The passes `flywheel-tpu` runs on a tiled attention kernel for `target`, which
/// `flywheel-tile`'s block search also runs on each candidate: the softmax rewrites and
/// pipelining. The running max is lagged in transposed kernels, and on v6e in causal ones
/// the layout keeps standard (not on tpu7x, where that is slower; v5e is unmeasured); its
/// lagged steps keep m₀ + log(l) instead of reducing a max. The step's state is stored
/// before the redo branch, whose exact arm stores its own over it, except on tpu7x, whose
/// transposed kernel at 2048 x 1024 blocks lacks the VMEM for it: there the branch yields
/// the state.
pub fn kernel_transforms(target: Generation, remarks: bool) -> String {
    let fold = fold_scale(target);
    let redo_stores = if target == Generation::Tpu7x { "false" } else { "before" };
    let lagged = if target == Generation::V6e { "transposed-or-causal" } else { "transposed" };
    format!(
        "flywheel-exp-softmax{{fold-scale={fold} lagged-max={lagged} lagged-stabilizer=sum redo-stores={redo_stores} remarks={remarks}}},flywheel-pipeline{{remarks={remarks}}}"
    )
}
