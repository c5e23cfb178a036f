//! Runs a Mosaic kernel module (the serialized form FlyWheel emits and libtpu reads) on
//! the CPU, following Mosaic's semantics: the grid iterated in order (last axis
//! innermost), each window's block copied in by its index map before a step and out after
//! it, scratch buffers kept across steps. Values are held as f64 and rounded where the
//! TPU rounds: every f32 op result to f32, `truncf` to bf16. `tpu.matmul` multiplies its
//! operands exactly and rounds the sum once to f32; f32 operands are first rounded to
//! bf16 unless the op asks for fp32 precision (the MXU's default is one bf16 pass).
//!
//! The ops it knows are those FlyWheel's kernels use; any other is an error naming it.

use crate::array::{element_count, Array, DType};
use flywheel_dialect::ir::string_attribute;
use flywheel_dialect::{create_context, stablehlo::splat_value};
use half::bf16;
use melior::ir::{
    attribute::{
        ArrayAttribute, DenseI32ArrayAttribute, DenseI64ArrayAttribute, DictionaryAttribute, FlatSymbolRefAttribute,
        FloatAttribute, IntegerAttribute,
    },
    operation::{OperationLike, OperationRef},
    BlockLike, BlockRef, Module, RegionLike, Type, TypeLike, Value, ValueLike,
};
use std::collections::HashMap;

/// A value while interpreting: a scalar (integer, index or i1) or a vector.
#[derive(Clone, Debug)]
enum Val {
    Scalar(i64),
    Vector(Tensor),
}

#[derive(Clone, Debug)]
struct Tensor {
    shape: Vec<i64>,
    element: Element,
    data: Vec<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Element {
    F32,
    BF16,
    Int,
}

impl Element {
    fn of(r#type: Type) -> Result<Element, String> {
        match r#type.to_string().as_str() {
            "f32" => Ok(Element::F32),
            "bf16" => Ok(Element::BF16),
            "i1" | "i32" | "index" => Ok(Element::Int),
            other => Err(format!("unsupported element type {other}")),
        }
    }

    fn round(self, value: f64) -> f64 {
        match self {
            Element::F32 => f64::from(value as f32),
            Element::BF16 => bf16::from_f64(value).to_f64(),
            Element::Int => value,
        }
    }
}

/// A memory buffer: a window's block, a scratch buffer, or a whole operand.
#[derive(Clone, Debug)]
struct Buffer {
    shape: Vec<i64>,
    element: Element,
    data: Vec<f64>,
}

fn strides(shape: &[i64]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1] as usize;
    }
    strides
}

/// Every multi-index of `shape`, row-major.
fn indices(shape: &[i64]) -> impl Iterator<Item = Vec<i64>> + '_ {
    let count = element_count(shape);
    (0..count).map(move |mut flat| {
        let mut index = vec![0; shape.len()];
        for d in (0..shape.len()).rev() {
            index[d] = (flat % shape[d] as usize) as i64;
            flat /= shape[d] as usize;
        }
        index
    })
}

