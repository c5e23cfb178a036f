//! The Mosaic kernels `flywheel-lower-to-mosaic` emits, in their programs on the PJRT CPU
//! plugin (the kernels in the Mosaic interpreter, the operand rearrangements around them
//! in XLA:CPU), against the reference lowering of the same `flywheel.attention`, on the
//! same random inputs. `FLYWHEEL_KERNEL_ERRORS=1` prints each
//! configuration's errors.

use flywheel_kernels::array::{Array, DType, Rng};
use flywheel_tools::{
    compare::{compare, Tolerance},
    cpu::{locate_cpu_plugin, CpuRunner},
};
use libtest_mimic::{Failed, Trial};
use std::process::Command;

/// One kernel configuration: BNTH operands.
struct Config {
    name: &'static str,
    batch: i64,
    q_heads: i64,
    kv_heads: i64,
    length: i64,
    head_dim: i64,
    element: &'static str,
    causal: bool,
    window: Option<(i64, i64)>,
    soft_cap: Option<f64>,
    /// A [1, N, T, T] f32 bias operand.
    bias: Option<Bias>,
    /// A [B, 1, T, T] boolean mask operand.
    mask: bool,
    /// Multiplies the random q so logits reach large magnitudes.
    q_gain: f64,
    /// Key blocks (plain, causal): whole lane tiles keep the softmax statistics
    /// lane-replicated (widened by tiling), narrower ones as columns.
    key_blocks: (i64, i64),
}

enum Bias {
    Random,
    /// 0 on the first key block, this much on every key past it: each row's max rises
    /// by about that in one key step.
    Step(f64),
}

/// Key blocks of 128 (plain) and 64 (causal): several per sequence, causal ones skipped
/// above the diagonal and masked across it.
const NARROW: (i64, i64) = (128, 64);

