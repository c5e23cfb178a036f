//! Python loops that tracing unrolled — `for i in range(n): ...; ys = ys.at[i].set(y)` —
//! rolled back into the `stablehlo.while` a `lax.scan` would have traced, so that the scan
//! matchers read them too.
//!
//! The steps are found from the chain of row writes into one buffer, and the loop body is
//! learned from the last two steps, walked side by side from their writes: a value both
//! steps read is loop-invariant, a value the earlier step computed is carried, and an op of
//! the last step must match its twin op for op, its attributes equal or (slice bounds,
//! integer index constants) moving by a fixed stride. A carried value the last step no
//! longer computes (a final state nobody reads) is learned from the step before. Every
//! step is then checked against the body, from the first (whose carried values are the
//! loop's initial values) to the last: the loop computes exactly what the steps did.

use crate::analysis::hlo::HloBuilder;
use crate::analysis::trace::Traced;
use flywheel_dialect::stablehlo::{Constant, Scatter, Slice};
use flywheel_dialect::{ir::op_result, tensor::TensorInfo};
use melior::ir::{
    operation::{Operation, OperationLike, OperationPrintingFlags, OperationRef, WalkOrder, WalkResult},
    BlockLike, RegionLike, Value, ValueLike,
};
use std::collections::{HashMap, HashSet};

/// A loop rolled from unrolled steps, its results already in use in the steps' place.
pub(crate) struct Rolled<'c, 'a> {
    pub(crate) op: OperationRef<'c, 'a>,
    /// The unrolled steps' values the loop's results replaced, with those results.
    replaced: Vec<(Value<'c, 'a>, Value<'c, 'a>)>,
    /// The ops made around the loop (its counter, the moves of axes), users last.
    made: Vec<OperationRef<'c, 'a>>,
}

impl<'c, 'a> Rolled<'c, 'a> {
    /// Puts the unrolled steps back in use and erases the loop.
    pub(crate) fn undo(self) {
        for (original, result) in &self.replaced {
            // SAFETY: both values are live; the loop is destroyed once nothing uses it.
            unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(result.to_raw(), original.to_raw()) };
        }
        // Users first: the moves back, the loop, then what it was started from.
        let (before, after): (Vec<OperationRef>, Vec<OperationRef>) =
            self.made.iter().copied().partition(|op| op.is_before_in_block(self.op));
        for op in after.iter().rev() {
            unsafe { mlir_sys::mlirOperationDestroy(op.to_raw()) };
        }
        unsafe { mlir_sys::mlirOperationDestroy(self.op.to_raw()) };
        for op in before.iter().rev() {
            unsafe { mlir_sys::mlirOperationDestroy(op.to_raw()) };
        }
    }

    /// The unrolled steps' values the loop replaced (dead once the loop is raised).
    pub(crate) fn unrolled(&self) -> Vec<OperationRef<'c, 'a>> {
        self.replaced.iter().filter_map(|(original, _)| op_result(*original).map(|r| r.owner())).collect()
    }
}

/// Every chain of two or more row writes (`scatter` or `dynamic_update_slice` with
/// constant indices) each writing into the one before, in program order.
pub(crate) fn write_chains<'c, 'a>(module: OperationRef<'c, 'a>) -> Vec<Vec<OperationRef<'c, 'a>>> {
    let mut writes = Vec::new();
    module.walk(WalkOrder::PreOrder, |op| {
        if is_write(op) {
            writes.push(op.to_raw());
        }
        WalkResult::Advance
    });
    let mut chains = Vec::new();
    for raw in writes {
        // SAFETY: collected from the live module just now.
        let op: OperationRef<'c, 'a> = unsafe { OperationRef::from_raw(raw) };
        let previous = op.operand(0).ok().and_then(op_result).map(|result| result.owner());
        if previous.is_some_and(|previous| is_write(previous) && next_write(previous) == Some(op)) {
            continue;
        }
        let mut chain = vec![op];
        while let Some(next) = next_write(*chain.last().expect("not empty")) {
            chain.push(next);
        }
        if chain.len() >= 2 {
            chains.push(chain);
        }
    }
    chains
}

fn is_write(op: OperationRef) -> bool {
    let name = op.name().as_string_ref().as_str().unwrap_or_default().to_owned();
    (name == "stablehlo.scatter" || name == "stablehlo.dynamic_update_slice") && op.result_count() == 1
}

/// The write into `write`'s result, if that result's only use is a write's buffer.
fn next_write<'c, 'a>(write: OperationRef<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    let result: Value = write.result(0).ok()?.into();
    let users = crate::analysis::trace::users(result);
    match users[..] {
        [user] if is_write(user) && user.operand(0).ok() == Some(result) && user.block() == write.block() => Some(user),
        _ => None,
    }
}

