//! `flywheel-raise-attention` (see [`PASS`]). The pattern is read backwards from the
//! softmax product; axis atoms (`analysis::atoms`) tie every axis to its role.

use crate::{
    analysis::atoms::{Atom, Atoms, Axis},
    analysis::hlo::{materialize, HloBuilder},
    analysis::operands::{
        choose_source, dot_axes, extend_root, miss, note, note_nodes, operand_chain, role_order, same_value,
        single_user, Chain, Follow, Miss, Operand,
    },
    analysis::trace::{
        apply_layout, erase_dead, follow_layout, for_each_candidate, layout_step, LayoutStep, Node, Through, Traced,
        Tracer, ANY_LAYOUT,
    },
    options::Options,
    pass::{external_pass, Anchor, PassId, PassInfo},
    raise::profitability::{self, AttentionShape, Profitability, Verdict},
    target::Generation,
};
use flywheel_dialect::float_literal;
use flywheel_dialect::{
    diagnostics::emit_remark,
    layout::{Axis as Role, Layout},
    stablehlo::{Compare, ComparisonDirection, ComparisonType, DotDimensionNumbers, DotGeneral, Iota, Reduce, Reducer},
};
use melior::{
    ir::{
        operation::{OperationLike, OperationRef},
        Value, ValueLike,
    },
    pass::Pass,
};
use std::collections::HashSet;

/// The float types a softmax may be computed in (flywheel.attention computes it in f32).
const FLOATS: [&str; 3] = ["f32", "bf16", "f16"];

/// The largest logit a mask may write and still mean "never attended": exp(fill - max)
/// is then 0 in f32 for any row whose largest allowed logit is above fill + 104, which
/// every real model's logits are (HF code masks with -1e9; MaxText, Gemma and flax with
/// about -0.7 to -1 times f32's largest).
const MASK_FILL_LIMIT: f64 = -1e9;

static PASS_ID: PassId = PassId;

crate::pass_options! {
    pub struct RaiseAttentionOptions {
        /// Remark on each raised attention and on why each softmax product was not raised
        remarks: bool = ("remarks", "false"),
        /// Keep XLA's ops where the target's kernel would be slower (off: raise every match)
        profitability: Profitability = ("profitability", "off"),
        /// The TPU generation profitability decides for
        target: Generation = ("target", "v6e"),
    }
}

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-raise-attention",
    summary: "Raise softmax attention in StableHLO into flywheel.attention",
    description: "Finds softmax attention in StableHLO as JAX writes it and replaces it with one \
`flywheel.attention`. A candidate is a `dot_general` with a softmax operand (`divide(exp(z - max z), sum exp(z - \
max z))`). The logits `z` must come from a Q·Kᵀ `dot_general` through scale multiplies, a soft-cap, a bias add and \
mask selects; Q, K and V are followed back through layout ops to their sources. Every axis is tied to its role \
(batch, heads, query, key, head dimension), so any axis order, GQA by reshape or by repeat, and output transposes \
are understood. Anything that does not fit exactly is left alone, with a remark saying why.",
    options: RaiseAttentionOptions::SPECS,
    create: |text| Ok(create(RaiseAttentionOptions::parse(text)?)),
};

fn create(RaiseAttentionOptions { remarks, profitability, target }: RaiseAttentionOptions) -> Pass {
    let decide = (profitability == Profitability::Model).then_some(target);
    external_pass(&PASS, &PASS_ID, Anchor::Module, move |op: OperationRef| {
        raise_attention(op, remarks, decide);
        true
    })
}

/// Raises every attention in `module` (a `builtin.module`); returns how many. With a
/// target to `decide` for, an attention whose kernel would be slower there than XLA's
/// ops is left as it is.
pub fn raise_attention(module: OperationRef, remarks: bool, decide: Option<Generation>) -> usize {
    let tracer = Tracer::new(module);
    let mut raised = 0;
    for_each_candidate(module, DotGeneral::NAME, |dot| {
        softmax_side(&tracer, dot)?;
        Some(match match_attention(&tracer, dot) {
            Ok(found) => {
                let (location, summary) = (dot.location(), found.summary());
                let verdict = decide.map(|target| profitability::attention(target, found.shape()));
                if let Some(Verdict::Xla(why)) = verdict {
                    if remarks {
                        emit_remark(location, &format!("attention kept as XLA's ops ({why})"));
                    }
                    return Some(Default::default());
                }
                let erased = rewrite(&tracer, found);
                if remarks {
                    let kernel = match verdict {
                        Some(Verdict::Kernel(why)) => format!("; kernel: {why}"),
                        _ => String::new(),
                    };
                    emit_remark(location, &format!("raised to flywheel.attention ({summary}{kernel})"));
                }
                raised += 1;
                erased
            }
            Err(Miss(reason)) => {
                if remarks {
                    emit_remark(dot.location(), &format!("attention not raised: {reason}"));
                }
                Default::default()
            }
        })
    });
    raised
}

/// Which operand of a `dot_general` is a softmax, `divide(exponential(..), ..)` after
/// layout ops, or one op away from one (a near miss the remarks should explain).
fn softmax_side(tracer: &Tracer, dot: OperationRef) -> Option<usize> {
    let is_softmax = |value: &Traced| {
        let (values, _) = follow_layout(tracer, value, Through { converts: true, broadcasts: false });
        tracer
            .producer_named(&values[0], "stablehlo.divide")
            .is_some_and(|divide| tracer.producer_named(&divide.operand(0), "stablehlo.exponential").is_some())
    };
    let deferred = deferred_normalization(dot).is_some();
    (0..2).find(|&side| {
        let operand = Traced::outer(dot.operand(side).expect("dot has two operands"));
        let (values, _) = follow_layout(tracer, &operand, Through { converts: true, broadcasts: false });
        is_softmax(&operand)
            || (deferred && tracer.producer_named(&values[0], "stablehlo.exponential").is_some())
            || tracer.producer(&values[0]).is_some_and(|node| {
                // One op away from a softmax (dropout's multiply, say), but not a product
                // of it: that is the P·V of an attention this dot follows.
                !node.is(DotGeneral::NAME) && (0..node.operand_count()).any(|i| is_softmax(&node.operand(i)))
            })
    })
}

/// The divide that normalizes a P·V product after it, if one does (MaxText:
/// `einsum(exp(s - max), v) / sum`): the product's result, through layout ops and
/// converts it alone uses, divided by something that comes from a sum.
fn deferred_normalization<'c, 'a>(dot: OperationRef<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    let mut value: Value = dot.result(0).ok()?.into();
    loop {
        let user = single_user(value)?;
        match user.name().as_string_ref().as_str() {
            Ok("stablehlo.transpose" | "stablehlo.reshape" | "stablehlo.convert") => {
                value = user.result(0).ok()?.into()
            }
            Ok("stablehlo.divide") if user.operand(0).ok()? == value => return Some(user),
            _ => return None,
        }
    }
}

// ---- what a match found --------------------------------------------------------------

/// A linear expression in axis coordinates, `constant + sum(coefficient * coordinate)`,
/// that a mask requires to be `<= 0`.
#[derive(Clone, Debug, Default)]
struct Affine {
    constant: i64,
    terms: Vec<(Vec<Atom>, i64)>,
}

impl Affine {
    fn scaled(mut self, factor: i64) -> Affine {
        self.constant *= factor;
        self.terms.iter_mut().for_each(|(_, coefficient)| *coefficient *= factor);
        self
    }

    fn plus(mut self, other: Affine) -> Affine {
        self.constant += other.constant;
        self.terms.extend(other.terms);
        self
    }
}

/// The masks the logits pass through: linear constraints on positions and boolean
/// tensors from the program.
#[derive(Default)]
struct Masks<'c, 'a> {
    constraints: Vec<Affine>,
    dynamic: Vec<Dynamic<'c, 'a>>,
    fill_is_infinite: bool,
}

