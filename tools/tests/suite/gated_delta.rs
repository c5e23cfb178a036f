//! The Gated DeltaNet kernel `flywheel-tile` emits, in its program on the PJRT CPU plugin
//! (the kernel in the Mosaic interpreter), against the reference lowering of the same
//! `flywheel.gated_delta` (the per-token recurrence in f32 on XLA:CPU), on the same
//! inputs: both outputs (o and the final state) within relative L2 1e-3 (5e-3 for the one
//! variant with bf16 products); and the precision contract, against the rule in f64
//! (`gated_delta::precision::*`).
//! `FLYWHEEL_KERNEL_ERRORS=1` prints each case's errors.

use crate::kernels::opt;
use flywheel_kernels::array::{Array, DType, Rng};
use flywheel_tools::{
    compare::{compare, Tolerance},
    cpu::{locate_cpu_plugin, CpuRunner},
};
use libtest_mimic::{Failed, Trial};

/// How the keys are drawn.
#[derive(Clone, Copy)]
enum Keys {
    /// Independent, L2-normalized (as GDN layers normalize them).
    Random,
    /// Pairwise cosine about 0.9, with write strength 0.99 and no decay: `I + A` is then
    /// far from the identity, where product/Neumann forms of its inverse blow up.
    Correlated,
    /// One key for every token, written at full strength without decay: every entry of
    /// `A` below the diagonal is 1, so the inverse's last row needs every step of a
    /// forward substitution (the product of the subdiagonal is 1, not vanishing).
    Identical,
}

struct Case {
    name: &'static str,
    batch: i64,
    key_heads: i64,
    value_heads: i64,
    length: i64,
    key_dim: i64,
    value_dim: i64,
    element: &'static str,
    initial_state: bool,
    keys: Keys,
    chunk: i64,
    /// Long enough that only the blocked inverse runs it (the interpreter's cost).
    long: bool,
    /// The op laid out BNTH (its operands and result transposed around it) instead of
    /// BTNH: the kernel then writes its output head-major.
    heads_first: bool,
}

const CASES: &[Case] = &[
    Case {
        name: "random_bf16_gva",
        batch: 1,
        key_heads: 1,
        value_heads: 2,
        length: 256,
        key_dim: 128,
        value_dim: 128,
        element: "bf16",
        initial_state: false,
        keys: Keys::Random,
        chunk: 64,
        long: false,
        heads_first: false,
    },
    Case {
        name: "padded_f32_initial_state",
        batch: 2,
        key_heads: 1,
        value_heads: 1,
        length: 200,
        key_dim: 64,
        value_dim: 128,
        element: "f32",
        initial_state: true,
        keys: Keys::Random,
        chunk: 64,
        long: false,
        heads_first: false,
    },
    Case {
        name: "correlated_keys_f32",
        batch: 1,
        key_heads: 1,
        value_heads: 1,
        length: 256,
        key_dim: 128,
        value_dim: 128,
        element: "f32",
        initial_state: false,
        keys: Keys::Correlated,
        chunk: 64,
        long: false,
        heads_first: false,
    },
    Case {
        name: "identical_keys_f32",
        batch: 1,
        key_heads: 1,
        value_heads: 1,
        length: 128,
        key_dim: 128,
        value_dim: 128,
        element: "f32",
        initial_state: false,
        keys: Keys::Identical,
        chunk: 64,
        long: false,
        heads_first: false,
    },
    // The same keys for four value heads, stacked in one step (their inverses side by side).
    Case {
        name: "correlated_keys_4_heads_f32",
        batch: 1,
        key_heads: 1,
        value_heads: 4,
        length: 128,
        key_dim: 128,
        value_dim: 128,
        element: "f32",
        initial_state: false,
        keys: Keys::Correlated,
        chunk: 64,
        long: false,
        heads_first: false,
    },
    Case {
        name: "small_chunks_bf16",
        batch: 1,
        key_heads: 2,
        value_heads: 2,
        length: 128,
        key_dim: 64,
        value_dim: 64,
        element: "bf16",
        initial_state: true,
        keys: Keys::Random,
        chunk: 32,
        long: false,
        heads_first: false,
    },
    // Four value heads per step reading two key heads (heads_per_step).
    // Sixteen value heads reading eight key heads: one step's heads on v6e.
    Case {
        name: "grouped_8_16_bf16",
        batch: 1,
        key_heads: 8,
        value_heads: 16,
        length: 128,
        key_dim: 64,
        value_dim: 64,
        element: "bf16",
        initial_state: false,
        keys: Keys::Random,
        chunk: 64,
        long: false,
        heads_first: false,
    },
    // grouped_4_8_bf16 laid out BNTH.
    Case {
        name: "grouped_4_8_bf16_heads_first",
        batch: 1,
        key_heads: 4,
        value_heads: 8,
        length: 128,
        key_dim: 64,
        value_dim: 64,
        element: "bf16",
        initial_state: true,
        keys: Keys::Random,
        chunk: 64,
        long: false,
        heads_first: true,
    },
    Case {
        name: "grouped_4_8_bf16",
        batch: 1,
        key_heads: 4,
        value_heads: 8,
        length: 128,
        key_dim: 64,
        value_dim: 64,
        element: "bf16",
        initial_state: true,
        keys: Keys::Random,
        chunk: 64,
        long: false,
        heads_first: false,
    },
    // 8192 tokens: the state carried through 128 chunks must not drift.
    Case {
        name: "long_8192_bf16",
        batch: 1,
        key_heads: 1,
        value_heads: 1,
        length: 8192,
        key_dim: 64,
        value_dim: 64,
        element: "bf16",
        initial_state: false,
        keys: Keys::Random,
        chunk: 64,
        long: true,
        heads_first: false,
    },
];

