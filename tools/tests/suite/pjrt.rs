//! `flywheel run` and `flywheel check` on the PJRT CPU plugin, against answers computed
//! here, independently of XLA.

use crate::{mlir_files, repository_root};
use flywheel_kernels::array::{Array, DType};
use flywheel_tools::npy::{read_npz, write_npz};
use libtest_mimic::{Failed, Trial};
use std::{path::Path, process::Command};

pub fn trials() -> Vec<Trial> {
    let mut trials = vec![
        Trial::test("pjrt::known_answer_f32", || known_answer(DType::F32)),
        Trial::test("pjrt::known_answer_bf16", || known_answer(DType::BF16)),
        Trial::test("pjrt::check_passes_identical_programs", check_passes_identical_programs),
        Trial::test("pjrt::check_fails_perturbed_attention", check_fails_perturbed_attention),
    ];
    for fixture in mlir_files(&repository_root().join("test/fixtures")) {
        let name = fixture.file_stem().expect("a file name").to_string_lossy().into_owned();
        if name.starts_with("attention_") {
            let fixture = fixture.clone();
            trials.push(Trial::test(format!("pjrt::kernel_program::{name}"), move || kernel_program(&fixture)));
        }
        trials.push(Trial::test(format!("pjrt::raise_roundtrip::{name}"), move || raise_roundtrip(&fixture)));
    }
    trials
}

/// The raising passes on a real JAX program: every attention fixture becomes exactly one
/// `flywheel.attention`, every GDN fixture (per-token and chunked) one
/// `flywheel.gated_delta`, and the raised program, lowered back to StableHLO, computes
/// what the original does on the CPU plugin.
fn raise_roundtrip(fixture: &Path) -> Result<(), Failed> {
    let name = fixture.file_stem().expect("a file name").to_string_lossy().into_owned();
    let opt = |pipeline: &str, output: &Path| opt(fixture, pipeline, output);
    let (raised_file, lowered_file) =
        (scratch(&format!("{name}.raised.mlir")), scratch(&format!("{name}.lowered.mlir")));
    let raised = opt("flywheel-raise-attention,flywheel-raise-gated-delta,flywheel-verify", &raised_file);
    let lowered = opt("flywheel-raise-attention,flywheel-raise-gated-delta,flywheel-lower-to-stablehlo", &lowered_file);
    let checked = flywheel(&["check", &fixture.display().to_string(), &lowered_file.display().to_string()]);
    let _ = (std::fs::remove_file(&raised_file), std::fs::remove_file(&lowered_file));
    let (raised, _) = (raised?, lowered?);
    let expected = [
        ("flywheel.attention", usize::from(name.starts_with("attention_"))),
        ("flywheel.gated_delta", usize::from(name.starts_with("gdn_"))),
    ];
    for (op, count) in expected {
        let found = raised.matches(&format!("\"{op}\"")).count();
        if found != count {
            return Err(format!("{name}: {found} {op} ops, expected {count}").into());
        }
    }
    let (ok, text) = checked?;
    if !ok {
        return Err(format!("{name}: raised and lowered program differs from the original:\n{text}").into());
    }
    Ok(())
}

/// `flywheel-opt fixture --pass-pipeline=builtin.module(pipeline) -o output`; the output.
fn opt(fixture: &Path, pipeline: &str, output: &Path) -> Result<String, Failed> {
    let result = Command::new(env!("CARGO_BIN_EXE_flywheel-opt"))
        .arg(fixture)
        .arg(format!("--pass-pipeline=builtin.module({pipeline})"))
        .arg("-o")
        .arg(output)
        .output()?;
    if !result.status.success() {
        return Err(format!("flywheel-opt {pipeline} failed:\n{}", String::from_utf8_lossy(&result.stderr)).into());
    }
    Ok(std::fs::read_to_string(output)?)
}

/// The whole TPU pipeline on a real JAX attention program: it gets exactly one Mosaic
/// kernel, and `flywheel check` (XLA:CPU around the kernel, the kernel in the Mosaic
/// interpreter through the plugin's FFI) finds it computes what the original does.
fn kernel_program(fixture: &Path) -> Result<(), Failed> {
    let name = fixture.file_stem().expect("a file name").to_string_lossy().into_owned();
    let optimized_file = scratch(&format!("{name}.tpu.mlir"));
    let optimized = opt(fixture, "flywheel-tpu{target=v6e profitability=off}", &optimized_file);
    let checked = flywheel(&["check", &fixture.display().to_string(), &optimized_file.display().to_string()]);
    let _ = std::fs::remove_file(&optimized_file);
    let kernels = optimized?.matches("\"tpu_custom_call\"").count();
    if kernels != 1 {
        return Err(format!("{name}: {kernels} Mosaic kernels, expected 1").into());
    }
    let (ok, text) = checked?;
    if !ok {
        return Err(format!("{name}: the program with its kernel differs from the original:\n{text}").into());
    }
    Ok(())
}

fn flywheel(arguments: &[&str]) -> Result<(bool, String), Failed> {
    let output = Command::new(env!("CARGO_BIN_EXE_flywheel"))
        .args(arguments)
        .output()
        .map_err(|error| format!("cannot run flywheel: {error}"))?;
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    Ok((output.status.success(), text))
}

fn scratch(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("flywheel-pjrt-{}-{name}", std::process::id()))
}