/// One piece of the loop body.
enum Piece<'c, 'a> {
    /// The same value in every step.
    Invariant(Value<'c, 'a>),
    /// The value of `Role` the previous step computed.
    Carried(usize),
    /// An op like the last step's `template`: its result `result`, operands from pieces.
    Op { template: OperationRef<'c, 'a>, result: usize, operands: Vec<usize>, moving: Moving, form: Form },
}

/// What every step's op must print as, printed once from the template: its signature with
/// the moving attributes left out, and its regions.
struct Form {
    signature: String,
    regions: Vec<String>,
}

impl<'c, 'a> Piece<'c, 'a> {
    fn op(template: OperationRef<'c, 'a>, result: usize, operands: Vec<usize>, moving: Moving) -> Self {
        let form = Form { signature: signature(template, moving.masked()), regions: region_texts(template) };
        Piece::Op { template, result, operands, moving, form }
    }
}

/// How an op's attributes move from step to step: their values at step 0 and the stride.
enum Moving {
    Fixed,
    /// A `stablehlo.slice`'s bounds.
    Slice {
        start: Vec<i64>,
        size: Vec<i64>,
        stride: Vec<i64>,
    },
    /// An integer splat `stablehlo.constant`.
    Constant {
        first: i64,
        stride: i64,
    },
}

impl Moving {
    /// The attributes that move (left out of signatures).
    fn masked(&self) -> &'static [&'static str] {
        match self {
            Moving::Fixed => &[],
            Moving::Slice { .. } => SLICE_BOUNDS,
            Moving::Constant { .. } => CONSTANT_VALUE,
        }
    }

    /// Whether `op`'s moving attributes have their values at `step`.
    fn at(&self, op: OperationRef, step: usize) -> bool {
        let step = step as i64;
        match self {
            Moving::Fixed => true,
            Moving::Slice { start, size, stride } => {
                let at: Vec<i64> = start.iter().zip(stride).map(|(s, d)| s + step * d).collect();
                let limit: Vec<i64> = at.iter().zip(size).map(|(s, n)| s + n).collect();
                slice_bounds(op) == Some((at, limit))
            }
            Moving::Constant { first, stride } => integer_splat(op) == Some(first + step * stride),
        }
    }
}

/// A value carried from step to step: the piece that computes it, and its initial value.
struct Role<'c, 'a> {
    next: usize,
    init: Option<Value<'c, 'a>>,
}

/// The loop body as learned from the last two steps.
struct Body<'c, 'a> {
    pieces: Vec<Piece<'c, 'a>>,
    roles: Vec<Role<'c, 'a>>,
    invariants: Vec<Value<'c, 'a>>,
    root: usize,
    steps: i64,
}

/// Rolls `chain` (row writes, one per step) into a loop whose results replace the last
/// step's values; `None`, changing nothing, unless every step is the same body.
pub(crate) fn roll<'c, 'a>(chain: &[OperationRef<'c, 'a>]) -> Option<Rolled<'c, 'a>> {
    let mut body = learn(chain)?;
    let memos = check_steps(&mut body, chain)?;
    Some(build(&body, chain, &memos))
}

// ---- learning the body from the last two steps ------------------------------------------

struct Learner<'c, 'a> {
    pieces: Vec<Piece<'c, 'a>>,
    pairs: HashMap<(usize, usize), usize>,
    /// Roles by the earlier step's value, with the value that step read for them.
    roles: Vec<(Value<'c, 'a>, Value<'c, 'a>)>,
    /// The earlier step's values, by the piece they are.
    twin: HashMap<usize, usize>,
    invariants: Vec<Value<'c, 'a>>,
    /// The earlier step's write: the last step's ops come after it.
    boundary: OperationRef<'c, 'a>,
    steps: i64,
}

fn key(value: Value) -> usize {
    value.to_raw().ptr as usize
}

fn learn<'c, 'a>(chain: &[OperationRef<'c, 'a>]) -> Option<Body<'c, 'a>> {
    let steps = chain.len() as i64;
    let (last, earlier) = (chain[chain.len() - 1], chain[chain.len() - 2]);
    let mut learner = Learner {
        pieces: Vec::new(),
        pairs: HashMap::new(),
        roles: Vec::new(),
        twin: HashMap::new(),
        invariants: Vec::new(),
        boundary: earlier,
        steps,
    };
    let root = learner.pair(last.result(0).ok()?.into(), earlier.result(0).ok()?.into())?;
    // Each carried value is computed by a piece: its twin in the last step, or (when the
    // last step no longer computes it) the earlier step's own ops.
    let mut roles = Vec::new();
    let mut extension = HashMap::new();
    for index in 0..learner.roles.len() {
        let (value, _) = learner.roles[index];
        let next = match learner.twin.get(&key(value)) {
            Some(&piece) => piece,
            None => learner.extend(value, &mut extension)?,
        };
        roles.push(Role { next, init: None });
    }
    Some(Body { pieces: learner.pieces, roles, invariants: learner.invariants, root, steps })
}