/// Relative L2 every variant with f32 products stays within (the budget).
const F32_PRODUCTS: f64 = 1e-3;

/// How each case also runs: (name, passes through `flywheel-tile`, passes after it,
/// relative L2 tolerance).
const VARIANTS: &[(&str, &str, &str, f64)] = &[
    ("forward_substitution", "flywheel-layout,flywheel-tile{gdn-heads=1 gdn-precision=fp32}", "", F32_PRODUCTS),
    (
        "tri_inverse",
        "flywheel-layout,flywheel-tile{gdn-heads=1 gdn-precision=fp32}",
        "flywheel-tri-inverse{block=8 diagonal=substitution},",
        F32_PRODUCTS,
    ),
    // Four heads per step, products apart (no layout recorded).
    (
        "heads_per_step",
        "flywheel-tile{gdn-heads=4 gdn-precision=fp32}",
        "flywheel-tri-inverse{diagonal=substitution},",
        F32_PRODUCTS,
    ),
    // With gates in base 2 (exp2) too.
    (
        "doubling",
        "flywheel-layout,flywheel-tile{gdn-heads=1 gdn-precision=fp32 gdn-exp2=true}",
        "flywheel-tri-inverse{block=8},",
        F32_PRODUCTS,
    ),
    // Two and four chunks per grid step, the state handed on in registers.
    (
        "chunks_per_step",
        "flywheel-layout,flywheel-tile{gdn-heads=1 gdn-precision=fp32 gdn-chunks-per-step=2}",
        "flywheel-tri-inverse{block=8},",
        F32_PRODUCTS,
    ),
    (
        "stacked_chunks_per_step",
        "flywheel-layout,flywheel-tile{gdn-heads=4 gdn-chunks-per-step=4}",
        "flywheel-tri-inverse,",
        F32_PRODUCTS,
    ),
    // Four chunks per step, f32 products, one head per step, each chunk's parallel work
    // issued two chunks ahead of the state updates.
    (
        "pipelined",
        "flywheel-layout,flywheel-tile{gdn-heads=1 gdn-precision=fp32 gdn-chunks-per-step=4}",
        "flywheel-pipeline{gdn-lookahead=2},flywheel-tri-inverse{block=8},",
        F32_PRODUCTS,
    ),
    // What flywheel-tpu runs for v6e: heads stacked to 1024 rows (grouped_8_16 runs its
    // sixteen value heads in one step, grouped_4_8 its eight, correlated_keys_4_heads its four), their
    // chunk-parallel tiles in diagonal blocks of 128 rows (two heads), bf16x3 products,
    // each chunk's parallel work before the previous chunk's state update, blocks of 8 by
    // doubling, the heads' inverses side by side, the blocks' and chunks' inverses solved
    // together, in groups of sixteen (grouped_8_16) their products in one bf16 pass and
    // one Newton step on blocks of 4.
    (
        "defaults",
        "flywheel-layout,flywheel-tile",
        "flywheel-pipeline,flywheel-tri-inverse{refine-from=16},",
        F32_PRODUCTS,
    ),
    // The defaults with every inverse refined (blocks of 4).
    (
        "refined",
        "flywheel-layout,flywheel-tile",
        "flywheel-pipeline,flywheel-tri-inverse{refine-from=1},",
        F32_PRODUCTS,
    ),
    // The defaults with q, k and v read token-major too ([B, T, N x D] windows; the
    // output is token-major by default, heads_first cases keep every window head-major).
    (
        "token_major_inputs",
        "flywheel-layout,flywheel-tile{gdn-token-major=all}",
        "flywheel-pipeline,flywheel-tri-inverse,",
        F32_PRODUCTS,
    ),
    // The defaults with the step's chunk-parallel tiles whole (512 x 512 for grouped_4_8):
    // the inverse side by side, its products in lane groups of 128.
    (
        "whole_step_tiles",
        "flywheel-layout,flywheel-tile{gdn-block-rows=0}",
        "flywheel-pipeline,flywheel-tri-inverse,",
        F32_PRODUCTS,
    ),
    // The defaults with four heads per step (v5e's) and their inverses on the 128 x 128
    // blocks, not side by side.
    (
        "stacked_inverse",
        "flywheel-layout,flywheel-tile{gdn-heads=4}",
        "flywheel-pipeline,flywheel-tri-inverse{side-by-side=false},",
        F32_PRODUCTS,
    ),
    // Kᵀ for the state updates from a copy of K transposed in HBM (flywheel-layout),
    // sliced per chunk from each step's four chunks.
    (
        "transposed_key_copy",
        "flywheel-layout{gdn-state-keys=transposed-copy},flywheel-tile{gdn-heads=4 gdn-chunks-per-step=4}",
        "flywheel-tri-inverse,",
        F32_PRODUCTS,
    ),
    // The products after the inverse that do not read V' in one bf16 pass each, as the
    // kernel takes them for a DEFAULT-precision op: measured relative L2 1.6e-3 to
    // 3.4e-3 against this f32 reference, with identical and correlated keys too.
    ("single_pass", "flywheel-layout,flywheel-tile{gdn-single-pass=true}", "flywheel-tri-inverse,", 5e-3),
];