const CONFIGS: &[Config] = &[
    // Key blocks of two lane tiles: lane-replicated statistics widened by tiling.
    Config {
        name: "wide_blocks_bf16_d128",
        batch: 1,
        q_heads: 2,
        kv_heads: 1,
        length: 512,
        head_dim: 128,
        element: "bf16",
        causal: false,
        window: None,
        soft_cap: None,
        bias: None,
        mask: false,
        q_gain: 4.0,
        key_blocks: (256, 256),
    },
    Config {
        name: "wide_causal_blocks_f32_d256",
        batch: 1,
        q_heads: 2,
        kv_heads: 2,
        length: 512,
        head_dim: 256,
        element: "f32",
        causal: true,
        window: None,
        soft_cap: None,
        bias: None,
        mask: false,
        q_gain: 4.0,
        key_blocks: (256, 256),
    },
    // Two lane tiles per key block: pipelined as two sub-blocks, masks at their offsets.
    Config {
        name: "wide_mask_and_bias_bf16",
        batch: 1,
        q_heads: 2,
        kv_heads: 1,
        length: 512,
        head_dim: 128,
        element: "bf16",
        causal: false,
        window: None,
        soft_cap: None,
        bias: Some(Bias::Random),
        mask: true,
        q_gain: 1.0,
        key_blocks: (256, 256),
    },
    Config {
        name: "wide_padded_window_gqa_bf16",
        batch: 1,
        q_heads: 4,
        kv_heads: 2,
        length: 456,
        head_dim: 128,
        element: "bf16",
        causal: true,
        window: Some((100, 0)),
        soft_cap: None,
        bias: None,
        mask: false,
        q_gain: 4.0,
        key_blocks: (256, 256),
    },
    Config {
        name: "mha_bf16_d128_2x2_blocks",
        batch: 1,
        q_heads: 2,
        kv_heads: 2,
        length: 256,
        head_dim: 128,
        element: "bf16",
        causal: false,
        window: None,
        soft_cap: None,
        bias: None,
        mask: false,
        q_gain: 1.0,
        key_blocks: NARROW,
    },
    Config {
        name: "causal_bf16_d128_large_logits",
        batch: 1,
        q_heads: 2,
        kv_heads: 2,
        length: 256,
        head_dim: 128,
        element: "bf16",
        causal: true,
        window: None,
        soft_cap: None,
        bias: None,
        mask: false,
        q_gain: 30.0,
        key_blocks: NARROW,
    },
    Config {
        name: "gqa_bf16_d64",
        batch: 2,
        q_heads: 4,
        kv_heads: 2,
        length: 128,
        head_dim: 64,
        element: "bf16",
        causal: true,
        window: None,
        soft_cap: None,
        bias: None,
        mask: false,
        q_gain: 1.0,
        key_blocks: NARROW,
    },
    Config {
        name: "mqa_f32_d64",
        batch: 1,
        q_heads: 4,
        kv_heads: 1,
        length: 256,
        head_dim: 64,
        element: "f32",
        causal: false,
        window: None,
        soft_cap: None,
        bias: None,
        mask: false,
        q_gain: 1.0,
        key_blocks: NARROW,
    },
    Config {
        name: "causal_window_bf16",
        batch: 1,
        q_heads: 2,
        kv_heads: 2,
        length: 256,
        head_dim: 128,
        element: "bf16",
        causal: true,
        window: Some((100, 0)),
        soft_cap: None,
        bias: None,
        mask: false,
        q_gain: 4.0,
        key_blocks: NARROW,
    },
    // Window edges on key-block edges (query blocks of 128): with causal key blocks of 64,
    // query 128 reaches back exactly to key 63, the last of block 0; with plain key blocks
    // of 128, query 128 to key 127 and query 127 forward to key 128, the first of block 1.
    // A block-skipping test off by one at an edge drops those keys.
    Config {
        name: "causal_window_edge_f32",
        batch: 1,
        q_heads: 1,
        kv_heads: 1,
        length: 256,
        head_dim: 64,
        element: "f32",
        causal: true,
        window: Some((65, 0)),
        soft_cap: None,
        bias: None,
        mask: false,
        q_gain: 1.0,
        key_blocks: NARROW,
    },
    Config {
        name: "local_window_edges_f32",
        batch: 1,
        q_heads: 1,
        kv_heads: 1,
        length: 256,
        head_dim: 64,
        element: "f32",
        causal: false,
        window: Some((1, 1)),
        soft_cap: None,
        bias: None,
        mask: false,
        q_gain: 1.0,
        key_blocks: NARROW,
    },
    Config {
        name: "local_window_f32",
        batch: 1,
        q_heads: 2,
        kv_heads: 1,
        length: 256,
        head_dim: 64,
        element: "f32",
        causal: false,
        window: Some((40, 24)),
        soft_cap: None,
        bias: None,
        mask: false,
        q_gain: 1.0,
        key_blocks: NARROW,
    },
    Config {
        name: "bias_f32",
        batch: 2,
        q_heads: 2,
        kv_heads: 2,
        length: 256,
        head_dim: 64,
        element: "f32",
        causal: false,
        window: None,
        soft_cap: None,
        bias: Some(Bias::Random),
        mask: false,
        q_gain: 1.0,
        key_blocks: NARROW,
    },
    // The second key block's scores 86 above the first's (which are near 0): each row's
    // running max rises past lagged-max's limit (64, or 124 in base 2, below twice the
    // limit either way) in one step, by so much that a step kept lagged would overflow its
    // sum (128 keys of e^86 > f32's largest).
    Config {
        name: "rising_max_f32",
        batch: 1,
        q_heads: 2,
        kv_heads: 2,
        length: 256,
        head_dim: 64,
        element: "f32",
        causal: false,
        window: None,
        soft_cap: None,
        bias: Some(Bias::Step(86.0)),
        mask: false,
        q_gain: 0.1,
        key_blocks: NARROW,
    },
    Config {
        name: "mask_and_bias_bf16",
        batch: 2,
        q_heads: 2,
        kv_heads: 1,
        length: 256,
        head_dim: 128,
        element: "bf16",
        causal: false,
        window: None,
        soft_cap: None,
        bias: Some(Bias::Random),
        mask: true,
        q_gain: 1.0,
        key_blocks: NARROW,
    },
    // Lengths the blocks do not divide: padded to whole blocks, the key tail masked.
    Config {
        name: "padded_causal_gqa_bf16",
        batch: 1,
        q_heads: 4,
        kv_heads: 2,
        length: 200,
        head_dim: 128,
        element: "bf16",
        causal: true,
        window: None,
        soft_cap: None,
        bias: None,
        mask: false,
        q_gain: 8.0,
        key_blocks: NARROW,
    },
    Config {
        name: "padded_window_mqa_f32",
        batch: 1,
        q_heads: 2,
        kv_heads: 1,
        length: 200,
        head_dim: 64,
        element: "f32",
        causal: false,
        window: Some((40, 24)),
        soft_cap: None,
        bias: None,
        mask: false,
        q_gain: 1.0,
        key_blocks: NARROW,
    },
    Config {
        name: "padded_mask_and_bias_f32",
        batch: 2,
        q_heads: 2,
        kv_heads: 1,
        length: 136,
        head_dim: 64,
        element: "f32",
        causal: false,
        window: None,
        soft_cap: None,
        bias: Some(Bias::Random),
        mask: true,
        q_gain: 1.0,
        key_blocks: NARROW,
    },
    Config {
        name: "softcap_f32_d256",
        batch: 1,
        q_heads: 1,
        kv_heads: 1,
        length: 128,
        head_dim: 256,
        element: "f32",
        causal: false,
        window: None,
        soft_cap: Some(20.0),
        bias: None,
        mask: false,
        q_gain: 10.0,
        key_blocks: NARROW,
    },
];