/// A boolean tensor of the program that masks the logits (true: allowed, or with
/// `negated` false: allowed), with its axes.
struct Dynamic<'c, 'a> {
    value: Traced<'c, 'a>,
    axes: Vec<Axis>,
    negated: bool,
}

/// What the logits chain between Q·Kᵀ and the softmax does.
struct Logits<'c, 'a> {
    scale: f64,
    soft_cap: Option<f64>,
    bias: Option<(Traced<'c, 'a>, Vec<Axis>)>,
    masks: Masks<'c, 'a>,
}

/// The roles of the atoms, once the whole pattern is tied together.
struct Roles {
    batch: Vec<Atom>,
    kv_heads: Vec<Atom>,
    group: Vec<Atom>,
    query: Vec<Atom>,
    key: Vec<Atom>,
    head_dim: Vec<Atom>,
    value_dim: Vec<Atom>,
}

impl Roles {
    fn q_heads(&self) -> Vec<Atom> {
        [self.kv_heads.clone(), self.group.clone()].concat()
    }

    /// The atoms of each layout axis for the query, key or value tensor (or the output).
    fn of(&self, side: Side, role: Role) -> Vec<Atom> {
        match (role, side) {
            (Role::Batch, _) => self.batch.clone(),
            (Role::Sequence, Side::Query | Side::Output) => self.query.clone(),
            (Role::Sequence, Side::Key | Side::Value) => self.key.clone(),
            (Role::Heads, Side::Query | Side::Output) => self.q_heads(),
            (Role::Heads, Side::Key | Side::Value) => self.kv_heads.clone(),
            (Role::HeadDim, Side::Query | Side::Key) => self.head_dim.clone(),
            (Role::HeadDim, Side::Value | Side::Output) => self.value_dim.clone(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Query,
    Key,
    Value,
    Output,
}

struct Found<'c, 'a> {
    atoms: Atoms,
    roles: Roles,
    q: Operand<'c, 'a>,
    k: Operand<'c, 'a>,
    v: Operand<'c, 'a>,
    logits: Logits<'c, 'a>,
    causal: bool,
    window: Option<(i64, i64)>,
    layout: Layout,
    /// The value the new op's result replaces, its axes and element type.
    root: Value<'c, 'a>,
    root_axes: Vec<Axis>,
    output_element: String,
    /// Ops of the pattern in the rewritten function, erased if left unused.
    matched: Vec<OperationRef<'c, 'a>>,
    /// Q, K and V widened to f32: the source multiplies its f32 probabilities by a bf16 V
    /// and takes Q·Kᵀ of f32 operands, so the op computes all in f32 as it does.
    widen: bool,
}

impl Found<'_, '_> {
    /// What profitability decides on.
    fn shape(&self) -> AttentionShape {
        AttentionShape {
            query_tokens: self.atoms.axis_size(&self.roles.query),
            key_tokens: self.atoms.axis_size(&self.roles.key),
            head_dim: self.atoms.axis_size(&self.roles.head_dim),
            masked: !self.logits.masks.dynamic.is_empty() || self.logits.bias.is_some(),
            f32: self.widen || self.q.value.element_type().as_deref() == Some("f32"),
        }
    }

    fn summary(&self) -> String {
        let size = |atoms: &[Atom]| self.atoms.axis_size(atoms);
        let mut parts = vec![
            format!("layout {}", self.layout),
            format!("{} query / {} key-value heads", size(&self.roles.q_heads()), size(&self.roles.kv_heads)),
            format!("scale {}", self.logits.scale as f32),
        ];
        if self.causal {
            parts.push("causal".into());
        }
        if let Some((left, right)) = self.window {
            parts.push(format!("window [{left}, {right}]"));
        }
        if let Some(cap) = self.logits.soft_cap {
            parts.push(format!("soft-cap {cap}"));
        }
        if self.logits.bias.is_some() {
            parts.push("bias".into());
        }
        if !self.logits.masks.dynamic.is_empty() {
            parts.push("mask".into());
        }
        parts.join(", ")
    }
}

// ---- matching ------------------------------------------------------------------------

fn match_attention<'c, 'a>(tracer: &Tracer<'c, 'a>, dot: OperationRef<'c, 'a>) -> Result<Found<'c, 'a>, Miss> {
    let pv = Node { op: dot, calls: Vec::new() };
    let pv_numbers = dimension_numbers(dot)?;
    let mut matched = vec![dot];
    let mut atoms = Atoms::new();

    // P·V, with P a layout of divide(e, broadcast(sum(e))).
    let p_side = softmax_side(tracer, dot).expect("only softmax products are candidates");
    let (p_values, p_steps) = follow_layout(tracer, &pv.operand(p_side), Through { converts: true, broadcasts: false });
    note(&mut matched, &p_values[1..]);
    let first = tracer.producer(&p_values[0]).expect("a softmax or an op on one");
    // Normalized before P·V (divide(e, sum)), or after it (the divide of the product).
    let deferred = deferred_normalization(dot).filter(|_| first.is("stablehlo.exponential"));
    let divide = match deferred {
        Some(divide) => Node { op: divide, calls: Vec::new() },
        None => first,
    };
    let normalized_before =
        divide.is("stablehlo.divide") && tracer.producer_named(&divide.operand(0), "stablehlo.exponential").is_some();
    if deferred.is_none() && !normalized_before {
        return miss(format!("the probabilities pass through '{}' between the softmax and P·V", divide.name()));
    }
    // Probabilities wider than V (an f32 softmax against bf16 V) are multiplied exactly
    // where Q·Kᵀ is f32 too (V widened), else rounded to V's type, as a TPU's
    // default-precision product rounds them; narrower ones are not widened.
    let (p_element, v_element) = (pv.operand(p_side).element_type(), pv.operand(1 - p_side).element_type());
    if p_element != v_element
        && (p_element.as_deref() != Some("f32") || !matches!(v_element.as_deref(), Some("bf16" | "f16")))
    {
        return miss("the probabilities enter P·V narrower than V");
    }
    let exponential = match deferred {
        Some(_) => tracer.producer(&p_values[0]).expect("an exponential"),
        None => tracer.producer(&divide.operand(0)).expect("an exponential"),
    };
    let subtract = tracer
        .producer_named(&exponential.operand(0), "stablehlo.subtract")
        .ok_or(Miss("the exponential's argument is not the logits minus their maximum".into()))?;
    note_nodes(&mut matched, &[&divide, &exponential, &subtract]);
    // A softmax in bf16 or f16 is raised too: flywheel.attention computes it in f32, more
    // accurately than the source.
    for node in [&divide, &exponential, &subtract] {
        let element = node.result().element_type().unwrap_or_default();
        if !FLOATS.contains(&element.as_str()) {
            return miss(format!("the softmax is computed in {element}, not a float type"));
        }
    }

    // The softmax axis: the one the maximum and the sum reduce, broadcast back. The
    // logits may be rearranged between the maximum and the subtraction.
    let (z_values, z_steps) =
        follow_layout(tracer, &subtract.operand(0), Through { converts: false, broadcasts: false });
    note(&mut matched, &z_values[1..]);
    let logits = z_values[0].clone();
    let logits_axes = atoms.source(&logits.shape().ok_or(Miss("dynamic shapes".into()))?);
    let z_axes = apply_layout(&mut atoms, &logits_axes, &z_steps)?;
    let (max_axis, max_back) =
        reduction(tracer, &mut atoms, &subtract.operand(1), &logits, &logits_axes, Reducer::Maximum, &mut matched)?;
    let (sum_axis, sum_back) =
        reduction(tracer, &mut atoms, &divide.operand(1), &exponential.result(), &z_axes, Reducer::Add, &mut matched)?;
    if max_axis.is_empty() {
        return miss("the softmax axis has size 1");
    }
    if !atoms.same(&max_axis, &sum_axis) {
        return miss("the softmax sums over a different axis than it takes the maximum over");
    }
    broadcast_back(&atoms, &max_back, &z_axes, &max_axis, "maximum")?;
    if deferred.is_none() {
        broadcast_back(&atoms, &sum_back, &z_axes, &max_axis, "sum")?;
    }

    // The logits, back to Q·Kᵀ.
    let (qk, steps) = logits_chain(tracer, &logits, &mut matched)?;
    let qk_numbers = dimension_numbers(qk.op)?;
    if qk_numbers.lhs_contracting.len() != 1 {
        return miss("Q·Kᵀ must contract exactly one axis, the head dimension");
    }
    let lhs = operand_chain(tracer, &mut atoms, &qk.operand(0), Follow { converts: true, scales: true })?;
    let rhs = operand_chain(tracer, &mut atoms, &qk.operand(1), Follow { converts: true, scales: true })?;
    let scores = dot_axes(&mut atoms, lhs.at_product(), rhs.at_product(), &qk_numbers)?;
    let head_dim_axis = lhs.at_product()[qk_numbers.lhs_contracting[0] as usize].clone();
    let mut logits_info = apply_chain(tracer, &mut atoms, scores, &steps, &logits_axes)?;

    // K is the Q·Kᵀ operand the softmax axis belongs to.
    let key_atoms = atoms.leaves(&max_axis);
    let owns_keys = |atoms: &Atoms, chain: &Chain| {
        let leaves: Vec<Atom> = chain.at_product().iter().flat_map(|axis| atoms.leaves(axis)).collect();
        key_atoms.iter().all(|atom| leaves.contains(atom))
    };
    let (q_chain, k_chain) = match (owns_keys(&atoms, &lhs), owns_keys(&atoms, &rhs)) {
        (false, true) => (lhs, rhs),
        (true, false) => (rhs, lhs),
        _ => return miss("the softmax is not over the key axis of Q·Kᵀ"),
    };

    // P·V must contract the softmax axis with V's key axis.
    let p_axes = apply_layout(&mut atoms, &z_axes, &p_steps)?;
    // V is taken in the precision P·V uses: the probabilities are rounded to it.
    let v_chain =
        operand_chain(tracer, &mut atoms, &pv.operand(1 - p_side), Follow { converts: false, scales: false })?;
    let (p_contracted, sides) = if p_side == 0 {
        (&pv_numbers.lhs_contracting, (p_axes.as_slice(), v_chain.at_product()))
    } else {
        (&pv_numbers.rhs_contracting, (v_chain.at_product(), p_axes.as_slice()))
    };
    if p_contracted.len() != 1 || !atoms.same(&p_axes[p_contracted[0] as usize], &max_axis) {
        return miss("P·V does not contract the softmax axis");
    }
    let output_axes = dot_axes(&mut atoms, sides.0, sides.1, &pv_numbers)?;
    let (mut root, mut root_axes) = extend_root(
        &mut atoms,
        dot.result(0).expect("one result").into(),
        output_axes,
        &mut matched,
        deferred.is_some(),
    )?;
    if let Some(divide) = deferred {
        // The sum divides the product's rows: it lines up with the output's axes but the
        // value dimension, along which it is broadcast.
        if divide.operand(0).ok() != Some(root) {
            return miss("the normalizing divide does not divide the product's output");
        }
        let value_atoms: Vec<Atom> = v_chain.at_product().iter().flat_map(|axis| atoms.leaves(axis)).collect();
        let lines_up = sum_back.len() == root_axes.len()
            && sum_back.iter().zip(&root_axes).all(|(sum, output)| {
                atoms.same(sum, output)
                    || (sum.iter().all(|&atom| atoms.is_broadcast(atom))
                        && atoms
                            .leaves(output)
                            .iter()
                            .all(|atom| value_atoms.contains(atom) && !atoms.leaves(&max_axis).contains(atom)))
            });
        if !lines_up {
            return miss("the normalizing sum is not broadcast along the output's value dimension only");
        }
        (root, root_axes) =
            extend_root(&mut atoms, divide.result(0).expect("one result").into(), root_axes, &mut matched, false)?;
    }
    let output_element = Traced::outer(root).element_type().unwrap_or_default();

    let (head_dim, key_atoms) = (atoms.leaves(&head_dim_axis), atoms.leaves(&max_axis));
    let roles =
        assign_roles(&atoms, &q_chain, &k_chain, &v_chain, &head_dim, &key_atoms, &logits_info.masks, &root_axes)?;
    let groups = |side: Side| -> Vec<Vec<Atom>> { Role::ALL.iter().map(|&role| roles.of(side, role)).collect() };
    let q = choose_source(&atoms, &groups(Side::Query), &q_chain, "Q")?;
    let k = choose_source(&atoms, &groups(Side::Key), &k_chain, "K")?;
    let v = choose_source(&atoms, &groups(Side::Value), &v_chain, "V")?;
    for (chain, operand) in [(&q_chain, &q), (&k_chain, &k), (&v_chain, &v)] {
        let start = chain.values.iter().position(|value| same_value(value, &operand.value)).unwrap_or(0);
        note(&mut matched, &chain.values[start + 1..]);
    }
    logits_info.scale *= q.scale * k.scale;
    // The op holds f32 attributes: a scale or cap past f32's range (or infinite) is no
    // attention a kernel computes.
    let finite = |value: f64| value != 0.0 && (value as f32).is_finite();
    if !finite(logits_info.scale) || logits_info.soft_cap.is_some_and(|cap| !finite(cap)) {
        return miss("the scale or the logit soft cap is zero, infinite or past f32's range");
    }
    let mixed = p_element != v_element;
    let f32_scores = (0..2).all(|side| qk.operand(side).element_type().as_deref() == Some("f32"));
    let widen = mixed && f32_scores;
    let lengths = (atoms.axis_size(&roles.query), atoms.axis_size(&roles.key));
    let (causal, window) = window_attributes(&atoms, &roles, &logits_info.masks, lengths)?;
    if logits_info.masks.fill_is_infinite && !logits_info.masks.dynamic.is_empty() {
        return miss("masked with -inf: a fully masked row would be NaN, which flywheel.attention defines as uniform");
    }
    let dynamic = logits_info.masks.dynamic.iter().map(|mask| (&mask.value, &mask.axes));
    for (value, axes) in logits_info.bias.iter().map(|(value, axes)| (value, axes)).chain(dynamic) {
        if !value.is_outer() {
            return miss("a mask or bias is computed inside a called function");
        }
        let known: Vec<Atom> = [roles.batch.clone(), roles.q_heads(), roles.query.clone(), roles.key.clone()].concat();
        if !axes.iter().flat_map(|axis| atoms.leaves(axis)).all(|atom| known.contains(&atom)) {
            return miss("a mask or bias varies along an axis other than batch, heads, query or key");
        }
    }
    let q_roles: Vec<(Role, Vec<Atom>)> = Role::ALL.iter().map(|&role| (role, roles.of(Side::Query, role))).collect();
    let layout = role_order(&atoms, &q_roles, &q)
        .and_then(|order| Layout::from_order([order[0], order[1], order[2], order[3]]))
        .unwrap_or(Layout::BTNH);
    Ok(Found {
        atoms,
        roles,
        q,
        k,
        v,
        logits: logits_info,
        causal,
        window,
        layout,
        root,
        root_axes,
        output_element,
        matched,
        widen,
    })
}

fn dimension_numbers(op: OperationRef) -> Result<DotDimensionNumbers, Miss> {
    DotGeneral::from_operation(op).expect("a dot_general").dimension_numbers().map_err(|error| Miss(error.to_string()))
}

/// Reads `broadcast(guard(reduce(layout(base))))`: returns the reduced axis (as atoms of
/// `base_axes`) and the axes of the broadcast result.
fn reduction<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    atoms: &mut Atoms,
    broadcast: &Traced<'c, 'a>,
    base: &Traced<'c, 'a>,
    base_axes: &[Axis],
    reducer: Reducer,
    matched: &mut Vec<OperationRef<'c, 'a>>,
) -> Result<(Axis, Vec<Axis>), Miss> {
    let what = if reducer == Reducer::Maximum { "maximum" } else { "sum" };
    let (values, back_steps) = follow_layout(tracer, broadcast, Through { converts: true, broadcasts: true });
    note(matched, &values[1..]);
    let mut source = values[0].clone();
    if reducer == Reducer::Maximum {
        source = strip_max_guards(tracer, &source, matched);
    }
    let node =
        tracer.producer_named(&source, Reduce::NAME).ok_or(Miss(format!("the softmax {what} is not a reduce")))?;
    note_nodes(matched, &[&node]);
    let reduce = Reduce::from_operation(node.op).expect("a reduce");
    let dimensions = reduce.dimensions().map_err(|error| Miss(error.to_string()))?;
    let init = tracer.splat(&node.operand(1));
    let expected_init = if reducer == Reducer::Maximum { f64::NEG_INFINITY } else { 0.0 };
    if reduce.input_count() != 1
        || reduce.reducer() != Some(reducer)
        || dimensions.len() != 1
        || init != Some(expected_init)
    {
        return miss(format!("the softmax {what} is not a single-axis {what} reduction"));
    }
    let element = node.result().element_type().unwrap_or_default();
    if !FLOATS.contains(&element.as_str()) {
        return miss(format!("the softmax {what} is reduced in {element}, not a float type"));
    }
    // The reduced values and the logits may differ by precision changes (a bf16 softmax
    // summing in f32, or an f32 softmax of bf16 scores): both are followed to the value
    // the converts start from, which has the logits' axes.
    let converts = Through { converts: true, broadcasts: false };
    let (input_values, input_steps) = follow_layout(tracer, &node.operand(0), converts);
    let (base_values, base_steps) = follow_layout(tracer, base, converts);
    let base_is_converted = base_steps.iter().all(|step| *step == LayoutStep::Convert);
    let base_source = if base_is_converted { &base_values[0] } else { base };
    if !same_value(&input_values[0], base) && !same_value(&input_values[0], base_source) {
        return miss(format!("the softmax {what} is not taken over the same logits"));
    }
    note(matched, &input_values[1..]);
    let input_axes = apply_layout(atoms, base_axes, &input_steps)?;
    let dimension = dimensions[0] as usize;
    let reduced: Vec<Axis> =
        input_axes.iter().enumerate().filter(|(i, _)| *i != dimension).map(|(_, axis)| axis.clone()).collect();
    let back = apply_layout(atoms, &reduced, &back_steps)?;
    Ok((input_axes[dimension].clone(), back))
}

/// Strips `maximum(-inf, m)` (JAX's `initial=-inf`) and `select(is_finite(m), m, 0)`
/// (its guard against all -inf rows): for finite rows both give `m`, and an all -inf row
/// is NaN either way.
fn strip_max_guards<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    value: &Traced<'c, 'a>,
    matched: &mut Vec<OperationRef<'c, 'a>>,
) -> Traced<'c, 'a> {
    let mut value = value.clone();
    loop {
        let Some(node) = tracer.producer(&value) else { return value };
        let next = match node.name().as_str() {
            "stablehlo.maximum" => (0..2).find_map(|side| {
                (tracer.splat(&node.operand(side)) == Some(f64::NEG_INFINITY)).then(|| node.operand(1 - side))
            }),
            "stablehlo.select" => {
                let guard = tracer.producer_named(&node.operand(0), "stablehlo.is_finite");
                let guarded = guard.is_some_and(|guard| same_value(&guard.operand(0), &node.operand(1)));
                (guarded && tracer.splat(&node.operand(2)) == Some(0.0)).then(|| node.operand(1))
            }
            _ => None,
        };
        match next {
            Some(next) => {
                note_nodes(matched, &[&node]);
                value = next;
            }
            None => return value,
        }
    }
}

/// Checks a reduction broadcast back onto the logits: the softmax axis is broadcast, the
/// others line up with the logits' axes.
fn broadcast_back(
    atoms: &Atoms,
    back: &[Axis],
    logits: &[Axis],
    softmax_axis: &[Atom],
    what: &str,
) -> Result<(), Miss> {
    let fits = back.len() == logits.len()
        && back.iter().zip(logits).all(|(b, z)| {
            if atoms.same(z, softmax_axis) {
                b.iter().all(|&atom| atoms.is_broadcast(atom))
            } else {
                atoms.same(b, z)
            }
        });
    if fits {
        Ok(())
    } else {
        miss(format!("the softmax {what} is not broadcast back along the axis it reduced"))
    }
}

/// One op on the logits between Q·Kᵀ and the softmax.
enum LogitsStep<'c, 'a> {
    Layout(LayoutStep),
    Convert,
    Scale(f64),
    SoftCap(f64),
    Bias(Traced<'c, 'a>),
    /// `logits + where(keep, 0, fill)` (layouts of it): a mask, as HF and Llama write one.
    AdditiveMask(Traced<'c, 'a>),
    /// `select(predicate, logits, fill)`, or with `negated` `select(predicate, fill, logits)`.
    Mask {
        predicate: Traced<'c, 'a>,
        negated: bool,
        fill_is_infinite: bool,
    },
}

/// The ops from the Q·Kᵀ product to the logits, in program order.
fn logits_chain<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    logits: &Traced<'c, 'a>,
    matched: &mut Vec<OperationRef<'c, 'a>>,
) -> Result<(Node<'c, 'a>, Vec<LogitsStep<'c, 'a>>), Miss> {
    let mut steps = Vec::new();
    let mut current = logits.clone();
    loop {
        let node = tracer.producer(&current).ok_or(Miss("the logits are a function argument, not Q·Kᵀ".into()))?;
        note_nodes(matched, &[&node]);
        let splat = |side: usize| tracer.splat(&node.operand(side));
        let (step, next) = match node.name().as_str() {
            DotGeneral::NAME => {
                steps.reverse();
                return Ok((node, steps));
            }
            "stablehlo.transpose" | "stablehlo.reshape" => {
                let step = layout_step(&node, ANY_LAYOUT).ok_or(Miss("a transpose's permutation is invalid".into()))?;
                (LogitsStep::Layout(step), node.operand(0))
            }
            "stablehlo.convert" => (LogitsStep::Convert, node.operand(0)),
            "stablehlo.divide" => match splat(1) {
                Some(divisor) => (LogitsStep::Scale(1.0 / divisor), node.operand(0)),
                None => return miss("the logits are divided by a non-constant"),
            },
            "stablehlo.multiply" => {
                if let Some((cap, capped)) = soft_cap(tracer, &node) {
                    (LogitsStep::SoftCap(cap), capped)
                } else if let Some(factor) = splat(1) {
                    (LogitsStep::Scale(factor), node.operand(0))
                } else if let Some(factor) = splat(0) {
                    (LogitsStep::Scale(factor), node.operand(1))
                } else {
                    return miss("the logits are multiplied by a non-constant");
                }
            }
            "stablehlo.add" => {
                let (scores, bias) = match (
                    reaches_product(tracer, &node.operand(0), 16),
                    reaches_product(tracer, &node.operand(1), 16),
                ) {
                    (true, false) => (0, 1),
                    (false, true) => (1, 0),
                    _ => return miss("an add on the logits is not a bias"),
                };
                let step = if is_additive_mask(tracer, &node.operand(bias)) {
                    LogitsStep::AdditiveMask(node.operand(bias))
                } else {
                    LogitsStep::Bias(node.operand(bias))
                };
                (step, node.operand(scores))
            }
            "stablehlo.select" => {
                // `where(keep, s, fill)`, or `where(masked, fill, s)`.
                let (fill, negated) = match (splat(2), splat(1)) {
                    (Some(fill), _) => (fill, false),
                    (None, Some(fill)) => (fill, true),
                    (None, None) => return miss("a select on the logits does not fill with a constant"),
                };
                if fill > MASK_FILL_LIMIT {
                    return miss(format!("a mask fills with {fill}, which still gets attention weight"));
                }
                let fill_is_infinite = fill == f64::NEG_INFINITY;
                let logits = node.operand(if negated { 2 } else { 1 });
                (LogitsStep::Mask { predicate: node.operand(0), negated, fill_is_infinite }, logits)
            }
            other => return miss(format!("the logits come from '{other}', which attention does not apply")),
        };
        steps.push(step);
        current = next;
    }
}