/// The precision contract: the op says what its source's products asked for, and the
/// kernel flywheel-tile builds by default answers to the rule evaluated in f64
/// (`exact_rule`). A HIGHEST program's kernel is within 1e-3 relative L2 of it, on the
/// keys that strain the inverse most; a DEFAULT program's within twice the error of what
/// a TPU computes for the program itself: its reference lowering with the DEFAULT
/// products' operands rounded to bf16 (`flywheel-emulate-tpu-precision`).
const PRECISION_CASES: &[(&str, &str, Option<&str>)] = &[
    ("correlated_keys_f32", "HIGHEST", None),
    ("identical_keys_f32", "HIGHEST", None),
    ("correlated_keys_f32", "DEFAULT", None),
    ("identical_keys_f32", "DEFAULT", None),
    ("padded_f32_initial_state", "DEFAULT", None),
    ("random_bf16_gva", "DEFAULT", None),
    // The readout of the state with q asking HIGHEST, the rest DEFAULT.
    ("correlated_keys_f32", "DEFAULT", Some("HIGHEST")),
];

/// `case` with the op saying `precision` (and `readout_precision`, if given) against the
/// f64 rule, within the contract's budget for `precision`.
fn check_precision(case: &Case, precision: &str, readout: Option<&str>) -> Result<(), Failed> {
    let readout_attribute = readout.map(|readout| format!(", readout_precision = \"{readout}\"")).unwrap_or_default();
    let attributes = format!(", precision = \"{precision}\"{readout_attribute}");
    let source = module(case, &attributes);
    let kernel_pipeline =
        "pass-pipeline=builtin.module(flywheel-layout,flywheel-tile,flywheel-tri-inverse,flywheel-lower-to-mosaic)";
    let with_kernel = opt(case.name, &source, kernel_pipeline)?;
    let inputs = inputs(case);
    let runner = CpuRunner::load(&locate_cpu_plugin(None)?)?;
    let kernel = runner.run(with_kernel.as_bytes(), &inputs)?;
    let exact = exact_rule(case, &inputs);
    // Relative L2 against the f64 rule, of the output widened to f64 (no tolerance: a
    // failure is then a shape or a non-finite value).
    let error = |of: &Array, exact: &Array| -> Result<f64, Failed> {
        let widened = Array::from_values(DType::F64, of.dims.clone(), &of.values());
        let comparison = compare(exact, &widened, Tolerance { rtol: f64::INFINITY, atol: 0.0 });
        match comparison.failure {
            Some(failure) => Err(format!("{}: against f64: {failure}", case.name).into()),
            None => Ok(comparison.rel_l2),
        }
    };
    let budgets: Vec<f64> = if precision == "DEFAULT" {
        let faithful_pipeline =
            "pass-pipeline=builtin.module(flywheel-lower-to-stablehlo,flywheel-emulate-tpu-precision)";
        let faithful = runner.run(opt(case.name, &source, faithful_pipeline)?.as_bytes(), &inputs)?;
        faithful
            .iter()
            .zip(&exact)
            .map(|(faithful, exact)| Ok(2.0 * error(faithful, exact)?))
            .collect::<Result<_, Failed>>()?
    } else {
        vec![F32_PRODUCTS; 2]
    };
    for ((name, budget), (kernel, exact)) in ["o", "final state"].iter().zip(budgets).zip(kernel.iter().zip(&exact)) {
        let found = error(kernel, exact)?;
        if std::env::var_os("FLYWHEEL_KERNEL_ERRORS").is_some() {
            eprintln!("{}{attributes} {name}: relative L2 {found:.3e} against f64, budget {budget:.3e}", case.name);
        }
        if found > budget {
            return Err(format!(
                "{}{attributes}: {name}: relative L2 {found:.3e} against f64, over {budget:.3e}",
                case.name
            )
            .into());
        }
    }
    Ok(())
}