/// The FlyWheel transforms each configuration also runs with: (name, passes before
/// tiling, flywheel-tile's options besides blocks, passes on the tile IR).
const TRANSFORMS: &[(&str, &str, &str, &str)] = &[
    ("baseline", "", "key-splits=1", ""),
    ("exp_softmax", "", "key-splits=1", "flywheel-exp-softmax,"),
    ("exp_softmax_fold_always", "", "key-splits=1", "flywheel-exp-softmax{fold-scale=always},"),
    ("exp_softmax_fold_split", "", "key-splits=1", "flywheel-exp-softmax{fold-scale=split},"),
    ("exp_softmax_bf16_exp", "", "key-splits=1", "flywheel-exp-softmax{bf16-exp=true},"),
    ("exp_softmax_conditional_rescale", "", "key-splits=1", "flywheel-exp-softmax{conditional-rescale=true},"),
    ("exp_softmax_lagged_max", "", "key-splits=2", "flywheel-exp-softmax{lagged-max=true},"),
    // Every step whose max rises at all is redone: the exact branch.
    ("exp_softmax_lagged_max_redone", "", "key-splits=2", "flywheel-exp-softmax{lagged-max=true lagged-max-limit=0},"),
    // Lagged steps keep m0 + log(l) as their max and reduce none (where the VPU
    // sums the rows; with the row sum on the MXU they keep reducing it).
    ("exp_softmax_lagged_sum", "", "key-splits=2", "flywheel-exp-softmax{lagged-max=true lagged-stabilizer=sum},"),
    // The state stored before the redo branch; with limit 0 every step is redone, its
    // exact arm storing over it.
    ("exp_softmax_lagged_stores_before_redone", "", "key-splits=2", "flywheel-exp-softmax{lagged-max=true lagged-max-limit=0 redo-stores=before},"),
    ("layout_row_sum_mxu", "flywheel-layout{row-sum=mxu},", "key-splits=1", ""),
    ("layout_transposed", "flywheel-layout{orientation=transposed},", "key-splits=1", ""),
    ("pipeline", "", "key-splits=2", "flywheel-pipeline,"),
    ("all", "flywheel-layout{row-sum=mxu},", "key-splits=2", "flywheel-exp-softmax{fold-scale=split},flywheel-pipeline,"),
    ("all_bf16_exp", "flywheel-layout{row-sum=mxu},", "key-splits=2", "flywheel-exp-softmax{fold-scale=split bf16-exp=true},flywheel-pipeline,"),
    ("all_transposed", "flywheel-layout{orientation=transposed},", "key-splits=2", "flywheel-exp-softmax{fold-scale=split},flywheel-pipeline,"),
    ("all_lagged_max", "flywheel-layout{row-sum=mxu},", "key-splits=2", "flywheel-exp-softmax{fold-scale=split lagged-max=true},flywheel-pipeline,"),
    ("all_transposed_lagged_max", "flywheel-layout{orientation=transposed},", "key-splits=2", "flywheel-exp-softmax{fold-scale=split lagged-max=true},flywheel-pipeline,"),
    ("all_transposed_lagged_sum", "flywheel-layout{orientation=transposed},", "key-splits=2", "flywheel-exp-softmax{fold-scale=split lagged-max=true lagged-stabilizer=sum},flywheel-pipeline,"),
    // flywheel-tpu's choices on v6e and tpu7x: transposed and lagged where no window, mask
    // or bias is and the head dim is 128 or 256, standard elsewhere, lagged there on v6e
    // where causal without a window; on tpu7x the scale folded exactly in banded kernels. These small key blocks are taken whole
    // as flywheel-tpu takes blocks of 1024 keys and more.
    ("auto_orientation_lagged_max", "flywheel-layout{orientation=auto},", "key-splits=2 transposed-whole-keys=128", "flywheel-exp-softmax{fold-scale=split lagged-max=transposed-or-causal lagged-stabilizer=sum redo-stores=before},flywheel-pipeline,"),
    ("auto_orientation_tpu7x", "flywheel-layout{orientation=auto target=tpu7x},", "key-splits=2 transposed-whole-keys=128 target=tpu7x", "flywheel-exp-softmax{fold-scale=split-unbanded lagged-max=transposed lagged-stabilizer=sum redo-stores=false},flywheel-pipeline,"),
];