/// Whether a bias is an additive mask: `where(keep, 0, fill)` or `where(masked, fill, 0)`
/// with a fill at most MASK_FILL_LIMIT, through layout ops and converts. Adding it leaves
/// the allowed logits exact and pushes the others below the limit, as masking does.
fn is_additive_mask(tracer: &Tracer, value: &Traced) -> bool {
    let Some(node) = tracer.producer(value) else { return false };
    match node.name().as_str() {
        "stablehlo.broadcast_in_dim" | "stablehlo.transpose" | "stablehlo.reshape" | "stablehlo.convert" => {
            is_additive_mask(tracer, &node.operand(0))
        }
        "stablehlo.select" => {
            let masks = |fill: Option<f64>| fill.is_some_and(|fill| fill <= MASK_FILL_LIMIT);
            let (then, otherwise) = (tracer.splat(&node.operand(1)), tracer.splat(&node.operand(2)));
            (then == Some(0.0) && masks(otherwise)) || (otherwise == Some(0.0) && masks(then))
        }
        _ => false,
    }
}

/// Reads an additive mask `is_additive_mask` accepts, with `axes`, into `masks`.
fn read_additive_mask<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    atoms: &mut Atoms,
    value: &Traced<'c, 'a>,
    axes: &[Axis],
    masks: &mut Masks<'c, 'a>,
) -> Result<(), Miss> {
    let node = tracer.producer(value).ok_or(Miss("an additive mask is an argument".into()))?;
    if !node.is("stablehlo.select") {
        let input_axes = layout_input_axes(atoms, &node, axes)?;
        return read_additive_mask(tracer, atoms, &node.operand(0), &input_axes, masks);
    }
    // Zero where the predicate holds: it says which keys are allowed.
    let allowed_where_true = tracer.splat(&node.operand(1)) == Some(0.0);
    let fill = tracer.splat(&node.operand(if allowed_where_true { 2 } else { 1 }));
    masks.fill_is_infinite |= fill == Some(f64::NEG_INFINITY);
    read_predicate(tracer, atoms, &node.operand(0), axes, !allowed_where_true, masks)
}