/// The rule of `flywheel.gated_delta` in f64 on the inputs' values: o [B, T, Nv, Dv] and
/// the final state [B, Nv, Dk, Dv], per batch and value head h (reading key head
/// h / (Nv / Nk)), token by token: S = exp(g) S; u = beta (v - Sᵀ k); S += k uᵀ;
/// o = Sᵀ (scale q).
fn exact_rule(case: &Case, inputs: &[Array]) -> [Array; 2] {
    let values: Vec<Vec<f64>> = inputs.iter().map(Array::values).collect();
    let (q, k, v, g, beta) = (&values[0], &values[1], &values[2], &values[3], &values[4]);
    let (b_n, t_n, nk, nv) =
        (case.batch as usize, case.length as usize, case.key_heads as usize, case.value_heads as usize);
    let (dk, dv) = (case.key_dim as usize, case.value_dim as usize);
    let scale = f64::from((case.key_dim as f64).powf(-0.5) as f32);
    let mut o = vec![0.0; b_n * t_n * nv * dv];
    let mut states = vec![0.0; b_n * nv * dk * dv];
    for b in 0..b_n {
        for h in 0..nv {
            let state = &mut states[(b * nv + h) * dk * dv..][..dk * dv];
            if case.initial_state {
                state.copy_from_slice(&values[5][(b * nv + h) * dk * dv..][..dk * dv]);
            }
            let key_head = h / (nv / nk);
            for t in 0..t_n {
                let gate = (b * t_n + t) * nv + h;
                let (q_t, k_t) = (
                    &q[((b * t_n + t) * nk + key_head) * dk..][..dk],
                    &k[((b * t_n + t) * nk + key_head) * dk..][..dk],
                );
                let v_t = &v[((b * t_n + t) * nv + h) * dv..][..dv];
                let decay = g[gate].exp();
                state.iter_mut().for_each(|s| *s *= decay);
                let u: Vec<f64> = (0..dv)
                    .map(|j| beta[gate] * (v_t[j] - (0..dk).map(|i| state[i * dv + j] * k_t[i]).sum::<f64>()))
                    .collect();
                for i in 0..dk {
                    for j in 0..dv {
                        state[i * dv + j] += k_t[i] * u[j];
                    }
                }
                for j in 0..dv {
                    o[((b * t_n + t) * nv + h) * dv + j] = (0..dk).map(|i| state[i * dv + j] * scale * q_t[i]).sum();
                }
            }
        }
    }
    [
        Array::from_values(DType::F64, vec![case.batch, case.length, case.value_heads, case.value_dim], &o),
        Array::from_values(DType::F64, vec![case.batch, case.value_heads, case.key_dim, case.value_dim], &states),
    ]
}

