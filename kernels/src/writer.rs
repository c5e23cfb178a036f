//! Generic-form text for kernel modules: a writer of SSA lines (one op per line, fresh
//! `%vN` names) and the type spellings Mosaic kernels use. Shared by the kernel emitters
//! (`mosaic_attention.rs`, `mosaic_gated_delta.rs`).

use std::fmt::{self, Write};

/// The element types of kernel vectors and buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element {
    F32,
    Bf16,
    I32,
    I1,
    Index,
}

impl Element {
    /// The element type MLIR spells `name` (`f32`, `bf16`, ...), if a kernel handles it.
    pub fn named(name: &str) -> Option<Element> {
        [Element::F32, Element::Bf16, Element::I32, Element::I1, Element::Index]
            .into_iter()
            .find(|element| element.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Element::F32 => "f32",
            Element::Bf16 => "bf16",
            Element::I32 => "i32",
            Element::I1 => "i1",
            Element::Index => "index",
        }
    }
}

use Element::{Index, I1, I32};

/// How `flywheel.matmul` multiplies f32 operands, when not at full f32 precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// Three one-pass bf16 products of the operands' high and low bf16 parts.
    Bf16x3,
    /// One pass of the operands' bf16 roundings.
    Bf16,
}

impl Precision {
    /// The `precision` attribute's value.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Bf16x3 => "bf16x3",
            Precision::Bf16 => "bf16",
        }
    }
}

impl fmt::Display for Element {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

/// SSA text in generic form, one op per line.
pub struct Writer {
    pub text: String,
    next: usize,
    depth: usize,
}

pub(crate) fn vector(shape: &[i64], element: Element) -> String {
    let dims: String = shape.iter().map(|d| format!("{d}x")).collect();
    format!("vector<{dims}{element}>")
}

pub(crate) fn f32s(shape: &[i64]) -> String {
    vector(shape, Element::F32)
}

pub(crate) fn memref(shape: &[i64], element: Element) -> String {
    let dims: String = shape.iter().map(|d| format!("{d}x")).collect();
    format!("memref<{dims}{element}>")
}

/// An f32 literal; infinities and NaN as their bits (MLIR writes no `inf` or `nan`).
pub(crate) fn float(value: f64) -> String {
    match value {
        f64::NEG_INFINITY => "0xFF800000".into(),
        f64::INFINITY => "0x7F800000".into(),
        _ if value.is_nan() => "0x7FC00000".into(),
        _ => flywheel_dialect::float_literal(value),
    }
}

/// The serialization version libtpu 0.0.50.1 accepts (what jax 0.12 writes).
const MOSAIC_VERSION: i64 = 15;

pub(crate) const FAST: &str = "{fastmath = #arith.fastmath<none>}";

impl Writer {
    /// An empty writer whose lines are indented `depth` levels (inside a function body).
    pub fn new(depth: usize) -> Writer {
        Writer { text: String::new(), next: 0, depth }
    }

    pub fn line(&mut self, text: &str) {
        let _ = writeln!(self.text, "{}{text}", "  ".repeat(self.depth));
    }

    /// `%N = "<name>"(operands) attributes : (operand types) -> result`.
    pub fn op(&mut self, name: &str, operands: &[(&str, &str)], attributes: &str, result: &str) -> String {
        let id = format!("%v{}", self.next);
        self.next += 1;
        let values: Vec<&str> = operands.iter().map(|(v, _)| *v).collect();
        let types: Vec<&str> = operands.iter().map(|(_, t)| *t).collect();
        let attributes = if attributes.is_empty() { String::new() } else { format!(" {attributes}") };
        self.line(&format!(
            "{id} = \"{name}\"({}){attributes} : ({}) -> {result}",
            values.join(", "),
            types.join(", ")
        ));
        id
    }

    /// An op without results.
    pub fn effect(&mut self, name: &str, operands: &[(&str, &str)], attributes: &str) {
        let values: Vec<&str> = operands.iter().map(|(v, _)| *v).collect();
        let types: Vec<&str> = operands.iter().map(|(_, t)| *t).collect();
        let attributes = if attributes.is_empty() { String::new() } else { format!(" {attributes}") };
        self.line(&format!("\"{name}\"({}){attributes} : ({}) -> ()", values.join(", "), types.join(", ")));
    }