pub fn trials() -> Vec<Trial> {
    TRANSFORMS
        .iter()
        .flat_map(|&(variant, before, tile_options, after)| {
            CONFIGS.iter().map(move |config| {
                Trial::test(format!("kernels::{variant}::{}", config.name), move || {
                    check_kernel(config, before, tile_options, after)
                })
            })
        })
        .collect()
}

fn extra_dims(config: &Config) -> (Vec<i64>, Vec<i64>) {
    (vec![config.batch, 1, config.length, config.length], vec![1, config.q_heads, config.length, config.length])
}

fn module(config: &Config) -> String {
    let tensor = |heads: i64| {
        format!("tensor<{}x{heads}x{}x{}x{}>", config.batch, config.length, config.head_dim, config.element)
    };
    let (q, kv) = (tensor(config.q_heads), tensor(config.kv_heads));
    let (mask_dims, bias_dims) = extra_dims(config);
    let text = |dims: &[i64], element: &str| {
        format!("tensor<{}x{element}>", dims.iter().map(i64::to_string).collect::<Vec<_>>().join("x"))
    };
    let mut extra_arguments = String::new();
    let (mut extra_operands, mut extra_types) = (String::new(), String::new());
    if config.mask {
        extra_arguments += &format!(", %mask: {}", text(&mask_dims, "i1"));
        extra_operands += ", %mask";
        extra_types += &format!(", {}", text(&mask_dims, "i1"));
    }
    if config.bias.is_some() {
        extra_arguments += &format!(", %bias: {}", text(&bias_dims, "f32"));
        extra_operands += ", %bias";
        extra_types += &format!(", {}", text(&bias_dims, "f32"));
    }
    let segments = format!("array<i32: 1, 1, 1, {}, {}, 0, 0>", u8::from(config.mask), u8::from(config.bias.is_some()));
    let cap = config.soft_cap.map(|c| format!(", logit_soft_cap = {c:?} : f32")).unwrap_or_default();
    let window = config.window.map(|(l, r)| format!(", window = array<i64: {l}, {r}>")).unwrap_or_default();
    format!(
        "func.func @main(%q: {q}, %k: {kv}, %v: {kv}{extra_arguments}) -> {q} {{\n  %o = \"flywheel.attention\"(%q, %k, %v{extra_operands}) {{operandSegmentSizes = {segments}, scale = {} : f32, causal = {}, layout = \"BNTH\", q_heads = {}, kv_heads = {}{cap}{window}}} : ({q}, {kv}, {kv}{extra_types}) -> {q}\n  return %o : {q}\n}}\n",
        (config.head_dim as f64).powf(-0.5),
        config.causal,
        config.q_heads,
        config.kv_heads
    )
}