impl<'c, 'a> Learner<'c, 'a> {
    fn add(&mut self, piece: Piece<'c, 'a>) -> usize {
        self.pieces.push(piece);
        self.pieces.len() - 1
    }

    fn invariant(&mut self, value: Value<'c, 'a>) -> usize {
        if !self.invariants.contains(&value) {
            self.invariants.push(value);
        }
        self.add(Piece::Invariant(value))
    }

    /// Whether the last step computes `value` (after the earlier step's write).
    fn in_last_step(&self, value: Value<'c, 'a>) -> bool {
        op_result(value).is_some_and(|result| {
            let op = result.owner();
            op.block() == self.boundary.block() && self.boundary.is_before_in_block(op)
        })
    }

    /// The piece the last step's value `last` is, `earlier` being its twin.
    fn pair(&mut self, last: Value<'c, 'a>, earlier: Value<'c, 'a>) -> Option<usize> {
        if let Some(&piece) = self.pairs.get(&(key(last), key(earlier))) {
            return Some(piece);
        }
        let piece = if last == earlier {
            self.invariant(last)
        } else if !self.in_last_step(last) {
            let role = match self.roles.iter().position(|&(value, _)| value == last) {
                Some(role) if self.roles[role].1 == earlier => role,
                Some(_) => return None,
                None => {
                    self.roles.push((last, earlier));
                    self.roles.len() - 1
                }
            };
            self.add(Piece::Carried(role))
        } else {
            let (a, b) = (op_result(last)?, op_result(earlier)?);
            if a.result_number() != b.result_number() {
                return None;
            }
            let (template, twin) = (a.owner(), b.owner());
            let moving = moving(template, twin, self.steps)?;
            let operands = (0..template.operand_count())
                .map(|i| self.pair(template.operand(i).ok()?, twin.operand(i).ok()?))
                .collect::<Option<Vec<_>>>()?;
            let piece = self.add(Piece::op(template, a.result_number(), operands, moving));
            self.twin.insert(key(earlier), piece);
            piece
        };
        self.pairs.insert((key(last), key(earlier)), piece);
        Some(piece)
    }

    /// The piece computing the earlier step's `value` from that step's own values: a
    /// carried value the last step no longer computes. Its ops may read only the step's
    /// pieces, carried and invariant values and constants that cannot be an index.
    fn extend(&mut self, value: Value<'c, 'a>, memo: &mut HashMap<usize, usize>) -> Option<usize> {
        if let Some(&piece) = self.twin.get(&key(value)).or_else(|| memo.get(&key(value))) {
            return Some(piece);
        }
        let piece = if let Some(role) = self.roles.iter().position(|&(_, read)| read == value) {
            self.add(Piece::Carried(role))
        } else if self.invariants.contains(&value) {
            self.add(Piece::Invariant(value))
        } else {
            let template = op_result(value)?.owner();
            let name = template.name().as_string_ref().as_str().ok()?.to_owned();
            let index_like = TensorInfo::of_value(value).is_none_or(|info| !info.is_float());
            if template.operand_count() == 0 && (name != "stablehlo.constant" || index_like) {
                return None;
            }
            if !regions_closed(template) {
                return None;
            }
            let operands = (0..template.operand_count())
                .map(|i| self.extend(template.operand(i).ok()?, memo))
                .collect::<Option<Vec<_>>>()?;
            let result = op_result(value)?.result_number();
            self.add(Piece::op(template, result, operands, Moving::Fixed))
        };
        memo.insert(key(value), piece);
        Some(piece)
    }
}