/// `c * tanh(x / c)` (or `tanh(x * (1/c))`): the cap and `x`.
fn soft_cap<'c, 'a>(tracer: &Tracer<'c, 'a>, multiply: &Node<'c, 'a>) -> Option<(f64, Traced<'c, 'a>)> {
    let (cap, tanh) = (0..2).find_map(|side| {
        let tanh = tracer.producer_named(&multiply.operand(1 - side), "stablehlo.tanh")?;
        Some((tracer.splat(&multiply.operand(side))?, tanh))
    })?;
    let inner = tracer.producer(&tanh.operand(0))?;
    let divisor = match inner.name().as_str() {
        "stablehlo.divide" => tracer.splat(&inner.operand(1))?,
        "stablehlo.multiply" => 1.0 / tracer.splat(&inner.operand(1))?,
        _ => return None,
    };
    ((divisor - cap).abs() <= 1e-6 * cap.abs() && cap > 0.0).then(|| (cap, inner.operand(0)))
}

/// Whether a `dot_general` feeds `value` within `depth` ops.
fn reaches_product(tracer: &Tracer, value: &Traced, depth: usize) -> bool {
    let Some(node) = tracer.producer(value) else { return false };
    node.is(DotGeneral::NAME)
        || (depth > 0 && (0..node.operand_count()).any(|i| reaches_product(tracer, &node.operand(i), depth - 1)))
}

