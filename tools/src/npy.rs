//! numpy's `.npy` and `.npz` formats, so program inputs and outputs move between FlyWheel
//! and numpy/JAX. `.npz` is a zip of `.npy` members; FlyWheel writes it uncompressed, as
//! `np.savez` does, and reads stored or deflated (`np.savez_compressed`) archives.
//!
//! numpy has no bfloat16: it saves `ml_dtypes.bfloat16` arrays as 2-byte voids (`<V2`),
//! so FlyWheel writes bf16 that way and reads `<V2` as bf16
//! (`np.load(f)["arr_0"].view(ml_dtypes.bfloat16)` on the numpy side).

use flywheel_kernels::array::{element_count, Array, DType};
use std::io::{Cursor, Read, Write};

const MAGIC: &[u8] = b"\x93NUMPY";

fn descr(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "|b1",
        DType::I8 => "|i1",
        DType::I16 => "<i2",
        DType::I32 => "<i4",
        DType::I64 => "<i8",
        DType::U8 => "|u1",
        DType::U16 => "<u2",
        DType::U32 => "<u4",
        DType::U64 => "<u8",
        DType::F16 => "<f2",
        DType::BF16 => "<V2",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
    }
}

fn dtype_of_descr(text: &str) -> Result<DType, String> {
    // '=' is native order and '|' means order does not apply; this machine is little-endian.
    let little = text.replacen('=', "<", 1);
    DType::ALL
        .into_iter()
        .find(|&dtype| {
            let known = descr(dtype);
            // Byte order does not apply to single bytes, nor to the 2-byte voids numpy
            // writes for bf16 (`|V2`).
            let orderless = known.starts_with('|') || known.contains('V');
            little == known || (orderless && little.get(1..) == known.get(1..) && little.starts_with(['<', '|']))
        })
        .ok_or_else(|| {
            format!("unsupported .npy dtype '{text}' (big-endian, complex, string and object arrays are not)")
        })
}

/// Encodes one array as a version 1.0 `.npy` file.
pub fn encode(array: &Array) -> Vec<u8> {
    let shape = match array.dims.as_slice() {
        [single] => format!("({single},)"),
        dims => format!("({})", dims.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")),
    };
    let mut header = format!("{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}", descr(array.dtype));
    // The header ends in a newline and the data starts at a multiple of 64 bytes.
    let unpadded = MAGIC.len() + 4 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let mut bytes = Vec::with_capacity(unpadded + header.len() + array.bytes.len());
    bytes.extend(MAGIC);
    bytes.extend([1, 0]);
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    bytes.extend(&array.bytes);
    bytes
}

/// Decodes a `.npy` file (format versions 1 to 3, C or Fortran order).
pub fn decode(bytes: &[u8]) -> Result<Array, String> {
    let rest = bytes.strip_prefix(MAGIC).ok_or("not a .npy file (bad magic)")?;
    let (major, rest) = rest.split_first().ok_or("truncated .npy header")?;
    let rest = rest.get(1..).ok_or("truncated .npy header")?;
    let (length, rest) = match major {
        1 => (u16::from_le_bytes(prefix(rest)?) as usize, &rest[2..]),
        2 | 3 => (u32::from_le_bytes(prefix(rest)?) as usize, &rest[4..]),
        _ => return Err(format!("unsupported .npy format version {major}")),
    };
    let header = rest.get(..length).ok_or("truncated .npy header")?;
    let header = std::str::from_utf8(header).map_err(|_| "the .npy header is not text")?;
    let dtype = dtype_of_descr(&quoted_value(header, "descr")?)?;
    let fortran_order = match raw_value(header, "fortran_order")?.as_str() {
        "True" => true,
        "False" => false,
        other => return Err(format!("bad fortran_order '{other}' in .npy header")),
    };
    let dims = shape_value(header)?;
    let data = rest[length..].to_vec();
    let array = if fortran_order {
        let reversed: Vec<i64> = dims.iter().rev().copied().collect();
        reverse_axes(&Array::from_bytes(dtype, reversed, data)?)
    } else {
        Array::from_bytes(dtype, dims, data)?
    };
    Ok(array)
}

fn prefix<const N: usize>(bytes: &[u8]) -> Result<[u8; N], String> {
    bytes.get(..N).and_then(|b| b.try_into().ok()).ok_or_else(|| "truncated .npy header".to_owned())
}

/// The text after `'key':` up to the next top-level comma or the closing brace.
fn raw_value(header: &str, key: &str) -> Result<String, String> {
    let start = header.find(&format!("'{key}'")).ok_or_else(|| format!("the .npy header has no '{key}'"))?;
    let after = header[start + key.len() + 2..].trim_start().strip_prefix(':').ok_or("malformed .npy header")?;
    let mut depth = 0;
    let end = after
        .char_indices()
        .find(|&(_, c)| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            depth == 0 && (c == ',' || c == '}')
        })
        .map_or(after.len(), |(index, c)| index + usize::from(c == ')'));
    Ok(after[..end].trim().to_owned())
}

fn quoted_value(header: &str, key: &str) -> Result<String, String> {
    let value = raw_value(header, key)?;
    value
        .strip_prefix('\'')
        .and_then(|v| v.strip_suffix('\''))
        .map(str::to_owned)
        .ok_or_else(|| format!("bad '{key}' in .npy header: {value}"))
}

fn shape_value(header: &str) -> Result<Vec<i64>, String> {
    let value = raw_value(header, "shape")?;
    let inner = value.strip_prefix('(').and_then(|v| v.strip_suffix(')')).ok_or(format!("bad shape {value}"))?;
    inner
        .split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(|part| part.parse().map_err(|_| format!("bad shape {value}")))
        .collect()
}