/// The shape and element type of a shaped type (memref or vector).
/// The shape and element of a vector or memref type; float scalars (not shaped) are
/// rank-0 tensors.
fn shaped_or_float(r#type: Type) -> Result<(Vec<i64>, Element), String> {
    match Element::of(r#type) {
        Ok(element) if !unsafe { mlir_sys::mlirTypeIsAShaped(r#type.to_raw()) } => Ok((Vec::new(), element)),
        _ => shaped(r#type),
    }
}

fn shaped(r#type: Type) -> Result<(Vec<i64>, Element), String> {
    use mlir_sys::{mlirShapedTypeGetDimSize, mlirShapedTypeGetElementType, mlirShapedTypeGetRank, mlirTypeIsAShaped};
    let raw = r#type.to_raw();
    if !unsafe { mlirTypeIsAShaped(raw) } {
        return Err(format!("{type} is not a vector or memref"));
    }
    let rank = unsafe { mlirShapedTypeGetRank(raw) };
    let shape = (0..rank).map(|d| unsafe { mlirShapedTypeGetDimSize(raw, d as isize) }).collect();
    Ok((shape, Element::of(unsafe { Type::from_raw(mlirShapedTypeGetElementType(raw)) })?))
}

/// The kernel and its index maps, read from a kernel module.
struct Kernel<'c, 'a> {
    body: BlockRef<'c, 'a>,
    grid: Vec<i64>,
    windows: Vec<(OperationRef<'c, 'a>, Vec<i64>)>,
    scratch: Vec<(Vec<i64>, Element)>,
}

fn functions<'c, 'a>(module: &'a Module<'c>) -> HashMap<String, OperationRef<'c, 'a>> {
    let mut functions = HashMap::new();
    let mut next = module.body().first_operation();
    while let Some(op) = next {
        if let Some(name) = op.attribute("sym_name").ok().and_then(string_attribute) {
            functions.insert(name, op);
        }
        next = op.next_in_block();
    }
    functions
}

fn i64_array(op: &OperationRef, name: &str) -> Result<Vec<i64>, String> {
    let array =
        DenseI64ArrayAttribute::try_from(op.attribute(name).map_err(|_| format!("the kernel has no '{name}'"))?)
            .map_err(|_| format!("'{name}' is not an i64 array"))?;
    (0..array.len()).map(|i| array.element(i).map_err(|e| e.to_string())).collect()
}

fn read_kernel<'c, 'a>(module: &'a Module<'c>) -> Result<Kernel<'c, 'a>, String> {
    let functions = functions(module);
    let kernel = functions
        .values()
        .find(|op| op.attribute("window_params").is_ok())
        .copied()
        .ok_or("no kernel function (with window_params) in the module")?;
    let grid = i64_array(&kernel, "iteration_bounds")?;
    let params = ArrayAttribute::try_from(kernel.attribute("window_params").map_err(|e| e.to_string())?)
        .map_err(|_| "window_params is not an array")?;
    let mut windows = Vec::new();
    for i in 0..params.len() {
        let dictionary = DictionaryAttribute::try_from(params.element(i).map_err(|e| e.to_string())?)
            .map_err(|_| "a window param is not a dictionary")?;
        let transform = dictionary.element_by_name("transform_indices").ok_or("a window has no transform_indices")?;
        let name = FlatSymbolRefAttribute::try_from(transform)
            .map_err(|_| "transform_indices is not a symbol")?
            .value()
            .to_owned();
        let bounds = DenseI64ArrayAttribute::try_from(
            dictionary.element_by_name("window_bounds").ok_or("a window has no window_bounds")?,
        )
        .map_err(|_| "window_bounds is not an i64 array")?;
        let bounds =
            (0..bounds.len()).map(|i| bounds.element(i).map_err(|e| e.to_string())).collect::<Result<_, _>>()?;
        let function = functions.get(&name).copied().ok_or_else(|| format!("no index map @{name}"))?;
        windows.push((function, bounds));
    }
    let scratch_count = IntegerAttribute::try_from(kernel.attribute("scratch_operands").map_err(|e| e.to_string())?)
        .map_err(|_| "bad scratch_operands")?
        .value() as usize;
    let body = kernel.region(0).ok().and_then(|region| region.first_block()).ok_or("the kernel has no body")?;
    let arguments = body.argument_count();
    let scratch = (arguments - scratch_count..arguments)
        .map(|i| shaped(body.argument(i).expect("in range").r#type()))
        .collect::<Result<_, _>>()?;
    Ok(Kernel { body, grid, windows, scratch })
}

/// Mosaic's rule for a window: its block's last dim a multiple of 128 lanes and the one
/// before it of 8 sublanes, each unless it is the whole array's (the interpreter would
/// run any block; the TPU compiler rejects these).
fn check_block_tiling(block: &[i64], array: &[i64]) -> Result<(), String> {
    let rank = block.len();
    for (from_end, tile) in [(1, 128), (2, 8)] {
        if rank >= from_end && block[rank - from_end] % tile != 0 && block[rank - from_end] != array[rank - from_end] {
            return Err(format!(
                "block {block:?} of a {array:?} array: its last two dims must be multiples of (8, 128) or the array's"
            ));
        }
    }
    Ok(())
}

/// Runs the kernel in `module_text` on `inputs`, producing outputs of the given types.
pub fn interpret(module_text: &str, inputs: &[Array], outputs: &[(DType, Vec<i64>)]) -> Result<Vec<Array>, String> {
    let context = create_context();
    let module = Module::parse(&context, module_text).ok_or("the kernel module does not parse")?;
    let kernel = read_kernel(&module)?;
    if kernel.windows.len() != inputs.len() + outputs.len() {
        return Err(format!(
            "the kernel has {} windows for {} operands",
            kernel.windows.len(),
            inputs.len() + outputs.len()
        ));
    }
    let element_of = |dtype: DType| match dtype {
        DType::F32 => Ok(Element::F32),
        DType::BF16 => Ok(Element::BF16),
        DType::I32 => Ok(Element::Int),
        other => Err(format!("unsupported operand type {other}")),
    };
    let mut memory: Vec<Buffer> = Vec::new();
    for input in inputs {
        memory.push(Buffer { shape: input.dims.clone(), element: element_of(input.dtype)?, data: input.values() });
    }
    for (dtype, dims) in outputs {
        memory.push(Buffer { shape: dims.clone(), element: element_of(*dtype)?, data: vec![0.0; element_count(dims)] });
    }
    for (window, (_, bounds)) in kernel.windows.iter().enumerate() {
        check_block_tiling(bounds, &memory[window].shape).map_err(|why| format!("window {window}: {why}"))?;
    }
    let mut scratch: Vec<Buffer> = kernel
        .scratch
        .iter()
        .map(|(shape, element)| Buffer {
            shape: shape.clone(),
            element: *element,
            data: vec![0.0; element_count(shape)],
        })
        .collect();

    for grid_index in indices(&kernel.grid) {
        // Copy each window's block in.
        let mut origins = Vec::new();
        let mut blocks: Vec<Buffer> = Vec::new();
        for (window, (transform, bounds)) in kernel.windows.iter().enumerate() {
            let block_index = run_index_map(*transform, &grid_index)?;
            let origin: Vec<i64> = block_index.iter().zip(bounds).map(|(i, b)| i * b).collect();
            let source = &memory[window];
            let mut block =
                Buffer { shape: bounds.clone(), element: source.element, data: vec![0.0; element_count(bounds)] };
            copy_in(source, &origin, &mut block)?;
            origins.push(origin);
            blocks.push(block);
        }
        let mut state = State { values: HashMap::new(), buffers: Vec::new() };
        state.buffers.extend(blocks);
        state.buffers.append(&mut scratch);
        let body = kernel.body;
        for (i, &g) in grid_index.iter().enumerate() {
            state.values.insert(key(body.argument(i).expect("grid argument").into()), Val::Scalar(g));
        }
        for i in grid_index.len()..body.argument_count() {
            state
                .values
                .insert(key(body.argument(i).expect("in range").into()), Val::Scalar((i - grid_index.len()) as i64));
        }
        run_block(&mut state, body)?;
        // Copy output blocks out; keep the scratch for the next step.
        let windows = kernel.windows.len();
        scratch = state.buffers.split_off(windows);
        for (window, block) in state.buffers.iter().enumerate().skip(inputs.len()) {
            copy_out(block, &origins[window], &mut memory[window])?;
        }
    }
    memory
        .into_iter()
        .skip(inputs.len())
        .zip(outputs)
        .map(|(buffer, (dtype, dims))| Ok(Array::from_values(*dtype, dims.clone(), &buffer.data)))
        .collect()
}

/// The positions a block at `origin` covers in a buffer: (buffer offset, block offset)
/// pairs, leaving out what falls past the buffer's end (a padded tail block).
fn block_positions(whole: &Buffer, origin: &[i64], block_shape: &[i64]) -> Result<Vec<(usize, usize)>, String> {
    if origin.len() != whole.shape.len() {
        return Err("a block's rank differs from its buffer's".into());
    }
    let (whole_strides, block_strides) = (strides(&whole.shape), strides(block_shape));
    Ok(indices(block_shape)
        .filter_map(|index| {
            let position: Vec<i64> = index.iter().zip(origin).map(|(i, o)| i + o).collect();
            if position.iter().zip(&whole.shape).any(|(p, s)| *p >= *s) {
                return None;
            }
            let w = position.iter().zip(&whole_strides).map(|(p, s)| *p as usize * s).sum();
            let b = index.iter().zip(&block_strides).map(|(p, s)| *p as usize * s).sum();
            Some((w, b))
        })
        .collect())
}

fn copy_in(whole: &Buffer, origin: &[i64], block: &mut Buffer) -> Result<(), String> {
    for (w, b) in block_positions(whole, origin, &block.shape)? {
        block.data[b] = whole.data[w];
    }
    Ok(())
}

fn copy_out(block: &Buffer, origin: &[i64], whole: &mut Buffer) -> Result<(), String> {
    for (w, b) in block_positions(whole, origin, &block.shape)? {
        whole.data[w] = whole.element.round(block.data[b]);
    }
    Ok(())
}

fn key(value: Value) -> usize {
    value.to_raw().ptr as usize
}

struct State {
    values: HashMap<usize, Val>,
    buffers: Vec<Buffer>,
}

/// Runs an index map (`func.func` returning block indices) on the grid indices.
fn run_index_map(function: OperationRef, grid_index: &[i64]) -> Result<Vec<i64>, String> {
    let body = function.region(0).ok().and_then(|region| region.first_block()).ok_or("an index map has no body")?;
    let mut state = State { values: HashMap::new(), buffers: Vec::new() };
    for (i, &g) in grid_index.iter().enumerate() {
        state.values.insert(key(body.argument(i).map_err(|_| "index map arity")?.into()), Val::Scalar(g));
    }
    let returned = run_block(&mut state, body)?;
    returned
        .into_iter()
        .map(|value| match value {
            Val::Scalar(s) => Ok(s),
            Val::Vector(_) => Err("an index map returned a vector".into()),
        })
        .collect()
}

/// Runs a block's ops; returns the values its terminator (return or yield) passes.
fn run_block(state: &mut State, block: BlockRef) -> Result<Vec<Val>, String> {
    let mut next = block.first_operation();
    while let Some(op) = next {
        let name = op.name().as_string_ref().as_str().unwrap_or_default().to_owned();
        let name = name.strip_prefix("stable_mosaic.").unwrap_or(&name).to_owned();
        if matches!(name.as_str(), "func.return" | "scf.yield") {
            return op.operands().map(|v| get(state, v)).collect();
        }
        let results = run_op(state, op, &name).map_err(|message| format!("{name}: {message}"))?;
        for (result, value) in op.results().zip(results) {
            state.values.insert(key(result.into()), value);
        }
        next = op.next_in_block();
    }
    Ok(Vec::new())
}

fn get(state: &State, value: Value) -> Result<Val, String> {
    state.values.get(&key(value)).cloned().ok_or_else(|| "a value is used before it is defined".to_owned())
}

fn tensor(state: &State, value: Value) -> Result<Tensor, String> {
    match get(state, value)? {
        Val::Vector(t) => Ok(t),
        Val::Scalar(_) => Err("expected a vector".into()),
    }
}

fn scalar(state: &State, value: Value) -> Result<i64, String> {
    match get(state, value)? {
        Val::Scalar(s) => Ok(s),
        // A float scalar (a whole-vector reduction) compared into an i1.
        Val::Vector(t) if t.shape.is_empty() && t.element == Element::Int => Ok(t.data[0] as i64),
        Val::Vector(_) => Err("expected a scalar".into()),
    }
}

fn buffer_index(state: &State, value: Value) -> Result<usize, String> {
    scalar(state, value).map(|s| s as usize)
}

fn result_type<'c>(op: &OperationRef<'c, '_>) -> Result<Type<'c>, String> {
    Ok(op.result(0).map_err(|_| "no result")?.r#type())
}

fn elementwise(state: &State, op: &OperationRef, f: impl Fn(f64, f64) -> f64) -> Result<Vec<Val>, String> {
    let (a, b) = (get(state, operand(op, 0)?)?, get(state, operand(op, 1)?)?);
    Ok(vec![match (a, b) {
        (Val::Scalar(x), Val::Scalar(y)) => Val::Scalar(f(x as f64, y as f64) as i64),
        (Val::Vector(x), Val::Vector(y)) => {
            let (_, element) = shaped_or_float(result_type(op)?)?;
            Val::Vector(Tensor {
                shape: x.shape.clone(),
                element,
                data: x.data.iter().zip(&y.data).map(|(&p, &q)| element.round(f(p, q))).collect(),
            })
        }
        _ => return Err("mixes a scalar and a vector".into()),
    }])
}

/// Runs one op (not a terminator) on `state`; returns its results.
fn run_op(state: &mut State, op: OperationRef, name: &str) -> Result<Vec<Val>, String> {
    if let Some(f) = binary_function(name) {
        return elementwise(state, &op, f);
    }
    match name {
        // Arithmetic besides the binary ops above: constants, comparisons, casts, math.
        "arith.constant" => constant(&op),
        "arith.cmpf" => compare_floats(state, &op),
        "arith.cmpi" => compare_integers(state, &op),
        "arith.select" => select(state, &op),
        "arith.truncf" | "arith.extf" => convert(state, &op),
        "math.exp" | "math.exp2" | "math.log" | "math.log2" | "math.tanh" => math(state, &op, name),
        // Memory.
        "vector.load" => load(state, &op),
        "tpu.vector_store" => store(state, &op),
        // Vector shapes.
        "tpu.iota" => iota(&op),
        "vector.extract_strided_slice" => extract_strided_slice(state, &op),
        "tpu.concatenate" => concatenate(state, &op),
        "vector.transpose" => transpose(state, &op),
        "vector.shape_cast" => shape_cast(state, &op),
        "vector.broadcast" => broadcast(state, &op),
        // Reduction and matmul.
        "vector.multi_reduction" => multi_reduction(state, &op),
        "tpu.matmul" => matmul(state, &op),
        // Control flow.
        "scf.for" => for_loop(state, &op),
        "scf.if" => if_else(state, &op),
        other => Err(format!("the interpreter does not know '{other}'")),
    }
}

fn operand<'c, 'a>(op: &OperationRef<'c, 'a>, index: usize) -> Result<Value<'c, 'a>, String> {
    op.operand(index).map_err(|e| e.to_string())
}

/// The function of a binary elementwise op on integers or floats (those `elementwise`
/// runs), if `name` is one.
fn binary_function(name: &str) -> Option<fn(f64, f64) -> f64> {
    Some(match name {
        "arith.addi" | "arith.addf" => |a, b| a + b,
        "arith.subi" | "arith.subf" => |a, b| a - b,
        "arith.muli" | "arith.mulf" => |a, b| a * b,
        "arith.divsi" => |a, b| (a as i64 / b as i64) as f64,
        "arith.minsi" => f64::min,
        "arith.maxsi" => f64::max,
        "arith.andi" => |a, b| f64::from(u8::from(a != 0.0 && b != 0.0)),
        "arith.ori" => |a, b| f64::from(u8::from(a != 0.0 || b != 0.0)),
        "arith.xori" => |a, b| f64::from(u8::from((a != 0.0) != (b != 0.0))),
        "arith.divf" => |a, b| a / b,
        "arith.maximumf" => |a, b| if a.is_nan() || b.is_nan() { f64::NAN } else { a.max(b) },
        _ => return None,
    })
}

/// An integer, a float (a rank-0 tensor) or a splat vector.
fn constant(op: &OperationRef) -> Result<Vec<Val>, String> {
    let value = op.attribute("value").map_err(|_| "no value")?;
    if let Ok(integer) = IntegerAttribute::try_from(value) {
        return Ok(vec![Val::Scalar(integer.value())]);
    }
    if let Ok(float) = FloatAttribute::try_from(value) {
        let (shape, element) = shaped_or_float(result_type(op)?)?;
        return Ok(vec![Val::Vector(Tensor { shape, element, data: vec![float.value()] })]);
    }
    let splat = splat_value(value).ok_or("only scalar and splat constants")?;
    let (shape, element) = shaped(result_type(op)?)?;
    Ok(vec![Val::Vector(Tensor { data: vec![splat; element_count(&shape)], shape, element })])
}

fn predicate(op: &OperationRef) -> Result<i64, String> {
    Ok(IntegerAttribute::try_from(op.attribute("predicate").map_err(|_| "no predicate")?)
        .map_err(|_| "bad predicate")?
        .value())
}

/// `arith.cmpf`'s ordered comparisons: false when either side is NaN.
fn compare_floats(state: &State, op: &OperationRef) -> Result<Vec<Val>, String> {
    let predicate = predicate(op)?;
    let test: fn(f64, f64) -> bool = match predicate {
        1 => |a, b| a == b,
        2 => |a, b| a > b,
        3 => |a, b| a >= b,
        4 => |a, b| a < b,
        5 => |a, b| a <= b,
        6 => |a, b| a != b && !a.is_nan() && !b.is_nan(),
        _ => return Err(format!("cmpf predicate {predicate} (only ordered comparisons)")),
    };
    elementwise(state, op, move |a, b| f64::from(u8::from(test(a, b))))
}

/// `arith.cmpi`'s signed comparisons.
fn compare_integers(state: &State, op: &OperationRef) -> Result<Vec<Val>, String> {
    let predicate = predicate(op)?;
    let test = move |a: f64, b: f64| -> f64 {
        let holds = match predicate {
            0 => a == b,
            1 => a != b,
            2 => a < b,
            3 => a <= b,
            4 => a > b,
            5 => a >= b,
            _ => false,
        };
        f64::from(u8::from(holds))
    };
    if !(0..=5).contains(&predicate) {
        return Err(format!("predicate {predicate} (only signed comparisons)"));
    }
    elementwise(state, op, test)
}

/// `arith.select` by a scalar or an elementwise i1 vector.
fn select(state: &State, op: &OperationRef) -> Result<Vec<Val>, String> {
    let (c, a, b) = (get(state, operand(op, 0)?)?, tensor(state, operand(op, 1)?)?, tensor(state, operand(op, 2)?)?);
    let data = match c {
        Val::Scalar(s) => {
            if s != 0 {
                a.data
            } else {
                b.data
            }
        }
        Val::Vector(c) => (0..a.data.len()).map(|i| if c.data[i] != 0.0 { a.data[i] } else { b.data[i] }).collect(),
    };
    Ok(vec![Val::Vector(Tensor { data, ..a })])
}

/// `arith.truncf` or `arith.extf`: each value rounded to the result's element type.
fn convert(state: &State, op: &OperationRef) -> Result<Vec<Val>, String> {
    let input = tensor(state, operand(op, 0)?)?;
    let (shape, element) = shaped(result_type(op)?)?;
    Ok(vec![Val::Vector(Tensor { data: input.data.iter().map(|&x| element.round(x)).collect(), shape, element })])
}

/// `math.exp`, `exp2`, `log`, `log2` or `tanh`, rounded to the element type.
fn math(state: &State, op: &OperationRef, name: &str) -> Result<Vec<Val>, String> {
    let input = tensor(state, operand(op, 0)?)?;
    let f: fn(f64) -> f64 = match name {
        "math.exp" => f64::exp,
        "math.exp2" => f64::exp2,
        "math.log" => f64::ln,
        "math.log2" => f64::log2,
        _ => f64::tanh,
    };
    Ok(vec![Val::Vector(Tensor { data: input.data.iter().map(|&x| input.element.round(f(x))).collect(), ..input })])
}

/// The scalar operands from `first` on: a load's or store's indices.
fn block_origin(state: &State, op: &OperationRef, first: usize) -> Result<Vec<i64>, String> {
    (first..op.operand_count()).map(|i| scalar(state, operand(op, i)?)).collect()
}

/// `vector.load` of a block from a buffer.
fn load(state: &State, op: &OperationRef) -> Result<Vec<Val>, String> {
    let buffer = &state.buffers[buffer_index(state, operand(op, 0)?)?];
    let origin = block_origin(state, op, 1)?;
    let (shape, element) = shaped(result_type(op)?)?;
    let mut block = Buffer { shape: shape.clone(), element, data: vec![0.0; element_count(&shape)] };
    copy_in(buffer, &origin, &mut block)?;
    Ok(vec![Val::Vector(Tensor { shape, element, data: block.data })])
}

/// `tpu.vector_store` of a vector into a buffer.
fn store(state: &mut State, op: &OperationRef) -> Result<Vec<Val>, String> {
    let value = tensor(state, operand(op, 0)?)?;
    let index = buffer_index(state, operand(op, 1)?)?;
    let origin = block_origin(state, op, 2)?;
    let block = Buffer { shape: value.shape.clone(), element: value.element, data: value.data };
    copy_out(&block, &origin, &mut state.buffers[index])?;
    Ok(Vec::new())
}

/// `tpu.iota`: each element its index along `dimensions`.
fn iota(op: &OperationRef) -> Result<Vec<Val>, String> {
    let (shape, element) = shaped(result_type(op)?)?;
    let dimensions = DenseI32ArrayAttribute::try_from(op.attribute("dimensions").map_err(|_| "no dimensions")?)
        .map_err(|_| "bad dimensions")?;
    let dimension = dimensions.element(0).map_err(|e| e.to_string())? as usize;
    let data = indices(&shape).map(|index| index[dimension] as f64).collect();
    Ok(vec![Val::Vector(Tensor { shape, element, data })])
}

/// Unit strides only: the leading block of each dimension from `offsets`.
fn extract_strided_slice(state: &State, op: &OperationRef) -> Result<Vec<Val>, String> {
    let input = tensor(state, operand(op, 0)?)?;
    let integers = |name: &str| -> Result<Vec<i64>, String> {
        let array = ArrayAttribute::try_from(op.attribute(name).map_err(|_| format!("no {name}"))?)
            .map_err(|_| format!("{name} is not an array"))?;
        (0..array.len())
            .map(|i| {
                array
                    .element(i)
                    .ok()
                    .and_then(|a| IntegerAttribute::try_from(a).ok())
                    .map(|a| a.value())
                    .ok_or(format!("bad {name}"))
            })
            .collect()
    };
    let offsets = integers("offsets")?;
    if integers("strides")?.iter().any(|&s| s != 1) {
        return Err("vector.extract_strided_slice: only unit strides are supported".into());
    }
    let (shape, element) = shaped(result_type(op)?)?;
    let input_strides = strides(&input.shape);
    let data = indices(&shape)
        .map(|index| {
            let at: usize =
                index.iter().zip(&offsets).zip(&input_strides).map(|((i, o), s)| (i + o) as usize * s).sum();
            input.data[at]
        })
        .collect();
    Ok(vec![Val::Vector(Tensor { shape, element, data })])
}

fn concatenate(state: &State, op: &OperationRef) -> Result<Vec<Val>, String> {
    let dimension = IntegerAttribute::try_from(op.attribute("dimension").map_err(|_| "no dimension")?)
        .map_err(|_| "dimension is not an integer")?
        .value() as usize;
    let parts = op.operands().map(|v| tensor(state, v)).collect::<Result<Vec<_>, _>>()?;
    let (shape, element) = shaped(result_type(op)?)?;
    // Row-major: each index before `dimension` takes every part's slab in turn.
    let outer: i64 = shape[..dimension].iter().product();
    let mut data = Vec::with_capacity(element_count(&shape));
    for index in 0..outer as usize {
        for part in &parts {
            let slab: i64 = part.shape[dimension..].iter().product();
            data.extend_from_slice(&part.data[index * slab as usize..(index + 1) * slab as usize]);
        }
    }
    Ok(vec![Val::Vector(Tensor { shape, element, data })])
}

/// The dimensions in `op`'s i64 array attribute `name`.
fn dimension_list(op: &OperationRef, name: &str) -> Result<Vec<usize>, String> {
    let array = DenseI64ArrayAttribute::try_from(op.attribute(name).map_err(|_| format!("no {name}"))?)
        .map_err(|_| format!("bad {name}"))?;
    (0..array.len()).map(|i| array.element(i).map(|d| d as usize).map_err(|e| e.to_string())).collect()
}

/// Result dimension i is input dimension permutation[i].
fn transpose(state: &State, op: &OperationRef) -> Result<Vec<Val>, String> {
    let input = tensor(state, operand(op, 0)?)?;
    let permutation = dimension_list(op, "permutation")?;
    let (shape, element) = shaped(result_type(op)?)?;
    let input_strides = strides(&input.shape);
    let data = indices(&shape)
        .map(|index| {
            input.data[index.iter().zip(&permutation).map(|(i, &d)| *i as usize * input_strides[d]).sum::<usize>()]
        })
        .collect();
    Ok(vec![Val::Vector(Tensor { shape, element, data })])
}

fn shape_cast(state: &State, op: &OperationRef) -> Result<Vec<Val>, String> {
    let input = tensor(state, operand(op, 0)?)?;
    let (shape, _) = shaped(result_type(op)?)?;
    Ok(vec![Val::Vector(Tensor { shape, ..input })])
}

/// A scalar splat, or a vector broadcast along its unit and leading dimensions.
fn broadcast(state: &State, op: &OperationRef) -> Result<Vec<Val>, String> {
    let (shape, element) = shaped(result_type(op)?)?;
    let data = match get(state, operand(op, 0)?)? {
        Val::Scalar(s) => vec![s as f64; element_count(&shape)],
        Val::Vector(input) => {
            let offset = shape.len() - input.shape.len();
            let input_strides = strides(&input.shape);
            indices(&shape)
                .map(|index| {
                    let at: usize = (0..input.shape.len())
                        .map(|d| if input.shape[d] == 1 { 0 } else { index[d + offset] as usize } * input_strides[d])
                        .sum();
                    input.data[at]
                })
                .collect()
        }
    };
    Ok(vec![Val::Vector(Tensor { shape, element, data })])
}

/// A max, min or sum over `reduction_dims` into the accumulator, rounded at each step.
fn multi_reduction(state: &State, op: &OperationRef) -> Result<Vec<Val>, String> {
    let (input, initial) = (tensor(state, operand(op, 0)?)?, tensor(state, operand(op, 1)?)?);
    let kind = op.attribute("kind").map_err(|_| "no kind")?.to_string();
    let dims = dimension_list(op, "reduction_dims")?;
    let combine: fn(f64, f64) -> f64 = if kind.contains("maximumf") {
        |a, b| if a.is_nan() || b.is_nan() { f64::NAN } else { a.max(b) }
    } else if kind.contains("minimumf") {
        |a, b| if a.is_nan() || b.is_nan() { f64::NAN } else { a.min(b) }
    } else if kind.contains("add") {
        |a, b| a + b
    } else {
        return Err(format!("reduction kind {kind}"));
    };
    let mut data = initial.data.clone();
    let kept_strides = strides(&initial.shape);
    for (flat, index) in indices(&input.shape).enumerate() {
        let kept: Vec<i64> = index.iter().enumerate().filter(|(d, _)| !dims.contains(d)).map(|(_, &i)| i).collect();
        let at: usize = kept.iter().zip(&kept_strides).map(|(i, s)| *i as usize * s).sum();
        data[at] = input.element.round(combine(data[at], input.data[flat]));
    }
    Ok(vec![Val::Vector(Tensor { data, ..initial })])
}

/// lhs [M, K] times rhs [K, N] (or [N, K]) plus the accumulator, the products exact and
/// the sum rounded once to f32.
fn matmul(state: &State, op: &OperationRef) -> Result<Vec<Val>, String> {
    let (lhs, rhs, accumulator) =
        (tensor(state, operand(op, 0)?)?, tensor(state, operand(op, 1)?)?, tensor(state, operand(op, 2)?)?);
    let numbers = op.attribute("dimension_numbers").map_err(|_| "no dimension_numbers")?.to_string();
    let rhs_contracts_last = numbers.contains("<[1], [1]");
    if !rhs_contracts_last && !numbers.contains("<[1], [0]") {
        return Err(format!("dimension numbers {numbers}"));
    }
    // At Mosaic's default precision the MXU takes f32 operands rounded to bf16 (one
    // pass); `precision = #tpu.contract_precision<fp32>` multiplies them in f32.
    let full = op.attribute("precision").is_ok_and(|p| p.to_string().contains("fp32"));
    let operand_of = |t: &Tensor| {
        if full {
            t.data.clone()
        } else {
            t.data.iter().map(|&x| Element::BF16.round(x)).collect()
        }
    };
    let (lhs_data, rhs_data) = (operand_of(&lhs), operand_of(&rhs));
    let (m, k) = (lhs.shape[0] as usize, lhs.shape[1] as usize);
    let n = accumulator.shape[1] as usize;
    let mut data = accumulator.data.clone();
    for i in 0..m {
        for j in 0..n {
            let sum: f64 = (0..k)
                .map(|l| {
                    lhs_data[i * k + l] * if rhs_contracts_last { rhs_data[j * k + l] } else { rhs_data[l * n + j] }
                })
                .sum();
            data[i * n + j] = f64::from((data[i * n + j] + sum) as f32);
        }
    }
    Ok(vec![Val::Vector(Tensor { data, ..accumulator })])
}

/// `scf.for`: bounds and step are index scalars; the body block takes the induction
/// variable and the carried values, and yields the next carried values.
fn for_loop(state: &mut State, op: &OperationRef) -> Result<Vec<Val>, String> {
    let (lower, upper, step) =
        (scalar(state, operand(op, 0)?)?, scalar(state, operand(op, 1)?)?, scalar(state, operand(op, 2)?)?);
    if step <= 0 {
        return Err(format!("a step of {step}"));
    }
    let mut carried: Vec<Val> =
        (3..op.operand_count()).map(|i| get(state, operand(op, i)?)).collect::<Result<_, _>>()?;
    let body = op.region(0).ok().and_then(|region| region.first_block()).ok_or("no body")?;
    let mut induction = lower;
    while induction < upper {
        state.values.insert(key(body.argument(0).map_err(|e| e.to_string())?.into()), Val::Scalar(induction));
        for (i, value) in carried.iter().enumerate() {
            state.values.insert(key(body.argument(i + 1).map_err(|e| e.to_string())?.into()), value.clone());
        }
        carried = run_block(state, body)?;
        induction += step;
    }
    Ok(carried)
}

/// `scf.if`: the then region, or the else region (possibly empty).
fn if_else(state: &mut State, op: &OperationRef) -> Result<Vec<Val>, String> {
    let condition = scalar(state, operand(op, 0)?)?;
    let region = op.region(if condition != 0 { 0 } else { 1 }).map_err(|e| e.to_string())?;
    match region.first_block() {
        Some(block) => run_block(state, block),
        None => Ok(Vec::new()),
    }
}

/// The kernel module of one `tpu_custom_call`: the base64 `body` of its JSON
/// `backend_config`, decoded.
pub fn kernel_body<'c: 'a, 'a>(call: &impl OperationLike<'c, 'a>) -> Result<String, String> {
    use base64::Engine;
    let config = call.attribute("backend_config").ok().and_then(string_attribute);
    let body = config.as_deref().and_then(|c| c.split("\"body\": \"").nth(1)).and_then(|rest| rest.split('"').next());
    match body.map(|b| base64::engine::general_purpose::STANDARD.decode(b)) {
        Some(Ok(bytes)) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        _ => Err("a tpu_custom_call has no readable body".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::{check_block_tiling, interpret};
    use crate::array::{Array, DType};

    /// A one-step kernel: out[8x128] = lhs[8x128] · rhs[128x128], `precision` on the matmul.
    fn matmul_kernel(precision: &str) -> String {
        let memref = |shape: &str| format!("memref<{shape}xf32>");
        let (lhs, rhs) = (memref("8x128"), memref("128x128"));
        let windows = ["8, 128", "128, 128", "8, 128"]
            .map(|bounds| format!("{{transform_indices = @map, window_bounds = array<i64: {bounds}>}}"))
            .join(", ");
        format!(
            r#"module {{
  func.func @kernel(%i: i32, %lhs: {lhs}, %rhs: {rhs}, %out: {lhs}) attributes {{dimension_semantics = [#tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1>, scalar_prefetch = 0 : i64, scratch_operands = 0 : i64, window_params = [{windows}]}} {{
    %c0 = arith.constant 0 : index
    %a = vector.load %lhs[%c0, %c0] : {lhs}, vector<8x128xf32>
    %b = vector.load %rhs[%c0, %c0] : {rhs}, vector<128x128xf32>
    %z = arith.constant dense<0.0> : vector<8x128xf32>
    %p = "tpu.matmul"(%a, %b, %z) {{dimension_numbers = #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>{precision}}} : (vector<8x128xf32>, vector<128x128xf32>, vector<8x128xf32>) -> vector<8x128xf32>
    "tpu.vector_store"(%p, %out, %c0, %c0) {{add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>}} : (vector<8x128xf32>, {lhs}, index, index) -> ()
    return
  }}
  func.func @map(%i: i32) -> (i32, i32) {{
    %c0 = arith.constant 0 : i32
    return %c0, %c0 : i32, i32
  }}
}}"#
        )
    }

    /// Known answers for the MXU's precision: an f32 operand bf16 cannot hold (1 + 2^-10)
    /// times 1 is 1 at the default precision (one bf16 pass) and itself at fp32.
    #[test]
    fn f32_matmul_operands_round_to_bf16_unless_fp32_is_asked() {
        let mut lhs = vec![0.0; 8 * 128];
        let mut rhs = vec![0.0; 128 * 128];
        let fine = 1.0 + 2f64.powi(-10);
        lhs[0] = fine; // lhs[0][0]
        lhs[128 + 1] = 3.0; // lhs[1][1]: bf16 holds it
        rhs[0] = 1.0; // rhs[0][0]
        rhs[128 + 1] = fine; // rhs[1][1]
        let inputs =
            [Array::from_values(DType::F32, vec![8, 128], &lhs), Array::from_values(DType::F32, vec![128, 128], &rhs)];
        let outputs = [(DType::F32, vec![8, 128])];
        let run = |precision: &str| {
            let out = interpret(&matmul_kernel(precision), &inputs, &outputs).expect("the kernel runs");
            let values = out[0].values();
            (values[0], values[128 + 1])
        };
        assert_eq!(run(""), (1.0, 3.0));
        assert_eq!(run(", precision = #tpu.contract_precision<fp32>"), (fine, 3.0 * fine));
    }

    #[test]
    fn blocks_take_whole_tiles_or_whole_dims() {
        assert!(check_block_tiling(&[1, 64, 256], &[2, 128, 512]).is_ok());
        assert!(check_block_tiling(&[1, 2, 64], &[1, 2, 64]).is_ok());
        // 64 lanes of 128, and 4 sublanes of 8: not whole tiles, not whole dims.
        assert!(check_block_tiling(&[1, 1, 64, 64], &[2, 2, 64, 128]).is_err());
        assert!(check_block_tiling(&[1, 4, 128], &[1, 8, 128]).is_err());
    }
}
