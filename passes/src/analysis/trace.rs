//! Walking StableHLO use-def chains the way JAX writes them: through calls of the private
//! helper functions JAX emits (`@_where`, `@_einsum`...), and through layout ops, whose
//! effect on axes `atoms` follows.

use crate::analysis::atoms::{self, Atoms, Axis, Mismatch};
use flywheel_dialect::ir::string_attribute;
use flywheel_dialect::{
    ir::{block_argument, op_result},
    stablehlo::{splat_value, BroadcastInDim, Constant, Reshape, Transpose},
    tensor::TensorInfo,
};
use melior::ir::{
    attribute::FlatSymbolRefAttribute,
    operation::{OperationLike, OperationRef, WalkOrder, WalkResult},
    BlockLike, RegionLike, Value, ValueLike,
};
use std::collections::HashMap;

/// A value, seen from inside the calls (outermost first) that lead to it. A value in the
/// function being rewritten has no calls.
#[derive(Clone, Debug)]
pub struct Traced<'c, 'a> {
    pub value: Value<'c, 'a>,
    pub calls: Vec<OperationRef<'c, 'a>>,
}

impl<'c, 'a> Traced<'c, 'a> {
    pub fn outer(value: Value<'c, 'a>) -> Self {
        Traced { value, calls: Vec::new() }
    }

    pub fn is_outer(&self) -> bool {
        self.calls.is_empty()
    }

    /// The static shape, or `None` for a dynamic or non-tensor value.
    pub fn shape(&self) -> Option<Vec<i64>> {
        TensorInfo::of_value(self.value)?.shape.into_iter().collect()
    }

    pub fn element_type(&self) -> Option<String> {
        Some(TensorInfo::of_value(self.value)?.element_name())
    }
}

/// An op reached by tracing, with the calls it sits inside.
#[derive(Clone, Debug)]
pub struct Node<'c, 'a> {
    pub op: OperationRef<'c, 'a>,
    pub calls: Vec<OperationRef<'c, 'a>>,
}

impl<'c, 'a> Node<'c, 'a> {
    pub fn name(&self) -> String {
        self.op.name().as_string_ref().as_str().unwrap_or_default().to_owned()
    }

    pub fn is(&self, name: &str) -> bool {
        self.op.name().as_string_ref().as_str() == Ok(name)
    }

    pub fn operand_count(&self) -> usize {
        self.op.operand_count()
    }

    pub fn operand(&self, index: usize) -> Traced<'c, 'a> {
        Traced { value: self.op.operand(index).expect("operand index in range"), calls: self.calls.clone() }
    }

    pub fn result(&self) -> Traced<'c, 'a> {
        Traced { value: self.op.result(0).expect("op has a result").into(), calls: self.calls.clone() }
    }
}

/// Resolves values through calls of the module's private functions.
pub struct Tracer<'c, 'a> {
    private_functions: HashMap<String, OperationRef<'c, 'a>>,
}

impl<'c, 'a> Tracer<'c, 'a> {
    /// Indexes the private functions of `module` (a `builtin.module`).
    pub fn new(module: OperationRef<'c, 'a>) -> Self {
        let mut private_functions = HashMap::new();
        let body = module.region(0).ok().and_then(|region| region.first_block());
        let mut next = body.and_then(|block| block.first_operation());
        while let Some(op) = next {
            let private =
                op.attribute("sym_visibility").ok().and_then(string_attribute).is_some_and(|v| v == "private");
            let name = op.attribute("sym_name").ok().and_then(string_attribute);
            if let (true, true, Some(name)) = (op.name().as_string_ref().as_str() == Ok("func.func"), private, name) {
                private_functions.insert(name, op);
            }
            next = op.next_in_block();
        }
        Tracer { private_functions }
    }