/// Follows the logits steps forward from the scores' axes, reading the scale, soft-cap,
/// bias and masks, and ties the result to the softmax's logits.
fn apply_chain<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    atoms: &mut Atoms,
    scores: Vec<Axis>,
    steps: &[LogitsStep<'c, 'a>],
    logits_axes: &[Axis],
) -> Result<Logits<'c, 'a>, Miss> {
    // Stages flywheel.attention applies in order: scale, soft-cap, bias, masks.
    let mut stage = 0;
    let advance = |stage: &mut usize, to: usize, what: &str| {
        if to < *stage || (to == *stage && to != 3) {
            return miss(format!("the {what} comes in an order flywheel.attention cannot express"));
        }
        *stage = to;
        Ok(())
    };
    let mut axes = scores;
    let mut logits = Logits { scale: 1.0, soft_cap: None, bias: None, masks: Masks::default() };
    for step in steps {
        match step {
            LogitsStep::Layout(layout) => axes = apply_layout(atoms, &axes, std::slice::from_ref(layout))?,
            // flywheel.attention computes the logits in f32: a source that rounds them
            // along the way (bf16 scores, a bf16 bias add) is less accurate.
            LogitsStep::Convert => {}
            LogitsStep::Scale(factor) => {
                if stage > 0 {
                    return miss("the logits are scaled after a soft-cap, bias or mask");
                }
                logits.scale *= factor;
            }
            LogitsStep::SoftCap(cap) => {
                advance(&mut stage, 1, "soft-cap")?;
                logits.soft_cap = Some(*cap);
            }
            LogitsStep::Bias(bias) => {
                advance(&mut stage, 2, "bias")?;
                let (values, layout) = follow_layout(tracer, bias, Through { converts: true, broadcasts: true });
                let source = values[0].clone();
                let source_axes = atoms.source(&source.shape().ok_or(Miss("dynamic shapes".into()))?);
                let bias_axes = apply_layout(atoms, &source_axes, &layout)?;
                for (b, z) in bias_axes.iter().zip(&axes) {
                    atoms.pair(b, z)?;
                }
                logits.bias = Some((source, source_axes));
            }
            LogitsStep::Mask { predicate, negated, fill_is_infinite } => {
                advance(&mut stage, 3, "mask")?;
                logits.masks.fill_is_infinite |= fill_is_infinite;
                read_predicate(tracer, atoms, predicate, &axes, *negated, &mut logits.masks)?;
            }
            LogitsStep::AdditiveMask(bias) => {
                advance(&mut stage, 3, "mask")?;
                read_additive_mask(tracer, atoms, bias, &axes, &mut logits.masks)?;
            }
        }
    }
    if axes.len() != logits_axes.len() {
        return miss("the logits' rank changed between Q·Kᵀ and the softmax");
    }
    for (a, z) in axes.iter().zip(logits_axes) {
        atoms.unify(a, z)?;
    }
    if logits.scale.is_nan() || logits.scale == 0.0 {
        return miss("the scale is zero or NaN");
    }
    Ok(logits)
}