    pub fn constant(&mut self, value: &str, r#type: &str) -> String {
        self.op("arith.constant", &[], &format!("{{value = {value} : {type}}}"), r#type)
    }

    pub fn splat(&mut self, value: f64, shape: &[i64]) -> String {
        let r#type = vector(shape, Element::F32);
        self.constant(&format!("dense<{}>", float(value)), &r#type)
    }

    pub fn i32(&mut self, value: i64) -> String {
        self.constant(&value.to_string(), I32.name())
    }

    pub fn binary(&mut self, name: &str, a: &str, b: &str, r#type: &str) -> String {
        self.op(
            name,
            &[(a, r#type), (b, r#type)],
            if name.ends_with('f') || name.contains("imumf") { FAST } else { "" },
            r#type,
        )
    }

    /// Whether the i32 scalar `value` equals `constant` (an i1).
    pub fn equals(&mut self, value: &str, constant: i64) -> String {
        let constant = self.i32(constant);
        self.cmpi(0, value, &constant, I32.name(), I1.name())
    }

    /// The negation of the i1 scalar `value`.
    pub fn not(&mut self, value: &str) -> String {
        let yes = self.constant("1", I1.name());
        self.op("arith.xori", &[(value, I1.name()), (&yes, I1.name())], "", I1.name())
    }

    pub fn cmpi(&mut self, predicate: i64, a: &str, b: &str, r#type: &str, result: &str) -> String {
        self.op("arith.cmpi", &[(a, r#type), (b, r#type)], &format!("{{predicate = {predicate} : i64}}"), result)
    }

    /// Loads a whole window or scratch buffer as a vector of `shape`.
    pub fn load(
        &mut self,
        reference: &str,
        memref_shape: &[i64],
        element: Element,
        shape: &[i64],
        zero: &str,
    ) -> String {
        let origin = vec![zero.to_owned(); memref_shape.len()];
        self.load_at(reference, memref_shape, element, memref_shape, origin, shape)
    }

    /// Loads the `block` of a window at the static `origin` as a vector of `shape`.
    pub fn load_block(
        &mut self,
        reference: &str,
        memref_shape: &[i64],
        element: Element,
        block: &[i64],
        origin: &[i64],
        shape: &[i64],
    ) -> String {
        let origin = origin.iter().map(|&at| self.constant(&at.to_string(), Index.name())).collect();
        self.load_at(reference, memref_shape, element, block, origin, shape)
    }

    /// `vector.load` of `block` at the index values `origin`, reshaped to `shape`.
    pub fn load_at(
        &mut self,
        reference: &str,
        memref_shape: &[i64],
        element: Element,
        block: &[i64],
        origin: Vec<String>,
        shape: &[i64],
    ) -> String {
        let mut operands = vec![(reference.to_owned(), memref(memref_shape, element))];
        operands.extend(origin.into_iter().map(|index| (index, Index.name().to_owned())));
        let operands: Vec<(&str, &str)> = operands.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let loaded = self.op("vector.load", &operands, "", &vector(block, element));
        if block == shape {
            loaded
        } else {
            self.op("vector.shape_cast", &[(&loaded, &vector(block, element))], "", &vector(shape, element))
        }
    }

    pub fn store(
        &mut self,
        value: &str,
        shape: &[i64],
        reference: &str,
        memref_shape: &[i64],
        element: Element,
        zero: &str,
    ) {
        let origin = vec![zero.to_owned(); memref_shape.len()];
        self.store_at(value, shape, reference, memref_shape, element, memref_shape, origin);
    }

    /// Stores `value` (of `shape`) as the `block` of a window or scratch buffer at the
    /// static `origin`.
    #[allow(clippy::too_many_arguments)]
    pub fn store_block(
        &mut self,
        value: &str,
        shape: &[i64],
        reference: &str,
        memref_shape: &[i64],
        element: Element,
        block: &[i64],
        origin: &[i64],
    ) {
        let origin = origin.iter().map(|&at| self.constant(&at.to_string(), Index.name())).collect();
        self.store_at(value, shape, reference, memref_shape, element, block, origin);
    }

    /// `tpu.vector_store` of `value` (of `shape`, reshaped to `block`) at the index values
    /// `origin`.
    #[allow(clippy::too_many_arguments)]
    fn store_at(
        &mut self,
        value: &str,
        shape: &[i64],
        reference: &str,
        memref_shape: &[i64],
        element: Element,
        block: &[i64],
        origin: Vec<String>,
    ) {
        let value = if block == shape {
            value.to_owned()
        } else {
            self.op("vector.shape_cast", &[(value, &vector(shape, element))], "", &vector(block, element))
        };
        let mut operands = vec![(value, vector(block, element)), (reference.to_owned(), memref(memref_shape, element))];
        operands.extend(origin.into_iter().map(|index| (index, Index.name().to_owned())));
        let operands: Vec<(&str, &str)> = operands.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let segments = format!("array<i32: 1, 1, {}, 0>", memref_shape.len());
        self.effect(
            "tpu.vector_store",
            &operands,
            &format!("{{add = false, operandSegmentSizes = {segments}, strides = array<i32>}}"),
        );
    }

    /// Columns `first .. first + width` of the [rows, columns] f32 tile `value`.
    pub fn columns(&mut self, value: &str, shape: &[i64; 2], first: i64, width: i64) -> String {
        let [rows, _] = *shape;
        let attributes = format!("{{offsets = [0, {first}], sizes = [{rows}, {width}], strides = [1, 1]}}");
        self.op("vector.extract_strided_slice", &[(value, &f32s(shape))], &attributes, &f32s(&[rows, width]))
    }

    /// `parts` (each of `shape`, of `element`s) joined along `dimension`; one part as is.
    pub fn concatenate(&mut self, parts: &[String], shape: &[i64], element: Element, dimension: usize) -> String {
        if parts.len() == 1 {
            return parts[0].clone();
        }
        let part_type = vector(shape, element);
        let operands: Vec<(&str, &str)> = parts.iter().map(|part| (part.as_str(), part_type.as_str())).collect();
        let mut joined = shape.to_vec();
        joined[dimension] *= parts.len() as i64;
        self.op("tpu.concatenate", &operands, &format!("{{dimension = {dimension} : i32}}"), &vector(&joined, element))
    }

    /// `scf.if %condition` around `body`, no results.
    pub fn when(&mut self, condition: &str, body: impl FnOnce(&mut Writer)) {
        self.line(&format!("\"scf.if\"({condition}) ({{"));
        self.depth += 1;
        body(self);
        self.line("\"scf.yield\"() : () -> ()");
        self.depth -= 1;
        self.line("}, {");
        self.line("}) : (i1) -> ()");
    }

    /// A fresh SSA name (for block arguments).
    pub fn fresh(&mut self) -> String {
        let id = format!("%v{}", self.next);
        self.next += 1;
        id
    }

    /// `flywheel.matmul`: lhs [M, K] times rhs [K, N] (or [N, K] when `transpose_rhs`),
    /// from a zero f32 accumulator of `shape` [M, N].
    /// f32 operands are multiplied at `precision` (`flywheel.matmul`'s optional attribute;
    /// None: full f32).
    pub fn matmul(
        &mut self,
        lhs: (&str, &str),
        rhs: (&str, &str),
        shape: &[i64],
        transpose_rhs: bool,
        precision: Option<Precision>,
    ) -> String {
        let zeros = self.splat(0.0, shape);
        let precision = precision
            .filter(|_| lhs.1.ends_with("xf32>"))
            .map(|p| format!(", precision = \"{}\"", p.name()))
            .unwrap_or_default();
        self.op(
            "flywheel.matmul",
            &[lhs, rhs, (&zeros, &f32s(shape))],
            &format!("{{transpose_rhs = {transpose_rhs}{precision}}}"),
            &f32s(shape),
        )
    }

    /// `arith.select` of two f32 vectors of `shape` by an i1 vector.
    pub fn select(&mut self, condition: &str, a: &str, b: &str, shape: &[i64]) -> String {
        self.op(
            "arith.select",
            &[(condition, &vector(shape, I1)), (a, &f32s(shape)), (b, &f32s(shape))],
            "",
            &f32s(shape),
        )
    }

    /// `scf.for` from `lower` to `upper` (index constants) carrying one value `(initial,
    /// type)`; `body` gets the writer, the induction variable and the carried value and
    /// returns the next carried value. Returns the loop's result.
    pub fn repeat(
        &mut self,
        lower: i64,
        upper: i64,
        (initial, r#type): (&str, &str),
        body: impl FnOnce(&mut Writer, &str, &str) -> String,
    ) -> String {
        let (lower, upper, step) = (
            self.constant(&lower.to_string(), Index.name()),
            self.constant(&upper.to_string(), Index.name()),
            self.constant("1", Index.name()),
        );
        let result = self.fresh();
        let (induction, carried) = (self.fresh(), self.fresh());
        self.line(&format!("{result} = \"scf.for\"({lower}, {upper}, {step}, {initial}) ({{"));
        self.line(&format!("^bb0({induction}: index, {carried}: {type}):"));
        self.depth += 1;
        let next = body(self, &induction, &carried);
        self.line(&format!("\"scf.yield\"({next}) : ({type}) -> ()"));
        self.depth -= 1;
        self.line(&format!("}}) : (index, index, index, {type}) -> {type}"));
        result
    }
}

/// One operand of a kernel function: its argument name, memref type and window.
pub(crate) struct KernelOperand {
    pub name: &'static str,
    pub memref: String,
    pub window: String,
}

/// A window parameter: the index map `transform` and the block shape.
pub(crate) fn window(shape: &[i64], transform: &str) -> String {
    let bounds: Vec<String> = shape.iter().map(i64::to_string).collect();
    format!("{{transform_indices = @{transform}, window_bounds = array<i64: {}>}}", bounds.join(", "))
}

/// The kernel function as Mosaic reads it: grid arguments (i32), then the operands'
/// windows (inputs, then outputs), then scratch buffers; `body` is its per-step program.
pub(crate) struct KernelFunction<'a> {
    pub name: &'a str,
    pub grid_arguments: &'a [&'a str],
    pub grid: &'a [i64],
    /// Whether each grid axis is `parallel` (else `arbitrary`: a carried reduction).
    pub parallel: &'a [bool],
    pub operands: &'a [KernelOperand],
    pub scratch: &'a [(&'a str, String)],
    pub body: &'a str,
}

impl KernelFunction<'_> {
    /// The kernel module: this function, then the index maps (`func.func` text), under
    /// `symbol` with Mosaic's serialization version.
    pub fn module(&self, symbol: &str, maps: &str) -> String {
        let mut arguments: Vec<String> = self.grid_arguments.iter().map(|name| format!("{name}: i32")).collect();
        arguments.extend(self.operands.iter().map(|operand| format!("{}: {}", operand.name, operand.memref)));
        arguments.extend(self.scratch.iter().map(|(name, r#type)| format!("{name}: {type}")));
        let types: Vec<&str> = arguments.iter().map(|a| a.split(": ").nth(1).expect("typed")).collect();
        let windows: Vec<&str> = self.operands.iter().map(|operand| operand.window.as_str()).collect();
        let semantics: Vec<String> = self
            .parallel
            .iter()
            .map(|&p| format!("#tpu.dimension_semantics<{}>", if p { "parallel" } else { "arbitrary" }))
            .collect();
        let bounds: Vec<String> = self.grid.iter().map(i64::to_string).collect();
        format!(
            "\"builtin.module\"() <{{sym_name = \"{symbol}\"}}> ({{\n  \"func.func\"() ({{\n  ^bb0({}):\n{}  }}) {{dimension_semantics = [{}], function_type = ({}) -> (), iteration_bounds = array<i64: {}>, scalar_prefetch = 0 : i64, scratch_operands = {} : i64, sym_name = \"{}\", tpu.core_type = #tpu.core_type<tc>, window_params = [{}]}} : () -> ()\n{maps}}}) {{stable_mosaic.version = {} : i64}} : () -> ()\n",
            arguments.join(", "),
            self.body,
            semantics.join(", "),
            types.join(", "),
            bounds.join(", "),
            self.scratch.len(),
            self.name,
            windows.join(", "),
            MOSAIC_VERSION,
        )
    }
}

/// An index map: `func.func @name` from the grid arguments (`prelude` defines values
/// from them and `%zero`) to the block indices `results`.
pub(crate) fn index_map(name: &str, grid_arguments: &[&str], prelude: &str, results: &str, rank: usize) -> String {
    let arguments: Vec<String> = grid_arguments.iter().map(|a| format!("{a}: i32")).collect();
    let inputs = vec![I32.name(); grid_arguments.len()].join(", ");
    let outputs = vec![I32.name(); rank].join(", ");
    format!(
        "  \"func.func\"() ({{\n  ^bb0({}):\n    %zero = \"arith.constant\"() {{value = 0 : i32}} : () -> i32\n{prelude}    \"func.return\"({results}) : ({outputs}) -> ()\n  }}) {{function_type = ({inputs}) -> ({outputs}), sym_name = \"{name}\"}} : () -> ()\n",
        arguments.join(", ")
    )
}