    /// The value a `stablehlo.while` starts a loop-invariant carried value at (its body
    /// passes the value on unchanged, so it holds that value in every step); `None` for
    /// anything else.
    pub fn loop_invariant_init(&self, traced: &Traced<'c, 'a>) -> Option<Traced<'c, 'a>> {
        let argument = block_argument(traced.value)?;
        // SAFETY: the owner block and its parent op live as long as the module ('a).
        let op: OperationRef<'c, 'a> = unsafe {
            let block = mlir_sys::mlirBlockArgumentGetOwner(traced.value.to_raw());
            OperationRef::from_option_raw(mlir_sys::mlirBlockGetParentOperation(block))?
        };
        if op.name().as_string_ref().as_str() != Ok("stablehlo.while") {
            return None;
        }
        let body = op.region(1).ok()?.first_block()?;
        let index = argument.argument_number();
        let passed_on: Value = body.argument(index).ok()?.into();
        (last_operation(body)?.operand(index).ok()? == passed_on)
            .then(|| Some(Traced { value: op.operand(index).ok()?, calls: traced.calls.clone() }))
            .flatten()
    }

    /// Whether any `func.call` in the module still calls `function`.
    pub fn is_called(&self, function: OperationRef<'c, 'a>) -> bool {
        let Some(module) = function.parent_operation() else { return true };
        let mut called = false;
        module.walk(WalkOrder::PreOrder, |op| {
            called |= self.callee(op).is_some_and(|callee| callee == function);
            if called {
                WalkResult::Interrupt
            } else {
                WalkResult::Advance
            }
        });
        called
    }

    /// The private function a `func.call` calls.
    pub fn callee(&self, call: OperationRef<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
        if call.name().as_string_ref().as_str() != Ok("func.call") {
            return None;
        }
        let name = FlatSymbolRefAttribute::try_from(call.attribute("callee").ok()?).ok()?;
        self.private_functions.get(name.value()).copied()
    }

    /// Leaves callee arguments for the call operands they are bound to.
    pub fn resolve(&self, traced: &Traced<'c, 'a>) -> Traced<'c, 'a> {
        let mut traced = traced.clone();
        while let (Some(argument), Some(&call)) = (block_argument(traced.value), traced.calls.last()) {
            let Some(callee) = self.callee(call) else { break };
            let entry = callee.region(0).ok().and_then(|region| region.first_block());
            if entry != Some(argument.owner()) {
                break;
            }
            traced.value = call.operand(argument.argument_number()).expect("call passes every argument");
            traced.calls.pop();
        }
        traced
    }

    /// The op that computes `traced`, entering private calls; `None` for a function
    /// argument.
    pub fn producer(&self, traced: &Traced<'c, 'a>) -> Option<Node<'c, 'a>> {
        let mut traced = self.resolve(traced);
        loop {
            let result = op_result(traced.value)?;
            let op = result.owner();
            let Some(callee) = self.callee(op) else {
                return Some(Node { op, calls: traced.calls });
            };
            let body = callee.region(0).ok()?.first_block()?;
            let returned = last_operation(body)?.operand(result.result_number()).ok()?;
            traced.calls.push(op);
            traced = self.resolve(&Traced { value: returned, calls: traced.calls });
        }
    }

    /// The producer if it is the op `name`.
    pub fn producer_named(&self, traced: &Traced<'c, 'a>, name: &str) -> Option<Node<'c, 'a>> {
        self.producer(traced).filter(|node| node.is(name))
    }

    /// The value of a splat constant, possibly broadcast (`broadcast_in_dim(constant)`).
    pub fn splat(&self, traced: &Traced<'c, 'a>) -> Option<f64> {
        let node = self.producer(traced)?;
        if node.is(BroadcastInDim::NAME) {
            return self.splat(&node.operand(0));
        }
        if node.is(Constant::NAME) {
            return splat_value(node.op.attribute("value").ok()?);
        }
        None
    }
}

/// A block's last op: its terminator (`Block::terminator` cannot tell that an
/// unregistered op such as `stablehlo.return` is one).
pub fn last_operation<'c, 'a>(block: melior::ir::BlockRef<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    let mut last = block.first_operation()?;
    while let Some(next) = last.next_in_block() {
        last = next;
    }
    Some(last)
}