/// Transposes an array by reversing its axes: a Fortran-order array read as C order.
fn reverse_axes(array: &Array) -> Array {
    let size = array.dtype.size();
    let dims: Vec<i64> = array.dims.iter().rev().copied().collect();
    let count = element_count(&dims);
    let mut bytes = vec![0; array.bytes.len()];
    for target in 0..count {
        // The target's multi-index, read in the source's (reversed) axis order.
        let (mut rest, mut source, mut stride) = (target, 0, 1);
        for &dim in dims.iter().rev() {
            let dim = dim as usize;
            source = source * dim + rest % dim;
            rest /= dim;
            stride *= dim;
        }
        debug_assert!(stride == count);
        bytes[target * size..(target + 1) * size].copy_from_slice(&array.bytes[source * size..(source + 1) * size]);
    }
    Array { dtype: array.dtype, dims, bytes }
}

/// Writes named arrays as an `.npz` archive (`name.npy` members, stored).
pub fn write_npz(arrays: &[(String, Array)]) -> Result<Vec<u8>, String> {
    let mut archive = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(arrays.iter().any(|(_, array)| array.bytes.len() >= u32::MAX as usize));
    for (name, array) in arrays {
        archive.start_file(format!("{name}.npy"), options).map_err(|error| error.to_string())?;
        archive.write_all(&encode(array)).map_err(|error| error.to_string())?;
    }
    Ok(archive.finish().map_err(|error| error.to_string())?.into_inner())
}

/// Reads every `.npy` member of an `.npz` archive, in archive order, named without the
/// `.npy` suffix.
pub fn read_npz(bytes: &[u8]) -> Result<Vec<(String, Array)>, String> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|error| format!("not an .npz file: {error}"))?;
    let mut arrays = Vec::new();
    for index in 0..archive.len() {
        let mut member = archive.by_index(index).map_err(|error| error.to_string())?;
        let name = member.name().map_err(|error| error.to_string())?.into_owned();
        let Some(stem) = name.strip_suffix(".npy") else { continue };
        let mut contents = Vec::new();
        member.read_to_end(&mut contents).map_err(|error| format!("{name}: {error}"))?;
        arrays.push((stem.to_owned(), decode(&contents).map_err(|error| format!("{name}: {error}"))?));
    }
    Ok(arrays)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version 1.0 `.npy` file with a hand-written header.
    fn npy(header: &str, data: &[u8]) -> Vec<u8> {
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend((header.len() as u16).to_le_bytes());
        bytes.extend(header.as_bytes());
        bytes.extend(data);
        bytes
    }

    #[test]
    fn header_is_numpy_compatible() {
        let array = Array::from_values(DType::F32, vec![2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        let bytes = encode(&array);
        let header_end = 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!(header_end % 64, 0);
        assert!(std::str::from_utf8(&bytes[10..header_end])
            .unwrap()
            .starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
        assert_eq!(decode(&bytes).unwrap(), array);
    }

    #[test]
    fn every_dtype_and_rank_round_trips() {
        for dtype in DType::ALL {
            for dims in [vec![], vec![4], vec![2, 1, 3]] {
                let count = element_count(&dims);
                let values: Vec<f64> = (0..count).map(|i| (i % 2) as f64).collect();
                let array = Array::from_values(dtype, dims.clone(), &values);
                assert_eq!(decode(&encode(&array)).unwrap(), array, "{dtype} {dims:?}");
            }
        }
    }

    #[test]
    fn shapes_that_overflow_are_errors() {
        for order in ["False", "True"] {
            let header =
                format!("{{'descr': '<f4', 'fortran_order': {order}, 'shape': (4294967296, 4294967296, 4), }}\n");
            let error = decode(&npy(&header, &[0; 8])).unwrap_err();
            assert!(error.contains("do not hold"), "{error}");
        }
    }

    #[test]
    fn fortran_order_is_transposed() {
        // np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)) stores 0 3 1 4 2 5.
        let data: Vec<u8> = [0i32, 3, 1, 4, 2, 5].iter().flat_map(|v| v.to_le_bytes()).collect();
        let array = decode(&npy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }\n", &data)).unwrap();
        assert_eq!(array.dims, [2, 3]);
        assert_eq!(array.values(), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    }

    #[test]
    fn numpy_voids_read_as_bf16() {
        // numpy writes an ml_dtypes.bfloat16 array viewed as 2-byte voids with order '|'.
        let data = [0x80, 0x3F, 0x00, 0xC0];
        let array = decode(&npy("{'descr': '|V2', 'fortran_order': False, 'shape': (2,), }\n", &data)).unwrap();
        assert_eq!((array.dtype, array.values()), (DType::BF16, vec![1.0, -2.0]));
        let wide = npy("{'descr': '|V4', 'fortran_order': False, 'shape': (1,), }\n", &[0; 4]);
        assert!(decode(&wide).unwrap_err().contains("'|V4'"));
    }

    #[test]
    fn bad_files_are_errors() {
        assert!(decode(b"PK\x03\x04").unwrap_err().contains("magic"));
        let big_endian = npy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }\n", &[0; 4]);
        assert!(decode(&big_endian).unwrap_err().contains("'>f4'"));
        let short = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", &[0; 4]);
        assert!(decode(&short).unwrap_err().contains("4 bytes do not hold"));
        assert!(read_npz(b"not a zip").unwrap_err().contains("not an .npz"));
    }

    #[test]
    fn npz_round_trips() {
        let a = Array::from_values(DType::BF16, vec![2], &[1.5, -2.0]);
        let b = Array::from_values(DType::Bool, vec![], &[1.0]);
        let arrays = vec![("arr_0".to_owned(), a), ("arr_1".to_owned(), b)];
        assert_eq!(read_npz(&write_npz(&arrays).unwrap()).unwrap(), arrays);
    }
}
