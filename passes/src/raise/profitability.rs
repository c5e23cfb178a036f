//! Whether a kernel beats what XLA makes of the attention it would replace, per target.
//! A Mosaic kernel pays a fixed cost per grid step and the layout copies around it, which
//! XLA's fused attention does not: on short sequences XLA wins. The crossovers are
//! measured (libtpu's static cycles of plain jnp attention before and after
//! `flywheel-tpu`: `bench/crossover.py`, its table in docs/benchmarks.md) over 128 to 2048
//! tokens, and taken conservatively: the longest over the kinds measured (MHA, GQA,
//! causal, windowed; apart, a mask operand, which the kernel reads), and for an
//! unmeasured target the longest over the measured ones. Where no measured length had the
//! kernel win, XLA keeps the attention.

use crate::target::Generation;

crate::choice! {
    /// Whether a raising pass keeps XLA's ops where its kernel would be slower.
    pub enum Profitability {
        /// Raise every match (benchmarks and kernel tests force the kernel so).
        Off = "off",
        /// Raise where the target's measured crossover says the kernel wins.
        Model = "model",
    }
}

/// What the crossover depends on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttentionShape {
    pub query_tokens: i64,
    pub key_tokens: i64,
    pub head_dim: i64,
    /// The kernel would read a mask or bias operand.
    pub masked: bool,
    /// The kernel would compute its products in f32 (f32 operands): exact passes, where
    /// XLA's DEFAULT-precision dots take one bf16 pass.
    pub f32: bool,
}

/// The decision and why, for a remark.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Kernel(String),
    Xla(String),
}

/// The shortest sequence from which the bf16 kernel beats XLA on `target`, without and
/// with a mask operand, at head dim 64 and at 128 (None: at no measured length); None
/// for an unmeasured target.
fn measured(target: Generation) -> Option<[[Option<i64>; 2]; 2]> {
    match target {
        Generation::V6e => Some([[Some(1024), Some(512)], [None, Some(1024)]]),
        Generation::Tpu7x => Some([[None, Some(512)], [None, None]]),
        Generation::V5e => None,
    }
}

const MEASURED_TARGETS: [Generation; 2] = [Generation::V6e, Generation::Tpu7x];

/// The crossover for `target` at `head_dim` (below 128: head dim 64's, the longer).
fn crossover(target: Generation, masked: bool, head_dim: i64) -> Option<i64> {
    let (row, column) = (usize::from(masked), usize::from(head_dim >= 128));
    match measured(target) {
        Some(table) => table[row][column],
        None => MEASURED_TARGETS
            .iter()
            .map(|&target| measured(target).expect("measured")[row][column])
            .collect::<Option<Vec<i64>>>()
            .and_then(|lengths| lengths.into_iter().max()),
    }
}

/// Keep the kernel for an attention of `shape` on `target`, or XLA's ops.
pub fn attention(target: Generation, shape: AttentionShape) -> Verdict {
    let sizes = format!(
        "{} queries x {} keys at head dim {} in {}{}",
        shape.query_tokens,
        shape.key_tokens,
        shape.head_dim,
        if shape.f32 { "f32" } else { "bf16" },
        if shape.masked { ", masked" } else { "" }
    );
    let threshold = if shape.f32 { None } else { crossover(target, shape.masked, shape.head_dim) };
    let name = target.name();
    match threshold {
        None => Verdict::Xla(format!("{sizes}: no measured length has the kernel beat XLA on {name}")),
        Some(from) if shape.query_tokens.min(shape.key_tokens) >= from => {
            Verdict::Kernel(format!("{sizes}: the kernel beats XLA on {name} from {from} tokens"))
        }
        Some(from) => Verdict::Xla(format!("{sizes}: the kernel beats XLA on {name} only from {from} tokens")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(tokens: (i64, i64), head_dim: i64, masked: bool, f32: bool) -> AttentionShape {
        AttentionShape { query_tokens: tokens.0, key_tokens: tokens.1, head_dim, masked, f32 }
    }

    fn kernel(target: Generation, shape: AttentionShape) -> bool {
        matches!(attention(target, shape), Verdict::Kernel(_))
    }

    #[test]
    fn keeps_xla_below_the_crossover_and_the_kernel_from_it() {
        for target in MEASURED_TARGETS {
            for (head_dim, masked) in [64, 96, 128, 256].into_iter().flat_map(|d| [(d, false), (d, true)]) {
                let Some(at) = crossover(target, masked, head_dim) else {
                    assert!(!kernel(target, shape((1 << 16, 1 << 16), head_dim, masked, false)));
                    continue;
                };
                assert!(kernel(target, shape((at, at), head_dim, masked, false)));
                assert!(!kernel(target, shape((at - 1, at), head_dim, masked, false)));
                assert!(!kernel(target, shape((at, at - 1), head_dim, masked, false)));
                // Decoding: one query against a long cache stays XLA's.
                assert!(!kernel(target, shape((1, 8 * at), head_dim, masked, false)));
                // An f32 kernel is never measured faster.
                assert!(!kernel(target, shape((8 * at, 8 * at), head_dim, masked, true)));
            }
        }
        assert!(kernel(Generation::V6e, shape((512, 512), 128, false, false)));
        assert!(!kernel(Generation::V6e, shape((512, 512), 128, true, false)));
        assert!(!kernel(Generation::V6e, shape((512, 512), 64, false, false)));
        assert!(kernel(Generation::V6e, shape((1024, 1024), 64, false, false)));
        assert!(!kernel(Generation::Tpu7x, shape((1024, 1024), 64, false, false)));
    }

    #[test]
    fn an_unmeasured_target_takes_the_longest_measured_crossover() {
        for (head_dim, masked) in [(64, false), (128, false), (64, true), (128, true)] {
            let lengths: Option<Vec<i64>> =
                MEASURED_TARGETS.iter().map(|&target| crossover(target, masked, head_dim)).collect();
            let longest = lengths.map(|lengths| lengths.into_iter().max().unwrap());
            assert_eq!(crossover(Generation::V5e, masked, head_dim), longest);
        }
        assert_eq!(crossover(Generation::V5e, false, 128), Some(512));
        assert_eq!(crossover(Generation::V5e, false, 64), None);
    }
}