/// How `last`'s attributes move from `earlier`'s (the step before), if they agree but for
/// slice bounds or an integer constant moving by a fixed stride.
fn moving(last: OperationRef, earlier: OperationRef, steps: i64) -> Option<Moving> {
    if last.region_count() != earlier.region_count()
        || !regions_closed(last)
        || region_texts(last) != region_texts(earlier)
    {
        return None;
    }
    if signature(last, &[]) == signature(earlier, &[]) {
        return Some(Moving::Fixed);
    }

    let back = steps - 1;
    // Moving attributes become index arithmetic on static shapes.
    static_shape(last.result(0).ok()?.into())?;
    match last.name().as_string_ref().as_str().ok()? {
        Slice::NAME if signature(last, SLICE_BOUNDS) == signature(earlier, SLICE_BOUNDS) => {
            let (start, limit) = slice_bounds(last)?;
            let (start_before, limit_before) = slice_bounds(earlier)?;
            let stride: Vec<i64> = start.iter().zip(&start_before).map(|(a, b)| a - b).collect();
            let same_size = limit.iter().zip(&limit_before).zip(&stride).all(|((a, b), s)| a - b == *s);
            let unit_strides = Slice::from_operation(last)?.strides().ok()?.iter().all(|&s| s == 1);
            let size: Vec<i64> = limit.iter().zip(&start).map(|(l, s)| l - s).collect();
            let first: Vec<i64> = start.iter().zip(&stride).map(|(s, d)| s - back * d).collect();
            (same_size && unit_strides).then_some(Moving::Slice { start: first, size, stride })
        }
        "stablehlo.constant" if signature(last, CONSTANT_VALUE) == signature(earlier, CONSTANT_VALUE) => {
            let (value, before) = (integer_splat(last)?, integer_splat(earlier)?);
            Some(Moving::Constant { first: value - back * (value - before), stride: value - before })
        }
        _ => None,
    }
}

const SLICE_BOUNDS: &[&str] = &["start_indices", "limit_indices"];
const CONSTANT_VALUE: &[&str] = &["value"];

/// An integer splat constant's value (an index).
fn integer_splat(op: OperationRef) -> Option<i64> {
    let constant = Constant::from_operation(op)?;
    let integer = TensorInfo::of_value(constant.result())?.is_integer();
    let value = constant.splat()?;
    (integer && value.fract() == 0.0 && value.abs() < 2f64.powi(31)).then_some(value as i64)
}

/// A slice's start and limit indices.
fn slice_bounds(op: OperationRef) -> Option<(Vec<i64>, Vec<i64>)> {
    let slice = Slice::from_operation(op)?;
    Some((slice.start_indices().ok()?, slice.limit_indices().ok()?))
}

/// An op as printed (generic form) without its operands' and results' names, its regions
/// and the attributes `masked`: two ops with one signature compute the same function of
/// their operands (regions aside).
fn signature(op: OperationRef, masked: &[&str]) -> String {
    let flags = OperationPrintingFlags::new().print_generic_operation_form().use_local_scope();
    // SAFETY: live flags.
    unsafe {
        mlir_sys::mlirOpPrintingFlagsSkipRegions(flags.to_raw());
        mlir_sys::mlirOpPrintingFlagsAssumeVerified(flags.to_raw());
    }
    let text = op.to_string_with_flags(flags).unwrap_or_default();
    // From the op's name on (the results' names go), the operand list emptied.
    let from_name = text.find('"').map_or(text.as_str(), |at| &text[at..]);
    let name_end = from_name[1..].find('"').map_or(0, |at| at + 2);
    let operands_end = from_name[name_end..].find(')').map_or(name_end, |at| name_end + at + 1);
    let mut text = format!("{}(){}", &from_name[..name_end], &from_name[operands_end..]);
    for name in masked {
        text = without_attribute(&text, name);
    }
    text
}

/// `text` with the attribute `name = value` taken out.
fn without_attribute(text: &str, name: &str) -> String {
    let patterns = [format!("{{{name} = "), format!(", {name} = ")];
    let Some((start, length)) = patterns.iter().find_map(|p| text.find(p.as_str()).map(|i| (i, p.len()))) else {
        return text.to_owned();
    };
    let rest = &text[start + length..];
    let mut depth = 0;
    let mut end = rest.len();
    for (i, c) in rest.char_indices() {
        match c {
            '<' | '[' | '(' | '{' => depth += 1,
            '>' | ']' | ')' | '}' | ',' if depth == 0 => {
                end = i;
                break;
            }
            '>' | ']' | ')' | '}' => depth -= 1,
            _ => {}
        }
    }
    format!("{}{}", &text[..start + 1], &rest[end..])
}

/// Whether `op`'s regions use only values defined inside them (a reduce's or scatter's
/// combiner): a copy of the op then computes the same wherever it is.
fn regions_closed(op: OperationRef) -> bool {
    let mut inside = HashSet::new();
    let mut closed = true;
    op.walk(WalkOrder::PreOrder, |inner| {
        if inner != op {
            closed &= inner.operands().all(|operand| inside.contains(&key(operand)));
            inside.extend(inner.results().map(|result| key(result.into())));
        }
        for region in inner.regions() {
            let mut block = region.first_block();
            while let Some(b) = block {
                inside.extend((0..b.argument_count()).map(|i| key(b.argument(i).expect("in range").into())));
                block = b.next_in_region();
            }
        }
        WalkResult::Advance
    });
    closed
}

