//! Host arrays: the inputs and outputs of a program run on a PJRT plugin, kept as raw
//! little-endian bytes plus an element type, so bf16 and f16 (which the `pjrt` crate
//! cannot represent) travel untouched. Values are read as f64 only to summarize and
//! compare.

use half::{bf16, f16};
use std::fmt;

/// The element types FlyWheel moves between the host, PJRT and `.npy` files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    F32,
    F64,
}

impl DType {
    pub const ALL: [DType; 13] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
    ];

    /// The element type as MLIR spells it.
    pub fn mlir_name(self) -> &'static str {
        match self {
            DType::Bool => "i1",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "ui8",
            DType::U16 => "ui16",
            DType::U32 => "ui32",
            DType::U64 => "ui64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    pub fn from_mlir_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|dtype| dtype.mlir_name() == name)
    }

    /// Bytes per element (booleans take one byte, as in numpy and PJRT).
    pub fn size(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.mlir_name())
    }
}

/// A dense row-major array.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    pub dtype: DType,
    pub dims: Vec<i64>,
    /// Little-endian elements, `dims.product() * dtype.size()` bytes.
    pub bytes: Vec<u8>,
}

impl Array {
    /// Wraps raw bytes, checking their length against the shape.
    pub fn from_bytes(dtype: DType, dims: Vec<i64>, bytes: Vec<u8>) -> Result<Array, String> {
        let expected = element_count(&dims).saturating_mul(dtype.size());
        if bytes.len() != expected {
            return Err(format!(
                "{} bytes do not hold a {} array of {dtype} ({expected} bytes)",
                bytes.len(),
                shape_text(&dims)
            ));
        }
        Ok(Array { dtype, dims, bytes })
    }

    /// Builds an array from values, rounding each to the element type (to nearest even
    /// for floats, saturating for integers).
    pub fn from_values(dtype: DType, dims: Vec<i64>, values: &[f64]) -> Array {
        assert_eq!(values.len(), element_count(&dims), "value count does not match the shape");
        let mut bytes = Vec::with_capacity(values.len() * dtype.size());
        for &value in values {
            match dtype {
                DType::Bool => bytes.push(u8::from(value != 0.0)),
                DType::I8 => bytes.extend((value as i8).to_le_bytes()),
                DType::I16 => bytes.extend((value as i16).to_le_bytes()),
                DType::I32 => bytes.extend((value as i32).to_le_bytes()),
                DType::I64 => bytes.extend((value as i64).to_le_bytes()),
                DType::U8 => bytes.extend((value as u8).to_le_bytes()),
                DType::U16 => bytes.extend((value as u16).to_le_bytes()),
                DType::U32 => bytes.extend((value as u32).to_le_bytes()),
                DType::U64 => bytes.extend((value as u64).to_le_bytes()),
                DType::F16 => bytes.extend(f16::from_f64(value).to_le_bytes()),
                DType::BF16 => bytes.extend(bf16::from_f64(value).to_le_bytes()),
                DType::F32 => bytes.extend((value as f32).to_le_bytes()),
                DType::F64 => bytes.extend(value.to_le_bytes()),
            }
        }
        Array { dtype, dims, bytes }
    }

    /// Pseudo-random contents for a program input: floats from a standard normal
    /// distribution, booleans fair coin flips, integers uniform in [0, 16).
    pub fn random(dtype: DType, dims: Vec<i64>, rng: &mut Rng) -> Array {
        let values: Vec<f64> = (0..element_count(&dims))
            .map(|_| match dtype {
                DType::Bool => (rng.next_u64() >> 63) as f64,
                _ if dtype.is_float() => rng.normal(),
                _ => (rng.next_u64() >> 60) as f64,
            })
            .collect();
        Array::from_values(dtype, dims, &values)
    }