/// `test/tools/flywheel/Inputs/known_answer_<dtype>.mlir` computes exp(x) * y, the row sums of
/// x, and select(mask, x, -x). The inputs are exact in bf16, so the only rounding is the
/// program's own.
fn known_answer(dtype: DType) -> Result<(), Failed> {
    let program = repository_root().join(format!("test/tools/flywheel/Inputs/known_answer_{dtype}.mlir"));
    let x = [-1.5, -0.25, 0.0, 0.5, 1.0, 2.125];
    let y = [3.0, -2.0, 0.75, 1.5, -0.5, 0.25];
    let mask = [1.0, 0.0, 1.0, 0.0, 0.0, 1.0];
    let inputs = vec![
        ("arr_0".to_owned(), Array::from_values(dtype, vec![2, 3], &x)),
        ("arr_1".to_owned(), Array::from_values(dtype, vec![2, 3], &y)),
        ("arr_2".to_owned(), Array::from_values(DType::Bool, vec![2, 3], &mask)),
    ];
    let (input_file, output_file) = (scratch(&format!("in-{dtype}.npz")), scratch(&format!("out-{dtype}.npz")));
    std::fs::write(&input_file, write_npz(&inputs)?)?;
    let (ok, text) = flywheel(&[
        "run",
        &program.display().to_string(),
        "--inputs",
        &input_file.display().to_string(),
        "--save",
        &output_file.display().to_string(),
    ])?;
    let outputs = std::fs::read(&output_file).map_err(Failed::from).and_then(|bytes| Ok(read_npz(&bytes)?));
    let _ = (std::fs::remove_file(&input_file), std::fs::remove_file(&output_file));
    if !ok {
        return Err(format!("flywheel run failed:\n{text}").into());
    }
    let outputs = outputs?;
    let expected_product: Vec<f64> = x.iter().zip(&y).map(|(x, y)| x.exp() * y).collect();
    let expected_sums = [x[0] + x[1] + x[2], x[3] + x[4] + x[5]];
    let sum_magnitudes = [x[0].abs() + x[1].abs() + x[2].abs(), x[3].abs() + x[4].abs() + x[5].abs()];
    let expected_select: Vec<f64> = x.iter().zip(&mask).map(|(&x, &m)| if m != 0.0 { x } else { -x }).collect();
    // Allowed error per unit of magnitude: f32 rounds each result once; bf16 (8-bit
    // significand) may round the exponential, the product and each partial sum.
    let unit = if dtype == DType::F32 { 1e-6 } else { 3.0 * f64::powi(2.0, -8) };
    let [(_, product), (_, sums), (_, select)] = outputs.as_slice() else {
        return Err(format!("expected 3 outputs, got {}", outputs.len()).into());
    };
    for (name, output, expected, magnitudes, dims) in [
        (
            "exp(x) * y",
            product,
            expected_product.clone(),
            expected_product.iter().map(|v| v.abs()).collect::<Vec<_>>(),
            vec![2, 3],
        ),
        ("row sums", sums, expected_sums.to_vec(), sum_magnitudes.to_vec(), vec![2]),
        ("select", select, expected_select.clone(), vec![0.0; 6], vec![2, 3]),
    ] {
        if (output.dtype, &output.dims) != (dtype, &dims) {
            return Err(format!("{name}: got {}", output.type_text()).into());
        }
        for (index, ((got, want), magnitude)) in output.values().iter().zip(&expected).zip(&magnitudes).enumerate() {
            if (got - want).abs() > unit * magnitude {
                return Err(format!("{name}[{index}] = {got}, expected {want} (within {})", unit * magnitude).into());
            }
        }
    }
    Ok(())
}

fn check_passes_identical_programs() -> Result<(), Failed> {
    for dtype in ["f32", "bf16"] {
        let program = repository_root().join(format!("test/tools/flywheel/Inputs/known_answer_{dtype}.mlir"));
        let program = program.display().to_string();
        let (ok, text) = flywheel(&["check", &program, &program, "--seed", "5"])?;
        if !ok || !text.contains("check: passed (3 outputs within tolerance)") {
            return Err(format!("check of {dtype} program against itself:\n{text}").into());
        }
    }
    Ok(())
}

/// Replacing softmax's `exponential` by `exponential_minus_one` keeps the program valid
/// but wrong: `check` must catch it (exit 1, the failing output named).
fn check_fails_perturbed_attention() -> Result<(), Failed> {
    for fixture in ["attention_mha_f32", "attention_causal_bf16"] {
        let original = repository_root().join(format!("test/fixtures/{fixture}.mlir"));
        let text = std::fs::read_to_string(&original)?;
        let perturbed_text = text.replace("\"stablehlo.exponential\"", "\"stablehlo.exponential_minus_one\"");
        if perturbed_text == text {
            return Err(format!("{fixture} has no stablehlo.exponential to perturb").into());
        }
        let perturbed = scratch(&format!("{fixture}-expm1.mlir"));
        std::fs::write(&perturbed, perturbed_text)?;
        let result = flywheel(&["check", &original.display().to_string(), &perturbed.display().to_string()]);
        let _ = std::fs::remove_file(&perturbed);
        let (ok, text) = result?;
        if ok || !text.contains("FAIL") || !text.contains("check failed: output 0: relative L2 error") {
            return Err(format!("check accepted the perturbed {fixture}:\n{text}").into());
        }
    }
    Ok(())
}