/// Runs one pass over `input` (written to a file of the test's own).
pub fn opt(name: &str, input: &str, pass: &str) -> Result<String, Failed> {
    let directory = std::env::temp_dir().join(format!("flywheel-kernels-{}", std::process::id()));
    std::fs::create_dir_all(&directory)?;
    // Tests run in parallel: each call gets its own file.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let path = directory.join(format!("{name}-{}.mlir", CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
    std::fs::write(&path, input)?;
    let output = Command::new(env!("CARGO_BIN_EXE_flywheel-opt")).arg(&path).arg(format!("--{pass}")).output()?;
    let _ = std::fs::remove_file(&path);
    if !output.status.success() {
        return Err(format!("flywheel-opt --{pass} failed:\n{}", String::from_utf8_lossy(&output.stderr)).into());
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

fn check_kernel(config: &Config, before: &str, tile_options: &str, transforms: &str) -> Result<(), Failed> {
    let source = module(config);
    let (plain, causal) = config.key_blocks;
    // The transposed orientation (asked for, or chosen by auto) runs key blocks along the
    // lanes, which take whole lane tiles (flywheel-tile keeps the op otherwise).
    let causal = if before.contains("orientation=") { causal.max(128) } else { causal };
    let pipeline = format!(
        "pass-pipeline=builtin.module({before}flywheel-tile{{block-q=128 block-kv={plain} causal-block-q=128 causal-block-kv={causal} {tile_options}}},{transforms}flywheel-lower-to-mosaic)"
    );
    let with_kernel = opt(config.name, &source, &pipeline)?;
    let reference = opt(config.name, &source, "flywheel-lower-to-stablehlo")?;
    let kernels = with_kernel.matches("\"tpu_custom_call\"").count();
    if kernels != 1 {
        return Err(format!("expected one kernel, found {kernels}").into());
    }

    let dtype = if config.element == "bf16" { DType::BF16 } else { DType::F32 };
    let dims = |heads: i64| vec![config.batch, heads, config.length, config.head_dim];
    let mut rng = Rng::new(11);
    let q = Array::random(DType::F64, dims(config.q_heads), &mut rng);
    let q =
        Array::from_values(dtype, q.dims.clone(), &q.values().iter().map(|x| x * config.q_gain).collect::<Vec<_>>());
    let (k, v) =
        (Array::random(dtype, dims(config.kv_heads), &mut rng), Array::random(dtype, dims(config.kv_heads), &mut rng));
    let mut inputs = vec![q, k, v];
    let (mask_dims, bias_dims) = extra_dims(config);
    if config.mask {
        // Random, with every seventh query row fully masked (uniform in the reference).
        let length = config.length as usize;
        let values: Vec<f64> = Array::random(DType::Bool, mask_dims.clone(), &mut rng)
            .values()
            .iter()
            .enumerate()
            .map(|(index, &value)| if ((index / length) % length).is_multiple_of(7) { 0.0 } else { value })
            .collect();
        inputs.push(Array::from_values(DType::Bool, mask_dims, &values));
    }
    match config.bias {
        Some(Bias::Random) => inputs.push(Array::random(DType::F32, bias_dims, &mut rng)),
        Some(Bias::Step(rise)) => {
            let (length, first_block) = (config.length as usize, config.key_blocks.0 as usize);
            let values: Vec<f64> = (0..bias_dims.iter().product::<i64>() as usize)
                .map(|index| if index % length >= first_block { rise } else { 0.0 })
                .collect();
            inputs.push(Array::from_values(DType::F32, bias_dims, &values));
        }
        None => {}
    }

    let runner = CpuRunner::load(&locate_cpu_plugin(None)?)?;
    let expected = runner.run(reference.as_bytes(), &inputs)?;
    let kernel = runner.run(with_kernel.as_bytes(), &inputs)?;
    let comparison = compare(&expected[0], &kernel[0], Tolerance::for_dtype(dtype));
    if !comparison.candidate_nonfinite.none() {
        return Err("the kernel produced NaN or Inf".into());
    }
    if std::env::var_os("FLYWHEEL_KERNEL_ERRORS").is_some() {
        eprintln!(
            "{} [{before}{transforms}]: relative L2 {:.3e}, max abs {:.3e}",
            config.name, comparison.rel_l2, comparison.max_abs
        );
    }
    match comparison.failure {
        None => Ok(()),
        Some(failure) => Err(format!("{}: kernel vs reference: {failure}", config.name).into()),
    }
}