/// Reads a mask predicate with `axes` (negated when `negated`): conjunctions of position
/// comparisons built from `iota` become linear constraints; any other boolean tensor is a
/// dynamic mask. Boolean algebra is followed as JAX spells it: `not`, `and` (`or` under a
/// negation), selects of constant booleans, and 0/1 float masks compared with a constant
/// (`mask == 0`, `mask > 0`, a `convert` of a boolean or `where(c, 1.0, 0.0)` on the other
/// side).
fn read_predicate<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    atoms: &mut Atoms,
    predicate: &Traced<'c, 'a>,
    axes: &[Axis],
    negated: bool,
    masks: &mut Masks<'c, 'a>,
) -> Result<(), Miss> {
    let Some(node) = tracer.producer(predicate) else {
        masks.dynamic.push(Dynamic { value: predicate.clone(), axes: axes.to_vec(), negated });
        return Ok(());
    };
    let constant = |value: &Traced<'c, 'a>| tracer.splat(value).map(|x| x != 0.0);
    let read = |atoms: &mut Atoms, value: &Traced<'c, 'a>, negated: bool, masks: &mut Masks<'c, 'a>| {
        read_predicate(tracer, atoms, value, axes, negated, masks)
    };
    match node.name().as_str() {
        // A conjunction, or under a negation a disjunction of negations.
        "stablehlo.and" if !negated => {
            read(atoms, &node.operand(0), false, masks)?;
            read(atoms, &node.operand(1), false, masks)
        }
        "stablehlo.or" if negated => {
            read(atoms, &node.operand(0), true, masks)?;
            read(atoms, &node.operand(1), true, masks)
        }
        "stablehlo.not" => read(atoms, &node.operand(0), !negated, masks),
        "stablehlo.constant" => match constant(predicate) {
            Some(value) if value != negated => Ok(()),
            _ => miss("a mask constant is not all true"),
        },
        "stablehlo.broadcast_in_dim" | "stablehlo.transpose" | "stablehlo.reshape" | "stablehlo.convert" => {
            let input_axes = layout_input_axes(atoms, &node, axes)?;
            read_predicate(tracer, atoms, &node.operand(0), &input_axes, negated, masks)
        }
        "stablehlo.select" => {
            let (then, otherwise) = (constant(&node.operand(1)), constant(&node.operand(2)));
            match (then, otherwise) {
                // `where(c, true, false)` is `c`, `where(c, false, true)` is `not c`.
                (Some(true), Some(false)) => read(atoms, &node.operand(0), negated, masks),
                (Some(false), Some(true)) => read(atoms, &node.operand(0), !negated, masks),
                // `where(c, m, false)` (jnp.tril of a mask) is `c and m`.
                (_, Some(false)) if !negated => {
                    read(atoms, &node.operand(0), false, masks)?;
                    read(atoms, &node.operand(1), false, masks)
                }
                // `where(c, true, m)` is `c or m`: negated, `not c and not m`.
                (Some(true), _) if negated => {
                    read(atoms, &node.operand(0), true, masks)?;
                    read(atoms, &node.operand(2), true, masks)
                }
                _ => {
                    masks.dynamic.push(Dynamic { value: predicate.clone(), axes: axes.to_vec(), negated });
                    Ok(())
                }
            }
        }
        Compare::NAME => read_comparison(tracer, atoms, &node, predicate, axes, negated, masks),
        _ => {
            masks.dynamic.push(Dynamic { value: predicate.clone(), axes: axes.to_vec(), negated });
            Ok(())
        }
    }
}

/// A comparison in a mask predicate: of positions (a linear constraint), of a 0/1 mask
/// with a constant (the mask's own predicate), or anything else (a dynamic mask).
#[allow(clippy::too_many_arguments)]
fn read_comparison<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    atoms: &mut Atoms,
    node: &Node<'c, 'a>,
    predicate: &Traced<'c, 'a>,
    axes: &[Axis],
    negated: bool,
    masks: &mut Masks<'c, 'a>,
) -> Result<(), Miss> {
    let compare = Compare::from_operation(node.op).expect("a compare");
    let direction = compare.direction().map_err(|error| Miss(error.to_string()))?;
    let integer = matches!(compare.compare_type(), Ok(Some(ComparisonType::Signed | ComparisonType::Unsigned)));
    let sides = (affine(tracer, atoms, &node.operand(0), axes), affine(tracer, atoms, &node.operand(1), axes));
    if let (Some(a), Some(b), true) = (sides.0, sides.1, integer) {
        // Every form becomes `expression <= 0` (integers, so `< 0` is `+ 1 <= 0`); a
        // negation flips the direction.
        let one = || Affine { constant: 1, terms: Vec::new() };
        let direction = if negated { direction.negated() } else { direction };
        masks.constraints.push(match direction {
            ComparisonDirection::Le => a.plus(b.scaled(-1)),
            ComparisonDirection::Lt => a.plus(b.scaled(-1)).plus(one()),
            ComparisonDirection::Ge => b.plus(a.scaled(-1)),
            ComparisonDirection::Gt => b.plus(a.scaled(-1)).plus(one()),
            _ => return miss("a mask compares positions for (in)equality"),
        });
        return Ok(());
    }
    // A two-valued mask (a 0/1 mask, or an additive mask where(c, 0, fill)) compared with
    // a constant: true where the mask holds one of its values.
    for side in 0..2 {
        let (Some(k), Some((when_true, when_false))) =
            (tracer.splat(&node.operand(1 - side)), two_valued(tracer, &node.operand(side)))
        else {
            continue;
        };
        let direction = if side == 0 { direction } else { direction.swapped() };
        let holds = |x: f64| direction.holds(x, k);
        return match (holds(when_true), holds(when_false)) {
            (true, false) => read_two_valued(tracer, atoms, &node.operand(side), axes, negated, masks),
            (false, true) => read_two_valued(tracer, atoms, &node.operand(side), axes, !negated, masks),
            (all, _) if all != negated => Ok(()),
            _ => miss("a mask compares a two-valued mask so that nothing is allowed"),
        };
    }
    masks.dynamic.push(Dynamic { value: predicate.clone(), axes: axes.to_vec(), negated });
    Ok(())
}

/// The two values a mask made from booleans takes, where its predicate holds and where it
/// does not: `convert(b)` (1, 0), `where(b, x, y)` of constants (x, y), products of 0/1
/// masks (1, 0), and layout ops of them.
fn two_valued(tracer: &Tracer, value: &Traced) -> Option<(f64, f64)> {
    let node = tracer.producer(value)?;
    match node.name().as_str() {
        "stablehlo.convert" if node.operand(0).element_type().as_deref() == Some("i1") => Some((1.0, 0.0)),
        "stablehlo.select" => Some((tracer.splat(&node.operand(1))?, tracer.splat(&node.operand(2))?))
            .filter(|(when_true, when_false)| when_true != when_false),
        "stablehlo.multiply" => {
            [0, 1].iter().all(|&i| two_valued(tracer, &node.operand(i)) == Some((1.0, 0.0))).then_some((1.0, 0.0))
        }
        "stablehlo.broadcast_in_dim" | "stablehlo.transpose" | "stablehlo.reshape" | "stablehlo.convert" => {
            two_valued(tracer, &node.operand(0))
        }
        _ => None,
    }
}