    pub fn len(&self) -> usize {
        element_count(&self.dims)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every element widened to f64 (exact for all types but 64-bit integers beyond 2^53).
    pub fn values(&self) -> Vec<f64> {
        self.bytes
            .chunks_exact(self.dtype.size())
            .map(|b| match self.dtype {
                DType::Bool => f64::from(u8::from(b[0] != 0)),
                DType::I8 => f64::from(b[0] as i8),
                DType::I16 => f64::from(i16::from_le_bytes([b[0], b[1]])),
                DType::I32 => f64::from(i32::from_le_bytes(b.try_into().unwrap())),
                DType::I64 => i64::from_le_bytes(b.try_into().unwrap()) as f64,
                DType::U8 => f64::from(b[0]),
                DType::U16 => f64::from(u16::from_le_bytes([b[0], b[1]])),
                DType::U32 => f64::from(u32::from_le_bytes(b.try_into().unwrap())),
                DType::U64 => u64::from_le_bytes(b.try_into().unwrap()) as f64,
                DType::F16 => f16::from_le_bytes([b[0], b[1]]).to_f64(),
                DType::BF16 => bf16::from_le_bytes([b[0], b[1]]).to_f64(),
                DType::F32 => f64::from(f32::from_le_bytes(b.try_into().unwrap())),
                DType::F64 => f64::from_le_bytes(b.try_into().unwrap()),
            })
            .collect()
    }

    /// The type as MLIR spells it: `tensor<2x3xf32>`.
    pub fn type_text(&self) -> String {
        type_text(self.dtype, &self.dims)
    }

    /// FNV-1a over the raw bytes: equal checksums mean bit-identical contents.
    pub fn checksum(&self) -> u64 {
        self.bytes
            .iter()
            .fold(0xcbf2_9ce4_8422_2325, |hash, &byte| (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3))
    }
}

/// A tensor type as MLIR spells it: `tensor<2x3xf32>`.
pub fn type_text(dtype: DType, dims: &[i64]) -> String {
    let dims: String = dims.iter().map(|dim| format!("{dim}x")).collect();
    format!("tensor<{dims}{dtype}>")
}

/// The number of elements of a shape; `usize::MAX` when that overflows (a hostile
/// header's shape), which no buffer holds.
pub fn element_count(dims: &[i64]) -> usize {
    dims.iter().try_fold(1usize, |count, &dim| count.checked_mul(dim.max(0) as usize)).unwrap_or(usize::MAX)
}

fn shape_text(dims: &[i64]) -> String {
    let parts: Vec<String> = dims.iter().map(i64::to_string).collect();
    format!("[{}]", parts.join(", "))
}

/// A small deterministic generator (SplitMix64), so `--seed N` reproduces inputs on
/// every machine without a dependency.
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// A standard normal sample (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit(), self.unit());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_through_bytes() {
        for dtype in DType::ALL {
            let values = if dtype == DType::Bool { [0.0, 1.0, 1.0, 0.0] } else { [0.0, 1.0, 3.0, 100.0] };
            let array = Array::from_values(dtype, vec![2, 2], &values);
            assert_eq!(array.bytes.len(), 4 * dtype.size());
            assert_eq!(array.values(), values, "{dtype}");
            assert_eq!(DType::from_mlir_name(dtype.mlir_name()), Some(dtype));
        }
    }

    #[test]
    fn floats_round_to_nearest_even() {
        // 1 + 2^-8 is halfway between two bf16 values: it rounds to the even one, 1.0.
        let array = Array::from_values(DType::BF16, vec![2], &[1.0 + 1.0 / 256.0, 1.0 + 3.0 / 256.0]);
        assert_eq!(array.values(), [1.0, 1.0 + 4.0 / 256.0]);
    }

    #[test]
    fn random_inputs_are_reproducible_and_plausible() {
        let a = Array::random(DType::F32, vec![1000], &mut Rng::new(7));
        assert_eq!(a, Array::random(DType::F32, vec![1000], &mut Rng::new(7)));
        assert_ne!(a, Array::random(DType::F32, vec![1000], &mut Rng::new(8)));
        let values = a.values();
        let mean = values.iter().sum::<f64>() / 1000.0;
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 1000.0;
        assert!(mean.abs() < 0.1 && (variance - 1.0).abs() < 0.15, "mean {mean} variance {variance}");
        let ints = Array::random(DType::I32, vec![100], &mut Rng::new(1)).values();
        assert!(ints.iter().all(|&v| (0.0..16.0).contains(&v)));
    }

    #[test]
    fn length_is_checked() {
        assert!(Array::from_bytes(DType::F32, vec![2, 2], vec![0; 15]).is_err());
        assert!(Array::from_bytes(DType::F32, vec![2, 2], vec![0; 16]).is_ok());
    }
}