/// An op's regions as code: equal texts, the same ops within, reading the same positions.
fn region_texts(op: OperationRef) -> Vec<String> {
    op.regions().map(|region| region_text(&region)).collect()
}

/// A region's ops printed with values named by position: equal texts, equal code.
fn region_text(region: &melior::ir::RegionRef) -> String {
    let mut names: HashMap<usize, usize> = HashMap::new();
    let mut text = String::new();
    let name = |value: Value, names: &mut HashMap<usize, usize>| -> usize {
        let next = names.len();
        *names.entry(key(value)).or_insert(next)
    };
    let mut block = region.first_block();
    while let Some(b) = block {
        for i in 0..b.argument_count() {
            let argument: Value = b.argument(i).expect("in range").into();
            text += &format!("arg {} : {};", name(argument, &mut names), argument.r#type());
        }
        let mut next = b.first_operation();
        while let Some(op) = next {
            op.walk(WalkOrder::PreOrder, |inner| {
                let operands: Vec<String> = inner.operands().map(|v| name(v, &mut names).to_string()).collect();
                let results: Vec<String> = inner.results().map(|r| name(r.into(), &mut names).to_string()).collect();
                text += &format!("{} <- {} ({});", results.join(","), signature(inner, &[]), operands.join(","));
                WalkResult::Advance
            });
            next = op.next_in_block();
        }
        block = b.next_in_region();
    }
    text
}

// ---- checking every step ------------------------------------------------------------------

/// Per step, the value each piece is in it.
type Memos<'c, 'a> = Vec<HashMap<usize, Value<'c, 'a>>>;

fn check_steps<'c, 'a>(body: &mut Body<'c, 'a>, chain: &[OperationRef<'c, 'a>]) -> Option<Memos<'c, 'a>> {
    let mut memos: Memos = vec![HashMap::new(); chain.len()];
    for (step, write) in chain.iter().enumerate() {
        if !matches(body, &mut memos, body.root, write.result(0).ok()?.into(), step) {
            return None;
        }
    }
    body.roles.iter().all(|role| role.init.is_some()).then_some(memos)
}

/// Whether `value` is what `piece` computes in `step`.
fn matches<'c, 'a>(
    body: &mut Body<'c, 'a>,
    memos: &mut Memos<'c, 'a>,
    piece: usize,
    value: Value<'c, 'a>,
    step: usize,
) -> bool {
    if let Some(&known) = memos[step].get(&piece) {
        return known == value;
    }
    let ok = match body.pieces[piece] {
        Piece::Invariant(invariant) => invariant == value,
        Piece::Carried(role) if step == 0 => match body.roles[role].init {
            Some(init) => init == value,
            None => {
                body.roles[role].init = Some(value);
                true
            }
        },
        Piece::Carried(role) => {
            let next = body.roles[role].next;
            matches(body, memos, next, value, step - 1)
        }
        Piece::Op { template, result, ref operands, ref moving, ref form } => {
            let op = op_result(value).filter(|r| r.result_number() == result).map(|r| r.owner());
            let alike = op.filter(|&op| {
                op.region_count() == template.region_count()
                    && moving.at(op, step)
                    && signature(op, moving.masked()) == form.signature
                    && region_texts(op) == form.regions
            });
            let operands = operands.clone();
            alike.is_some_and(|op| {
                (0..operands.len()).all(|i| op.operand(i).is_ok_and(|v| matches(body, memos, operands[i], v, step)))
            })
        }
    };
    if ok {
        memos[step].insert(piece, value);
    }
    ok
}

// ---- building the loop ---------------------------------------------------------------------

/// Where the loop reads and writes rows, so that it can be built as `lax.scan` over
/// `moveaxis(x, axis, 0)` would be: sequences and the output buffer carried with their
/// steps first.
struct TimeMajor {
    /// Row slices of invariant sequences: piece, and the sequence's step axis.
    rows: HashMap<usize, usize>,
    /// The invariants read by rows, with their step axes (each carried steps first).
    sequences: Vec<(usize, usize)>,
    /// The output buffer's role, its step axis, and the root's row operand piece.
    output: Option<(usize, usize, usize)>,
}

impl TimeMajor {
    fn of(body: &Body) -> Self {
        let mut rows = HashMap::new();
        let mut sequences = Vec::new();
        for (index, piece) in body.pieces.iter().enumerate() {
            let Piece::Op { template, operands, moving: Moving::Slice { start, size, stride }, .. } = piece else {
                continue;
            };
            let Piece::Invariant(sequence) = body.pieces[operands[0]] else { continue };
            let Some(shape) = static_shape(sequence) else { continue };
            let moving: Vec<usize> = (0..stride.len()).filter(|&d| stride[d] != 0).collect();
            let [axis] = moving[..] else { continue };
            let whole_rows = (0..shape.len()).all(|d| start[d] == 0 && size[d] == if d == axis { 1 } else { shape[d] })
                && stride[axis] == 1;
            if whole_rows && template.operand_count() == 1 {
                let invariant = body.invariants.iter().position(|&v| v == sequence).expect("listed");
                rows.insert(index, axis);
                if !sequences.contains(&(invariant, axis)) {
                    sequences.push((invariant, axis));
                }
            }
        }
        let output = body.roles.iter().position(|role| role.next == body.root).and_then(|role| {
            let (axis, row) = row_write(body, body.root)?;
            Some((role, axis, row))
        });
        TimeMajor { rows, sequences, output }
    }
}

/// The step axis and the row piece of a write that puts the step's row into the buffer:
/// an overwriting `scatter` or a `dynamic_update_slice` at the step.
fn row_write(body: &Body, piece: usize) -> Option<(usize, usize)> {
    let Piece::Op { template, operands, .. } = &body.pieces[piece] else { return None };
    let at_step =
        |piece: usize| matches!(body.pieces[piece], Piece::Op { moving: Moving::Constant { first: 0, stride: 1 }, .. });
    let is_zero = |piece: usize| match body.pieces[piece] {
        Piece::Op { template, moving: Moving::Fixed, .. } => integer_splat(template) == Some(0),
        _ => false,
    };
    let shape = static_shape(template.result(0).ok()?.into())?;
    if let Some(scatter) = Scatter::from_operation(*template) {
        let numbers = scatter.dimension_numbers().ok()?;
        let [axis] = numbers.inserted_window_dims[..] else { return None };
        let windows: Vec<i64> = (0..shape.len() as i64 - 1).collect();
        let ok = numbers.scatter_dims_to_operand_dims == [axis]
            && numbers.update_window_dims == windows
            && numbers.input_batching_dims.is_empty()
            && scatter.overwrites()
            && at_step(operands[1]);
        return ok.then_some((axis as usize, operands[2]));
    }
    // dynamic_update_slice(buffer, row, indices...): one index the step, the rest 0, the row
    // one step long.
    let indices = &operands[2..];
    let axis = indices.iter().position(|&p| at_step(p))?;
    let row_shape = static_shape(template.operand(1).ok()?)?;
    let ok = indices.len() == shape.len()
        && indices.iter().enumerate().all(|(d, &p)| d == axis || is_zero(p))
        && (0..shape.len()).all(|d| row_shape[d] == if d == axis { 1 } else { shape[d] });
    ok.then_some((axis, operands[1]))
}

/// A tensor's static shape (`None` for anything else).
fn static_shape(value: Value) -> Option<Vec<i64>> {
    Traced::outer(value).shape()
}

/// The static shape of a value `TimeMajor::of` or `moving` found static.
fn shape_of(value: Value) -> Vec<i64> {
    static_shape(value).expect("a static tensor (checked)")
}

fn element_of(value: Value) -> String {
    Traced::outer(value).element_type().unwrap_or_default()
}

/// The permutation moving `axis` first, the others after it in order.
fn axis_first(rank: usize, axis: usize) -> Vec<i64> {
    std::iter::once(axis).chain((0..rank).filter(|&d| d != axis)).map(|d| d as i64).collect()
}

/// `x` with `axis` moved first (or back, `inverse`), built by `builder`; the op, if one
/// was needed, joins `made`.
fn move_axis<'c, 'a>(
    builder: &HloBuilder<'c, 'a>,
    x: Value<'c, 'a>,
    axis: usize,
    inverse: bool,
    made: &mut Vec<OperationRef<'c, 'a>>,
) -> Value<'c, 'a> {
    let shape = shape_of(x);
    let forward = axis_first(shape.len(), axis);
    let permutation: Vec<i64> = if inverse {
        (0..shape.len() as i64).map(|d| forward.iter().position(|&f| f == d).expect("a permutation") as i64).collect()
    } else {
        forward
    };
    let moved = builder.transpose(x, &permutation, &shape, &element_of(x));
    made.extend(op_result(moved).filter(|_| moved != x).map(|result| result.owner()));
    moved
}

fn build<'c, 'a>(body: &Body<'c, 'a>, chain: &[OperationRef<'c, 'a>], memos: &Memos<'c, 'a>) -> Rolled<'c, 'a> {
    let builder = HloBuilder::before(chain[0]);
    let layout = TimeMajor::of(body);
    let mut made = Vec::new();
    let counter = builder.scalar(0.0, "i32");
    made.extend(op_result(counter).map(|result| result.owner()));
    let mut role_inits: Vec<Value> = body.roles.iter().map(|role| role.init.expect("checked")).collect();
    if let Some((role, axis, _)) = layout.output {
        role_inits[role] = move_axis(&builder, role_inits[role], axis, false, &mut made);
    }
    let sequences: Vec<Value> = layout
        .sequences
        .iter()
        .map(|&(invariant, axis)| move_axis(&builder, body.invariants[invariant], axis, false, &mut made))
        .collect();
    let inits: Vec<Value> =
        std::iter::once(counter).chain(role_inits).chain(body.invariants.iter().copied()).chain(sequences).collect();
    let steps = body.steps;
    let results = builder.while_loop(
        &inits,
        |b, carried| {
            let limit = b.scalar(steps as f64, "i32");
            b.op(
                "stablehlo.compare",
                &[carried[0], limit],
                &[(&[], "i1")],
                &[
                    ("comparison_direction", "#stablehlo<comparison_direction LT>".into()),
                    ("compare_type", "#stablehlo<comparison_type SIGNED>".into()),
                ],
            )[0]
        },
        |b, carried| {
            let mut emitter = Emitter { body, layout: &layout, builder: b, carried, values: HashMap::new() };
            let one = b.scalar(1.0, "i32");
            let mut next = vec![b.elementwise("stablehlo.add", &[carried[0], one])];
            next.extend(body.roles.iter().map(|role| emitter.emit(role.next)));
            next.extend_from_slice(&carried[1 + body.roles.len()..]);
            next
        },
    );
    let op = op_result(results[0]).expect("a loop result").owner();
    let after = HloBuilder::before(op.next_in_block().expect("the chain's writes follow the loop"));
    // The last step's values of each carried piece, outside the steps, now the loop's.
    let last = chain.len() - 1;
    let stepped: HashSet<usize> = memos
        .iter()
        .flat_map(|memo| memo.values().filter_map(|v| op_result(*v)).map(|r| r.owner().to_raw().ptr as usize))
        .collect();
    let mut replaced = Vec::new();
    for (index, role) in body.roles.iter().enumerate() {
        let Some(&original) = memos[last].get(&role.next) else { continue };
        let result = match layout.output {
            Some((output, axis, _)) if output == index => move_axis(&after, results[1 + index], axis, true, &mut made),
            _ => results[1 + index],
        };
        for user in crate::analysis::trace::users(original) {
            if stepped.contains(&(user.to_raw().ptr as usize)) {
                continue;
            }
            for i in 0..user.operand_count() {
                if user.operand(i).ok() == Some(original) {
                    // SAFETY: live ops; the value has the operand's type.
                    unsafe { mlir_sys::mlirOperationSetOperand(user.to_raw(), i as isize, result.to_raw()) };
                }
            }
        }
        replaced.push((original, result));
    }
    Rolled { op, replaced, made }
}

/// Emits the pieces into the loop body.
struct Emitter<'e, 'c, 'a, 'b> {
    body: &'e Body<'c, 'a>,
    layout: &'e TimeMajor,
    builder: &'e HloBuilder<'c, 'b>,
    carried: &'e [Value<'c, 'b>],
    values: HashMap<usize, Value<'c, 'b>>,
}

impl<'c, 'b> Emitter<'_, 'c, '_, 'b> {
    fn emit(&mut self, piece: usize) -> Value<'c, 'b> {
        if let Some(&value) = self.values.get(&piece) {
            return value;
        }
        let (roles, invariants) = (self.body.roles.len(), self.body.invariants.len());
        let value = match &self.body.pieces[piece] {
            Piece::Invariant(v) => {
                let index = self.body.invariants.iter().position(|x| x == v).expect("listed");
                self.carried[1 + roles + index]
            }
            Piece::Carried(role) => self.carried[1 + role],
            Piece::Op { template, result, operands, moving, .. } => {
                let is_reshape = template.name().as_string_ref().as_str() == Ok("stablehlo.reshape");
                let row = match self.layout.rows.contains_key(&piece) {
                    true => Some(piece),
                    false => operands.first().filter(|&p| is_reshape && self.layout.rows.contains_key(p)).copied(),
                };
                if let Some(row) = row {
                    // A row, or a reshape of one: one reshape of the step's slice.
                    let axis = self.layout.rows[&row];
                    let Piece::Op { operands: row_operands, .. } = &self.body.pieces[row] else {
                        unreachable!("a row")
                    };
                    let Piece::Invariant(sequence) = self.body.pieces[row_operands[0]] else { unreachable!("a row") };
                    let invariant = self.body.invariants.iter().position(|&v| v == sequence).expect("listed");
                    let at = self.layout.sequences.iter().position(|&s| s == (invariant, axis)).expect("listed");
                    self.row(self.carried[1 + roles + invariants + at], *template)
                } else if let Some((role, _, row)) = self.layout.output.filter(|_| piece == self.body.root) {
                    let row = self.emit(row);
                    self.write_row(self.carried[1 + role], row)
                } else {
                    let operands: Vec<Value> = operands.iter().map(|&p| self.emit(p)).collect();
                    self.emit_op(*template, *result, &operands, moving)
                }
            }
        };
        self.values.insert(piece, value);
        value
    }

    /// The step's row of a sequence carried steps first, shaped as `like` gives it (as
    /// `lax.scan` slices it, then one reshape).
    fn row(&self, sequence: Value<'c, 'b>, like: OperationRef) -> Value<'c, 'b> {
        let b = self.builder;
        let (shape, element) = (shape_of(sequence), element_of(sequence));
        let starts = self.step_first(shape.len());
        let sizes: Vec<i64> = std::iter::once(1).chain(shape[1..].iter().copied()).collect();
        let sliced = b.dynamic_slice(sequence, &starts, &sizes, &element);
        b.reshape(sliced, &sizes, &shape_of(like.result(0).expect("a result").into()), &element)
    }

    /// `buffer` (steps first) with the step's row set to `row` (the buffer's row, its step
    /// axis dropped or of size 1).
    fn write_row(&self, buffer: Value<'c, 'b>, row: Value<'c, 'b>) -> Value<'c, 'b> {
        let b = self.builder;
        let (shape, element) = (shape_of(buffer), element_of(buffer));
        let row_shape: Vec<i64> = std::iter::once(1).chain(shape[1..].iter().copied()).collect();
        let row = b.reshape(row, &shape_of(row), &row_shape, &element);
        b.dynamic_update_slice(buffer, row, &self.step_first(shape.len()))
    }

    /// Start indices of a tensor of `rank` carried steps first: the step, then zeros.
    fn step_first(&self, rank: usize) -> Vec<Value<'c, 'b>> {
        let zeros = (1..rank).map(|_| self.builder.scalar(0.0, "i32"));
        std::iter::once(self.carried[0]).chain(zeros).collect()
    }

    /// `start + step * stride` as an i32 scalar: a constant, the step itself, or the sum.
    fn index(&self, start: i64, stride: i64) -> Value<'c, 'b> {
        let b = self.builder;
        let step = self.carried[0];
        let scaled = match stride {
            0 => return b.scalar(start as f64, "i32"),
            1 => step,
            _ => b.elementwise("stablehlo.multiply", &[step, b.scalar(stride as f64, "i32")]),
        };
        if start == 0 {
            scaled
        } else {
            b.elementwise("stablehlo.add", &[scaled, b.scalar(start as f64, "i32")])
        }
    }

    fn emit_op(
        &self,
        template: OperationRef,
        result: usize,
        operands: &[Value<'c, 'b>],
        moving: &Moving,
    ) -> Value<'c, 'b> {
        let b = self.builder;
        let value: Value = template.result(result).expect("in range").into();
        match moving {
            Moving::Slice { start, size, stride } => {
                let starts: Vec<Value> = start.iter().zip(stride).map(|(&s, &d)| self.index(s, d)).collect();
                b.dynamic_slice(operands[0], &starts, size, &element_of(value))
            }
            Moving::Constant { first, stride } => {
                let (shape, element) = (shape_of(value), element_of(value));
                let index = b.convert(self.index(*first, *stride), &[], "i32", &element);
                if shape.iter().product::<i64>() == 1 {
                    b.reshape(index, &[], &shape, &element)
                } else {
                    b.broadcast_in_dim(index, &[], &shape, &element)
                }
            }
            Moving::Fixed => {
                // SAFETY: a live op, copied with its (closed) regions; the copy is owned until
                // inserted.
                let copy = unsafe { Operation::from_raw(mlir_sys::mlirOperationClone(template.to_raw())) };
                for (i, operand) in operands.iter().enumerate() {
                    unsafe { mlir_sys::mlirOperationSetOperand(copy.to_raw(), i as isize, operand.to_raw()) };
                }
                b.insert_op(copy).result(result).expect("in range").into()
            }
        }
    }
}