/// Reads "the two-valued mask `value` holds its first value" (negated: its second) with
/// `axes`, `value` being one `two_valued` accepts.
fn read_two_valued<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    atoms: &mut Atoms,
    value: &Traced<'c, 'a>,
    axes: &[Axis],
    negated: bool,
    masks: &mut Masks<'c, 'a>,
) -> Result<(), Miss> {
    let node = tracer.producer(value).ok_or(Miss("a two-valued mask is an argument".into()))?;
    match node.name().as_str() {
        "stablehlo.convert" if node.operand(0).element_type().as_deref() == Some("i1") => {
            read_predicate(tracer, atoms, &node.operand(0), axes, negated, masks)
        }
        "stablehlo.select" => read_predicate(tracer, atoms, &node.operand(0), axes, negated, masks),
        "stablehlo.multiply" if !negated => {
            read_two_valued(tracer, atoms, &node.operand(0), axes, false, masks)?;
            read_two_valued(tracer, atoms, &node.operand(1), axes, false, masks)
        }
        "stablehlo.multiply" => miss("a product of 0/1 masks is compared so that it means a disjunction"),
        _ => {
            let input_axes = layout_input_axes(atoms, &node, axes)?;
            read_two_valued(tracer, atoms, &node.operand(0), &input_axes, negated, masks)
        }
    }
}

/// The axes of a layout op's input, given its output's.
fn layout_input_axes(atoms: &mut Atoms, node: &Node, output_axes: &[Axis]) -> Result<Vec<Axis>, Miss> {
    let input_shape = node.operand(0).shape().ok_or(Miss("dynamic shapes".into()))?;
    Ok(match layout_step(node, ANY_LAYOUT).ok_or(Miss("not a layout op".into()))? {
        LayoutStep::Transpose(permutation) => {
            let mut input = vec![Vec::new(); permutation.len()];
            for (i, &p) in permutation.iter().enumerate() {
                input[p as usize] = output_axes[i].clone();
            }
            input
        }
        LayoutStep::Reshape(_) => atoms.reshape(output_axes, &input_shape)?,
        LayoutStep::BroadcastInDim { dimensions, .. } => dimensions
            .iter()
            .zip(&input_shape)
            .map(|(&d, &size)| {
                if atoms.axis_size(&output_axes[d as usize]) == size {
                    output_axes[d as usize].clone()
                } else {
                    Vec::new()
                }
            })
            .collect(),
        LayoutStep::Convert => output_axes.to_vec(),
    })
}

/// An integer tensor as a linear expression in its axes' coordinates, if it is one.
fn affine(tracer: &Tracer, atoms: &mut Atoms, value: &Traced, axes: &[Axis]) -> Option<Affine> {
    let node = tracer.producer(value)?;
    match node.name().as_str() {
        Iota::NAME => {
            let dimension = Iota::from_operation(node.op)?.iota_dimension().ok()? as usize;
            Some(Affine { constant: 0, terms: vec![(atoms.leaves(&axes[dimension]), 1)] })
        }
        "stablehlo.constant" => Some(Affine { constant: tracer.splat(value)? as i64, terms: Vec::new() }),
        "stablehlo.broadcast_in_dim" | "stablehlo.reshape" | "stablehlo.transpose" | "stablehlo.convert" => {
            let input_axes = layout_input_axes(atoms, &node, axes).ok()?;
            affine(tracer, atoms, &node.operand(0), &input_axes)
        }
        "stablehlo.add" => {
            Some(affine(tracer, atoms, &node.operand(0), axes)?.plus(affine(tracer, atoms, &node.operand(1), axes)?))
        }
        "stablehlo.subtract" => Some(
            affine(tracer, atoms, &node.operand(0), axes)?
                .plus(affine(tracer, atoms, &node.operand(1), axes)?.scaled(-1)),
        ),
        _ => None,
    }
}

/// Names the atoms: head dimension (contracted by Q·Kᵀ), key positions (the softmax
/// axis), value dimension (V's own), batch and key-value heads (shared by Q, K and V),
/// query positions and head groups (Q's own).
#[allow(clippy::too_many_arguments)]
fn assign_roles(
    atoms: &Atoms,
    q: &Chain,
    k: &Chain,
    v: &Chain,
    head_dim: &[Atom],
    key: &[Atom],
    masks: &Masks,
    output: &[Axis],
) -> Result<Roles, Miss> {
    let data = |axes: &[Axis]| -> Vec<Atom> {
        axes.iter().flat_map(|axis| atoms.leaves(axis)).filter(|&atom| !atoms.is_broadcast(atom)).collect()
    };
    let (q_atoms, k_atoms, v_atoms) = (data(q.at_product()), data(k.at_product()), data(v.at_product()));
    let shared: Vec<Atom> = k_atoms.iter().copied().filter(|a| !head_dim.contains(a) && !key.contains(a)).collect();
    if !shared.iter().all(|a| q_atoms.contains(a) && v_atoms.contains(a)) {
        return miss("K has an axis that Q or V lacks");
    }
    let value_dim: Vec<Atom> = v_atoms.iter().copied().filter(|a| !key.contains(a) && !shared.contains(a)).collect();

    // Classify Q's source axes: shared atoms (batch, kv heads) first, then Q's own. The
    // source is the furthest-back value of Q's chain whose head dimension is an axis of its
    // own: a projection `(x @ W).reshape(b, t, h, d)` splits it from the heads only at the
    // reshape.
    let separate = |axes: &Vec<Axis>| {
        axes.iter().all(|axis| {
            let leaves = atoms.leaves(axis);
            !leaves.iter().any(|a| head_dim.contains(a)) || leaves.iter().all(|a| head_dim.contains(a))
        })
    };
    let q_axes = q.axes.iter().find(|axes| separate(axes)).unwrap_or(&q.axes[0]);
    let q_source: Vec<(usize, Vec<Atom>)> =
        q_axes.iter().map(|axis| atoms.leaves(axis)).enumerate().filter(|(_, l)| !l.is_empty()).collect();
    let (mut batch_like, mut rows, mut heads) = (Vec::new(), Vec::new(), None);
    let mut lone_batch_like_is_outermost = false;
    for (position, leaves) in &q_source {
        if leaves.as_slice() == head_dim {
            continue;
        }
        if leaves.iter().any(|a| head_dim.contains(a)) {
            return miss("Q's head dimension shares an axis with another");
        }
        let split = leaves.iter().position(|a| !shared.contains(a)).unwrap_or(leaves.len());
        if leaves[split..].iter().any(|a| shared.contains(a)) {
            return miss("Q's heads are not grouped key-value head major (as GQA requires)");
        }
        match (split, leaves.len()) {
            (0, _) => rows.push(leaves.clone()),
            (s, n) if s == n => {
                lone_batch_like_is_outermost = *position == 0;
                batch_like.push(leaves.clone());
            }
            (s, _) => {
                if heads.is_some() {
                    return miss("Q has two grouped head axes");
                }
                heads = Some((leaves[..s].to_vec(), leaves[s..].to_vec()));
            }
        }
    }
    // The query positions: Q's own axis that the masks compare with key positions, else
    // the one in K's key-axis position, else the first.
    let mask_rows: Vec<Vec<Atom>> = masks
        .constraints
        .iter()
        .flat_map(|c| c.terms.iter().map(|(term, _)| atoms.leaves(term)))
        .filter(|t| t != key)
        .collect();
    let key_position = k.axes[0].iter().position(|axis| atoms.leaves(axis) == key);
    let query_index = rows
        .iter()
        .position(|row| mask_rows.contains(row))
        .or_else(|| {
            key_position.and_then(|p| {
                rows.iter().position(|row| q.axes[0].get(p).is_some_and(|axis| &atoms.leaves(axis) == row))
            })
        })
        .unwrap_or(0);
    if rows.is_empty() || rows.len() > 2 || (rows.len() == 2 && heads.is_some()) {
        return miss("Q's query positions cannot be told from its head groups");
    }
    let query = rows.remove(query_index);
    let (kv_heads, group, batch) = match (heads, rows.pop(), batch_like.len()) {
        (Some((kv, group)), None, n) if n <= 1 => (kv, group, batch_like.concat()),
        (None, Some(group), n) if n <= 1 => (Vec::new(), group, batch_like.concat()),
        // One axis shared with K: batch if outermost (as in BTNH and BNTH), else heads.
        (None, None, 1) if !lone_batch_like_is_outermost => (batch_like[0].clone(), Vec::new(), Vec::new()),
        (None, None, 0 | 1) => (Vec::new(), Vec::new(), batch_like.concat()),
        (None, None, 2) => (batch_like[1].clone(), Vec::new(), batch_like[0].clone()),
        _ => return miss("Q has more batch-like axes than batch and heads"),
    };
    let roles = Roles { batch, kv_heads, group, query, key: key.to_vec(), head_dim: head_dim.to_vec(), value_dim };
    let known: Vec<Atom> =
        [roles.batch.clone(), roles.q_heads(), roles.query.clone(), roles.value_dim.clone()].concat();
    if !data(output).iter().all(|a| known.contains(a)) || data(output).len() != known.len() {
        return miss("the output's axes are not batch, query, heads and value dimension");
    }
    let kv_known: Vec<Atom> = [roles.batch.clone(), roles.kv_heads.clone()].concat();
    if !shared.iter().all(|a| kv_known.contains(a)) {
        return miss("K and V share an axis with Q that is neither batch nor heads");
    }
    Ok(roles)
}