pub fn trials() -> Vec<Trial> {
    let contract = PRECISION_CASES.iter().map(|&(name, precision, readout)| {
        let case = CASES.iter().find(|case| case.name == name).expect("a case");
        let readout_name = readout.map(|readout| format!("_readout_{}", readout.to_lowercase())).unwrap_or_default();
        Trial::test(format!("gated_delta::precision::{name}_{}{readout_name}", precision.to_lowercase()), move || {
            check_precision(case, precision, readout)
        })
    });
    contract
        .chain(VARIANTS.iter().flat_map(|&(variant, tile, passes, rtol)| {
            let runs = move |case: &&Case| !case.long || !passes.is_empty();
            CASES.iter().filter(runs).map(move |case| {
                Trial::test(format!("gated_delta::{variant}::{}", case.name), move || check(case, tile, passes, rtol))
            })
        }))
        .collect()
}

/// The op of `case`, with `attributes` (`, name = value`...) besides its own.
fn module(case: &Case, attributes: &str) -> String {
    let tensor = |dims: &[i64], element: &str| {
        format!("tensor<{}x{element}>", dims.iter().map(i64::to_string).collect::<Vec<_>>().join("x"))
    };
    let (b, t) = (case.batch, case.length);
    let (q, v) = (
        tensor(&[b, t, case.key_heads, case.key_dim], case.element),
        tensor(&[b, t, case.value_heads, case.value_dim], case.element),
    );
    let gate = tensor(&[b, t, case.value_heads], "f32");
    let state = tensor(&[b, case.value_heads, case.key_dim, case.value_dim], "f32");
    let (initial_argument, initial_operand, initial_type) = if case.initial_state {
        (format!(", %s0: {state}"), ", %s0", format!(", {state}"))
    } else {
        (String::new(), "", String::new())
    };
    let mut body = String::new();
    // With heads first, each operand as %x_op transposed to BNTH ([B, N, T] gates) and
    // the op's output transposed back.
    let transposed = |body: &mut String, name: &str, from: &str, to: &str, permutation: &str| {
        *body += &format!("  %{name}_op = \"stablehlo.transpose\"(%{name}) <{{permutation = array<i64: {permutation}>}}> : ({from}) -> {to}\n");
        format!("%{name}_op")
    };
    let (layout, q_op, v_op, gate_op, operands) = if case.heads_first {
        let (q_op, v_op) = (
            tensor(&[b, case.key_heads, t, case.key_dim], case.element),
            tensor(&[b, case.value_heads, t, case.value_dim], case.element),
        );
        let gate_op = tensor(&[b, case.value_heads, t], "f32");
        let operands = [
            ("q", &q, &q_op, "0, 2, 1, 3"),
            ("k", &q, &q_op, "0, 2, 1, 3"),
            ("v", &v, &v_op, "0, 2, 1, 3"),
            ("g", &gate, &gate_op, "0, 2, 1"),
            ("beta", &gate, &gate_op, "0, 2, 1"),
        ]
        .map(|(name, from, to, permutation)| transposed(&mut body, name, from, to, permutation))
        .join(", ");
        ("BNTH", q_op, v_op, gate_op, operands)
    } else {
        ("BTNH", q.clone(), v.clone(), gate.clone(), "%q, %k, %v, %g, %beta".to_owned())
    };
    body += &format!(
        "  %result, %s = \"flywheel.gated_delta\"({operands}{initial_operand}) {{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, {}>, scale = {} : f32, chunk_size = {} : i64, layout = \"{layout}\"{}}} : ({q_op}, {q_op}, {v_op}, {gate_op}, {gate_op}{initial_type}) -> ({v_op}, {state})\n",
        u8::from(case.initial_state),
        (case.key_dim as f64).powf(-0.5),
        case.chunk,
        attributes,
    );
    let o =
        if case.heads_first { transposed(&mut body, "result", &v_op, &v, "0, 2, 1, 3") } else { "%result".to_owned() };
    format!("func.func @main(%q: {q}, %k: {q}, %v: {v}, %g: {gate}, %beta: {gate}{initial_argument}) -> ({v}, {state}) {{\n{body}  return {o}, %s : {v}, {state}\n}}\n")
}