/// A layout op between a value and the tensor it rearranges.
#[derive(Clone, Debug, PartialEq)]
pub enum LayoutStep {
    Transpose(Vec<i64>),
    Reshape(Vec<i64>),
    BroadcastInDim {
        dimensions: Vec<i64>,
        shape: Vec<i64>,
    },
    /// An element-type change; the data's layout is unchanged.
    Convert,
}

/// What `follow_layout` may step through besides transposes and reshapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Through {
    pub converts: bool,
    pub broadcasts: bool,
}

/// The layout chain ending at `traced`: its source (the first value, walking back, not
/// made by a layout op) and the steps from the source to `traced`, in order. Every
/// intermediate value along the chain is also returned (source first).
pub fn follow_layout<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    traced: &Traced<'c, 'a>,
    through: Through,
) -> (Vec<Traced<'c, 'a>>, Vec<LayoutStep>) {
    let mut values = vec![traced.clone()];
    let mut steps = Vec::new();
    let mut current = traced.clone();
    while let Some(node) = tracer.producer(&current) {
        let Some(step) = layout_step(&node, through) else { break };
        steps.push(step);
        current = node.operand(0);
        values.push(current.clone());
    }
    steps.reverse();
    values.reverse();
    (values, steps)
}

/// The layout step `node` performs, if it is a layout op `through` allows.
pub fn layout_step(node: &Node, through: Through) -> Option<LayoutStep> {
    let shape = node.result().shape();
    match node.name().as_str() {
        Transpose::NAME => {
            Transpose::from_operation(node.op).and_then(|t| t.permutation().ok()).map(LayoutStep::Transpose)
        }
        Reshape::NAME => shape.map(LayoutStep::Reshape),
        BroadcastInDim::NAME if through.broadcasts => BroadcastInDim::from_operation(node.op)
            .and_then(|b| b.broadcast_dimensions().ok())
            .zip(shape)
            .map(|(dimensions, shape)| LayoutStep::BroadcastInDim { dimensions, shape }),
        "stablehlo.convert" if through.converts => Some(LayoutStep::Convert),
        _ => None,
    }
}

/// Lets `layout_step` take every layout op.
pub const ANY_LAYOUT: Through = Through { converts: true, broadcasts: true };

/// The axes after applying `steps` to a tensor with `axes`.
pub fn apply_layout(atoms: &mut Atoms, axes: &[Axis], steps: &[LayoutStep]) -> Result<Vec<Axis>, Mismatch> {
    let mut axes = axes.to_vec();
    for step in steps {
        axes = match step {
            LayoutStep::Transpose(permutation) => atoms::transpose(&axes, permutation),
            LayoutStep::Reshape(shape) => atoms.reshape(&axes, shape)?,
            LayoutStep::BroadcastInDim { dimensions, shape } => {
                atoms::broadcast_in_dim(atoms, &axes, dimensions, shape)
            }
            LayoutStep::Convert => axes,
        };
    }
    Ok(axes)
}

/// Whether a value is used by anything.
pub fn has_uses(value: Value) -> bool {
    !unsafe { mlir_sys::mlirOpOperandIsNull(mlir_sys::mlirValueGetFirstUse(value.to_raw())) }
}

/// The ops that use `value`, in use-list order (an op using it twice twice).
pub fn users<'c, 'a>(value: Value<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let mut users = Vec::new();
    // SAFETY: the use list of a live value; each owner is a live op of the same module.
    unsafe {
        let mut operand = mlir_sys::mlirValueGetFirstUse(value.to_raw());
        while !mlir_sys::mlirOpOperandIsNull(operand) {
            users.extend(OperationRef::from_option_raw(mlir_sys::mlirOpOperandGetOwner(operand)));
            operand = mlir_sys::mlirOpOperandGetNextUse(operand);
        }
    }
    users
}

/// Ops a pass may erase once nothing uses them: StableHLO ops without side effects, and
/// calls of private functions (JAX's helpers, which are pure).
fn erasable(tracer: &Tracer, op: OperationRef) -> bool {
    let name = op.name().as_string_ref().as_str().unwrap_or_default().to_owned();
    const EFFECTFUL: &[&str] = &[
        "stablehlo.custom_call",
        "stablehlo.infeed",
        "stablehlo.outfeed",
        "stablehlo.send",
        "stablehlo.recv",
        "stablehlo.rng_bit_generator",
        "stablehlo.all_reduce",
        "stablehlo.all_gather",
        "stablehlo.collective_permute",
        "stablehlo.all_to_all",
        "stablehlo.reduce_scatter",
        "stablehlo.optimization_barrier",
    ];
    (name.starts_with("stablehlo.") && !EFFECTFUL.contains(&name.as_str())) || tracer.callee(op).is_some()
}