/// The `causal` and `window` attributes the position constraints amount to.
fn window_attributes(
    atoms: &Atoms,
    roles: &Roles,
    masks: &Masks,
    (queries, keys): (i64, i64),
) -> Result<(bool, Option<(i64, i64)>), Miss> {
    let (mut left, mut right): (Option<i64>, Option<i64>) = (None, None);
    for constraint in &masks.constraints {
        let (mut i, mut j) = (0, 0);
        for (term, coefficient) in &constraint.terms {
            let term = atoms.leaves(term);
            if term == roles.query {
                i += coefficient;
            } else if term == roles.key {
                j += coefficient;
            } else {
                return miss("a mask depends on positions other than query and key");
            }
        }
        // i * ci + j * cj + constant <= 0.
        match (i, j) {
            (0, 0) if constraint.constant <= 0 => {}
            (-1, 1) => right = Some(right.map_or(-constraint.constant, |r| r.min(-constraint.constant))),
            (1, -1) => left = Some(left.map_or(-constraint.constant, |l| l.min(-constraint.constant))),
            _ => return miss("a mask is not a causal or sliding-window band"),
        }
    }
    if masks.fill_is_infinite {
        let (l, r) = (left.unwrap_or(queries), right.unwrap_or(keys));
        if (0..queries).any(|row| (row - l).max(0) > (row + r).min(keys - 1)) {
            return miss("masked with -inf and some query has no key: its row would be NaN");
        }
    }
    if left.is_some_and(|l| l < 0) || right.is_some_and(|r| r < 0) {
        return miss("a mask band excludes the diagonal, which causal and window cannot express");
    }
    Ok(match (left, right) {
        (None, None) => (false, None),
        (None, Some(0)) => (true, None),
        (Some(l), Some(0)) => (true, Some((l, 0))),
        (l, r) => (false, Some((l.unwrap_or(queries - 1), r.unwrap_or(keys - 1)))),
    })
}

// ---- rewriting -----------------------------------------------------------------------

/// Replaces the attention `found` describes; returns the ops destroyed.
fn rewrite<'c, 'a>(tracer: &Tracer<'c, 'a>, found: Found<'c, 'a>) -> HashSet<usize> {
    let anchor = flywheel_dialect::ir::defining_op(found.root).expect("the root is an op result");
    let builder = HloBuilder::before(anchor);
    let Found {
        atoms,
        roles,
        q,
        k,
        v,
        logits,
        causal,
        window,
        layout,
        root,
        root_axes,
        output_element,
        matched,
        widen,
    } = found;
    let order = layout.order();
    let target = |side: Side| -> Vec<Axis> { order.iter().map(|&role| roles.of(side, role)).collect() };
    let operand = |operand: &Operand<'c, 'a>, side: Side| -> Value<'c, 'a> {
        let element = operand.value.element_type().expect("a tensor");
        materialize(&builder, &atoms, operand.value.value, &operand.axes, &element, &target(side))
    };
    let widened = |value: Value<'c, 'a>, operand: &Operand<'c, 'a>, side: Side| {
        let element = operand.value.element_type().expect("a tensor");
        if !widen || element == "f32" {
            return value;
        }
        let shape: Vec<i64> = target(side).iter().map(|axis| atoms.axis_size(axis)).collect();
        builder.convert(value, &shape, &element, "f32")
    };
    let q_value = widened(operand(&q, Side::Query), &q, Side::Query);
    let k_value = widened(operand(&k, Side::Key), &k, Side::Key);
    let v_value = widened(operand(&v, Side::Value), &v, Side::Value);

    // Masks and bias as [B|1, Nq|1, Tq, Tk].
    let side_tensor_axes = |axes: &[Axis]| -> Vec<Axis> {
        let leaves: Vec<Atom> = axes.iter().flat_map(|axis| atoms.leaves(axis)).collect();
        let uses = |group: &[Atom]| group.iter().any(|a| leaves.contains(a));
        let batch = if uses(&roles.batch) { roles.batch.clone() } else { Vec::new() };
        let heads = if uses(&roles.q_heads()) { roles.q_heads() } else { Vec::new() };
        vec![batch, heads, roles.query.clone(), roles.key.clone()]
    };
    let dynamic_axes: Vec<Axis> = logits.masks.dynamic.iter().flat_map(|mask| mask.axes.clone()).collect();
    let mask_axes = side_tensor_axes(&dynamic_axes);
    let mask = logits.masks.dynamic.iter().fold(None, |combined: Option<Value>, mask| {
        let full = materialize(&builder, &atoms, mask.value.value, &mask.axes, "i1", &mask_axes);
        let full = if mask.negated { builder.elementwise("stablehlo.not", &[full]) } else { full };
        Some(combined.map_or(full, |previous| builder.elementwise("stablehlo.and", &[previous, full])))
    });
    let bias = logits.bias.as_ref().map(|(value, axes)| {
        let element = value.element_type().expect("a tensor");
        materialize(&builder, &atoms, value.value, axes, &element, &side_tensor_axes(axes))
    });

    let output_axes = target(Side::Output);
    let output_shape: Vec<i64> = output_axes.iter().map(|axis| atoms.axis_size(axis)).collect();
    let mut attributes = vec![
        ("scale", format!("{} : f32", float_literal(f64::from(logits.scale as f32)))),
        ("causal", causal.to_string()),
        ("layout", format!("\"{layout}\"")),
        ("q_heads", format!("{} : i64", atoms.axis_size(&roles.q_heads()))),
        ("kv_heads", format!("{} : i64", atoms.axis_size(&roles.kv_heads))),
    ];
    if let Some((left, right)) = window {
        attributes.push(("window", format!("array<i64: {left}, {right}>")));
    }
    if let Some(cap) = logits.soft_cap {
        attributes.push(("logit_soft_cap", format!("{} : f32", float_literal(f64::from(cap as f32)))));
    }
    let operands: Vec<Value> =
        [Some(q_value), Some(k_value), Some(v_value), mask, bias].into_iter().flatten().collect();
    let segments = format!("array<i32: 1, 1, 1, {}, {}, 0, 0>", u8::from(mask.is_some()), u8::from(bias.is_some()));
    attributes.push(("operandSegmentSizes", segments));
    let output = builder.op("flywheel.attention", &operands, &[(&output_shape, &output_element)], &attributes)[0];
    let replacement = materialize(&builder, &atoms, output, &output_axes, &output_element, &root_axes);
    unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(root.to_raw(), replacement.to_raw()) };
    erase_dead(tracer, &matched)
}