/// Rows of `dim` values, each scaled to unit length.
fn normalized(values: Vec<f64>, dim: usize) -> Vec<f64> {
    values
        .chunks(dim)
        .flat_map(|row| {
            let norm = row.iter().map(|x| x * x).sum::<f64>().sqrt();
            row.iter().map(move |x| x / norm).collect::<Vec<_>>()
        })
        .collect()
}

fn inputs(case: &Case) -> Vec<Array> {
    let dtype = if case.element == "bf16" { DType::BF16 } else { DType::F32 };
    let mut rng = Rng::new(5);
    let mut normal = |count: i64| (0..count).map(|_| rng.normal()).collect::<Vec<f64>>();
    let key_dims = vec![case.batch, case.length, case.key_heads, case.key_dim];
    let tokens = case.batch * case.length;
    let q = normal(tokens * case.key_heads * case.key_dim);
    let k = match case.keys {
        Keys::Random => normal(tokens * case.key_heads * case.key_dim),
        Keys::Correlated => {
            // k_t = sqrt(0.9) base + sqrt(0.1) noise_t, normalized: cosine ~0.9 pairwise.
            let base = normal(case.key_dim);
            let noise = normal(tokens * case.key_heads * case.key_dim);
            noise
                .iter()
                .enumerate()
                .map(|(i, n)| 0.9f64.sqrt() * base[i % case.key_dim as usize] + 0.1f64.sqrt() * n)
                .collect()
        }
        Keys::Identical => normal(case.key_dim).repeat((tokens * case.key_heads) as usize),
    };
    let k = normalized(k, case.key_dim as usize);
    let v = normal(tokens * case.value_heads * case.value_dim);
    let gates = tokens * case.value_heads;
    let (g, beta): (Vec<f64>, Vec<f64>) = match case.keys {
        Keys::Random => (
            normal(gates).iter().map(|x| -0.1 * x.abs()).collect(),
            normal(gates).iter().map(|x| 1.0 / (1.0 + (-x).exp())).collect(),
        ),
        Keys::Correlated => (vec![0.0; gates as usize], vec![0.99; gates as usize]),
        Keys::Identical => (vec![0.0; gates as usize], vec![1.0; gates as usize]),
    };
    let gate_dims = vec![case.batch, case.length, case.value_heads];
    let mut arrays = vec![
        Array::from_values(dtype, key_dims.clone(), &q),
        Array::from_values(dtype, key_dims, &k),
        Array::from_values(dtype, vec![case.batch, case.length, case.value_heads, case.value_dim], &v),
        Array::from_values(DType::F32, gate_dims.clone(), &g),
        Array::from_values(DType::F32, gate_dims, &beta),
    ];
    if case.initial_state {
        let state = normal(case.batch * case.value_heads * case.key_dim * case.value_dim);
        arrays.push(Array::from_values(
            DType::F32,
            vec![case.batch, case.value_heads, case.key_dim, case.value_dim],
            &state,
        ));
    }
    arrays
}

fn check(case: &Case, tile: &str, passes: &str, rtol: f64) -> Result<(), Failed> {
    let source = module(case, "");
    let with_kernel =
        opt(case.name, &source, &format!("pass-pipeline=builtin.module({tile},{passes}flywheel-lower-to-mosaic)"))?;
    let reference = opt(case.name, &source, "flywheel-lower-to-stablehlo")?;
    if with_kernel.matches("\"tpu_custom_call\"").count() != 1 {
        return Err("expected one kernel".into());
    }
    let inputs = inputs(case);
    let runner = CpuRunner::load(&locate_cpu_plugin(None)?)?;
    let expected = runner.run(reference.as_bytes(), &inputs)?;
    let kernel = runner.run(with_kernel.as_bytes(), &inputs)?;
    for (name, (expected, kernel)) in ["o", "final state"].iter().zip(expected.iter().zip(&kernel)) {
        let comparison = compare(expected, kernel, Tolerance { rtol, atol: 0.0 });
        if std::env::var_os("FLYWHEEL_KERNEL_ERRORS").is_some() {
            eprintln!(
                "{} [{tile},{passes}] {name}: relative L2 {:.3e}, max abs {:.3e}",
                case.name, comparison.rel_l2, comparison.max_abs
            );
        }
        if let Some(failure) = comparison.failure {
            return Err(format!("{}: {name}: kernel vs reference: {failure}", case.name).into());
        }
    }
    Ok(())
}