/// Erases `ops` that nothing uses any more, then whatever only they used, and private
/// functions no call is left for. Ops something else still uses stay. Returns the
/// addresses of every op destroyed, those nested in them included, so a caller holding
/// handles to ops of the module can drop the dead ones.
pub fn erase_dead(tracer: &Tracer, ops: &[OperationRef]) -> std::collections::HashSet<usize> {
    erase_dead_visiting(tracer, ops, |_| ())
}

/// [`erase_dead`], showing `visit` each op it destroys (nested ones too) first.
pub fn erase_dead_visiting(
    tracer: &Tracer,
    ops: &[OperationRef],
    mut visit: impl FnMut(OperationRef),
) -> std::collections::HashSet<usize> {
    let mut pending: Vec<OperationRef> = ops.to_vec();
    let mut erased: std::collections::HashSet<usize> = std::collections::HashSet::new();
    let mut callees = Vec::new();
    let key = |op: &OperationRef| op.to_raw().ptr as usize;
    while let Some(op) = pending.pop() {
        if erased.contains(&key(&op)) || !erasable(tracer, op) || op.results().any(|result| has_uses(result.into())) {
            continue;
        }
        for operand in op.operands() {
            if let Some(result) = op_result(operand) {
                pending.push(result.owner());
            }
        }
        // Calls inside the op (a loop body) go with it.
        op.walk(WalkOrder::PreOrder, |nested| {
            callees.extend(tracer.callee(nested).map(|callee| callee.to_raw()));
            erased.insert(key(&nested));
            visit(nested);
            WalkResult::Advance
        });
        unsafe { mlir_sys::mlirOperationDestroy(op.to_raw()) };
        // An op used twice by the erased one may be queued twice; `erased` skips it.
    }
    // A function no longer called goes, and then what only it called.
    while let Some(raw) = callees.pop() {
        // SAFETY: functions are only erased here, each at most once.
        let callee = unsafe { OperationRef::from_raw(raw) };
        if erased.contains(&key(&callee)) || tracer.is_called(callee) {
            continue;
        }
        callee.walk(WalkOrder::PreOrder, |nested| {
            callees.extend(tracer.callee(nested).map(|callee| callee.to_raw()));
            erased.insert(key(&nested));
            visit(nested);
            WalkResult::Advance
        });
        unsafe { mlir_sys::mlirOperationDestroy(callee.to_raw()) };
    }
    erased
}

/// Calls `visit` once on each op named `name` under `module`, in program order: `visit`
/// returns the addresses of the ops it destroyed (None for an op it passed over), and
/// those not yet visited are skipped. Collecting the candidates once keeps raising linear
/// in the program; no op is looked at after it is destroyed.
pub fn for_each_candidate<'c, 'a>(
    module: OperationRef<'c, 'a>,
    name: &str,
    mut visit: impl FnMut(OperationRef<'c, 'a>) -> Option<std::collections::HashSet<usize>>,
) {
    let mut candidates = Vec::new();
    module.walk(WalkOrder::PreOrder, |op| {
        if op.name().as_string_ref().as_str() == Ok(name) {
            candidates.push(op.to_raw());
        }
        WalkResult::Advance
    });
    // Addresses of destroyed ops: the candidates were all alive when collected, so no live
    // one shares an address with an op destroyed since.
    let mut destroyed = std::collections::HashSet::new();
    for raw in candidates {
        if destroyed.contains(&(raw.ptr as usize)) {
            continue;
        }
        // SAFETY: collected from the live module and not destroyed since.
        let op = unsafe { OperationRef::from_raw(raw) };
        destroyed.extend(visit(op).into_iter().flatten());
    }
}
