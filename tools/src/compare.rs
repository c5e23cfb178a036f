//! Comparing a program's outputs with a reference's: the numbers every rewrite must keep.

use flywheel_kernels::array::{Array, DType};

/// How far a candidate may stray: it passes when its relative L2 error is within `rtol`
/// or its largest absolute error within `atol`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    pub rtol: f64,
    pub atol: f64,
}

impl Tolerance {
    /// The default for an element type: relative L2 error 1e-5 for f32, 2e-2 for bf16
    /// (its 8-bit mantissa), 1e-3 for f16, 1e-12 for f64; integers and booleans exact.
    pub fn for_dtype(dtype: DType) -> Tolerance {
        let rtol = match dtype {
            DType::F64 => 1e-12,
            DType::F32 => 1e-5,
            DType::F16 => 1e-3,
            DType::BF16 => 2e-2,
            _ => 0.0,
        };
        Tolerance { rtol, atol: 0.0 }
    }
}

/// Non-finite element counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NonFinite {
    pub nan: usize,
    pub inf: usize,
}

impl NonFinite {
    fn count(values: &[f64]) -> NonFinite {
        NonFinite {
            nan: values.iter().filter(|v| v.is_nan()).count(),
            inf: values.iter().filter(|v| v.is_infinite()).count(),
        }
    }

    /// Whether there are none.
    pub fn none(&self) -> bool {
        self.nan + self.inf == 0
    }
}

/// The errors of one candidate output against its reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub max_abs: f64,
    /// Largest |candidate - reference| / |reference| over nonzero reference elements.
    pub max_rel: f64,
    /// ||candidate - reference|| / ||reference|| (0 when both are zero).
    pub rel_l2: f64,
    pub reference_nonfinite: NonFinite,
    pub candidate_nonfinite: NonFinite,
    /// Why the candidate fails, if it does.
    pub failure: Option<String>,
}

/// Compares element by element. NaN and infinities must sit at the same places with the
/// same values; the error figures cover the finite elements.
pub fn compare(reference: &Array, candidate: &Array, tolerance: Tolerance) -> Comparison {
    let (a, b) = (reference.values(), candidate.values());
    let mut comparison = Comparison {
        max_abs: 0.0,
        max_rel: 0.0,
        rel_l2: 0.0,
        reference_nonfinite: NonFinite::count(&a),
        candidate_nonfinite: NonFinite::count(&b),
        failure: None,
    };
    if (reference.dtype, &reference.dims) != (candidate.dtype, &candidate.dims) {
        comparison.failure = Some(format!("type {} differs from {}", candidate.type_text(), reference.type_text()));
        return comparison;
    }
    let mut mismatched_nonfinite = 0;
    let (mut error_squares, mut reference_squares) = (0.0, 0.0);
    for (&x, &y) in a.iter().zip(&b) {
        if !x.is_finite() || !y.is_finite() {
            let same = (x.is_nan() && y.is_nan()) || x == y;
            mismatched_nonfinite += usize::from(!same);
            continue;
        }
        let error = (y - x).abs();
        comparison.max_abs = comparison.max_abs.max(error);
        if x != 0.0 {
            comparison.max_rel = comparison.max_rel.max(error / x.abs());
        }
        error_squares += error * error;
        reference_squares += x * x;
    }
    comparison.rel_l2 = if error_squares == 0.0 {
        0.0
    } else if reference_squares == 0.0 {
        f64::INFINITY
    } else {
        (error_squares / reference_squares).sqrt()
    };
    comparison.failure = if mismatched_nonfinite > 0 {
        Some(format!("{mismatched_nonfinite} elements are NaN or infinite in one output but not the other"))
    } else if comparison.rel_l2 > tolerance.rtol && comparison.max_abs > tolerance.atol {
        Some(format!(
            "relative L2 error {:.3e} > rtol {:e} and max abs error {:.3e} > atol {:e}",
            comparison.rel_l2, tolerance.rtol, comparison.max_abs, tolerance.atol
        ))
    } else {
        None
    };
    comparison
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(values: &[f64]) -> Array {
        Array::from_values(DType::F32, vec![values.len() as i64], values)
    }

    #[test]
    fn figures() {
        let c = compare(&f32s(&[1.0, 2.0, 0.0, -4.0]), &f32s(&[1.0, 2.5, 0.5, -4.0]), Tolerance::for_dtype(DType::F32));
        assert_eq!(c.max_abs, 0.5);
        assert_eq!(c.max_rel, 0.25);
        assert!((c.rel_l2 - (0.5f64 / 21.0).sqrt()).abs() < 1e-12);
        assert!(c.failure.unwrap().starts_with("relative L2 error 1.543e-1 > rtol 1e-5"));
    }

    #[test]
    fn tolerances() {
        let reference = f32s(&[1.0, 1.0]);
        let close = f32s(&[1.0, 1.0 + 1e-6]);
        assert_eq!(compare(&reference, &close, Tolerance::for_dtype(DType::F32)).failure, None);
        assert!(compare(&reference, &f32s(&[1.0, 1.001]), Tolerance::for_dtype(DType::F32)).failure.is_some());
        let loose = Tolerance { rtol: 0.0, atol: 1e-2 };
        assert_eq!(compare(&reference, &f32s(&[1.0, 1.001]), loose).failure, None);
        let ints = Array::from_values(DType::I32, vec![2], &[1.0, 2.0]);
        let off = Array::from_values(DType::I32, vec![2], &[1.0, 3.0]);
        assert!(compare(&ints, &off, Tolerance::for_dtype(DType::I32)).failure.is_some());
        assert_eq!(compare(&ints, &ints, Tolerance::for_dtype(DType::I32)).failure, None);
    }

    #[test]
    fn non_finite_must_match() {
        let reference = f32s(&[f64::NAN, f64::INFINITY, 1.0]);
        let c = compare(&reference, &reference.clone(), Tolerance::for_dtype(DType::F32));
        assert_eq!((c.failure, c.reference_nonfinite), (None, NonFinite { nan: 1, inf: 1 }));
        let c = compare(&reference, &f32s(&[f64::NAN, f64::NEG_INFINITY, 1.0]), Tolerance::for_dtype(DType::F32));
        assert!(c.failure.unwrap().contains("1 elements are NaN or infinite"));
    }

    #[test]
    fn types_must_match() {
        let c = compare(&f32s(&[1.0]), &f32s(&[1.0, 2.0]), Tolerance::for_dtype(DType::F32));
        assert_eq!(c.failure.unwrap(), "type tensor<2xf32> differs from tensor<1xf32>");
    }
}
