//! `flywheel-shard` (see [`PASS`]).
//!
//! Every mesh axis not already manual at the op becomes manual. Each axis, in mesh
//! order, splits the heads while their count stays whole (key/value heads for
//! attention, key heads for Gated DeltaNet, so each chip keeps whole query/value-head
//! groups and the head mapping h / group holds per chip), else the batch, else no
//! dimension (those chips repeat the same work). Heads and batches are independent in
//! both ops, so the region computes exactly the op; Shardy reshards the operands at its
//! boundary as needed. In a partitioned program without Shardy (GSPMD `mhlo.sharding`)
//! no region is made, and `flywheel-tile` keeps such ops for the reference lowering
//! (see `kernel_placement`).

use crate::{
    options::Options,
    pass::{external_pass, Anchor, PassId, PassInfo},
};
use flywheel_dialect::{
    diagnostics::{emit_error, emit_remark},
    layout::{Axis as Role, Layout},
    ops::{AttentionOp, GatedDeltaOp},
    tensor::TensorInfo,
};
use flywheel_kernels::tile_ir::{attention_ops, block_ops, gated_delta_ops, top_module};
use melior::{
    ir::{
        attribute::{ArrayAttribute, DictionaryAttribute, IntegerAttribute},
        operation::{OperationBuilder, OperationLike, OperationMutLike, OperationRef},
        r#type::RankedTensorType,
        Attribute, Block, BlockLike, Location, Region, RegionLike, Type, Value, ValueLike,
    },
    pass::Pass,
};

static PASS_ID: PassId = PassId;

crate::pass_options! {
    pub struct ShardOptions {
        /// Remark on each region made, and on each op left unpartitioned
        remarks: bool = ("remarks", "false"),
    }
}

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-shard",
    summary: "Put attention and Gated DeltaNet of a Shardy-partitioned program in manually partitioned regions, split over heads and batch",
    description: "In a program partitioned over chips with Shardy (an `sdy.mesh`, more than one partition), puts \
each `flywheel.attention` and `flywheel.gated_delta` in a manually partitioned region (`sdy.manual_computation`, \
what `shard_map` exports), so the Mosaic kernel `flywheel-tile` makes of it runs per chip on that chip's heads: XLA \
cannot partition a kernel's custom call itself (it would gather every operand and run the whole kernel on every \
chip). Each mesh axis splits the heads while their count stays whole, else the batch, else nothing. A program \
partitioned without Shardy (GSPMD) gets no region, and its ops keep the reference lowering.",
    options: ShardOptions::SPECS,
    create: |text| Ok(create(ShardOptions::parse(text)?)),
};

const MANUAL_COMPUTATION: &str = "sdy.manual_computation";

fn create(ShardOptions { remarks }: ShardOptions) -> Pass {
    external_pass(&PASS, &PASS_ID, Anchor::Module, move |op: OperationRef| shard(op, remarks))
}

/// A Shardy mesh: its symbol and its axes (name, size) in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    pub name: String,
    pub axes: Vec<(String, i64)>,
}

/// Wraps every attention and Gated DeltaNet in `module` that has mesh axes left to
/// partition; false on a mesh it cannot read.
pub fn shard(module: OperationRef, remarks: bool) -> bool {
    if partitions(module) <= 1 {
        return true;
    }
    let meshes = match meshes(module) {
        Ok(meshes) => meshes,
        Err((location, message)) => {
            emit_error(location, &format!("flywheel-shard: {message}"));
            return false;
        }
    };
    let ops = [attention_ops(module), gated_delta_ops(module)].concat();
    for raw in ops {
        // SAFETY: each op is erased only once it is wrapped, and none is visited twice.
        let op = unsafe { OperationRef::from_raw(raw) };
        if meshes.is_empty() {
            if remarks {
                emit_remark(
                    op.location(),
                    "not partitioned by flywheel-shard: the program is partitioned without Shardy (no sdy.mesh)",
                );
            }
            continue;
        }
        let outcome = free_axes(op, &meshes).and_then(|(mesh, free)| {
            if free.is_empty() {
                return Ok(None);
            }
            wrap(op, &mesh, &free).map(Some)
        });
        match outcome {
            Ok(Some(note)) => {
                if remarks {
                    emit_remark(op.location(), &note);
                }
                unsafe { mlir_sys::mlirOperationDestroy(raw) };
            }
            Ok(None) => {}
            Err(reason) => {
                if remarks {
                    emit_remark(op.location(), &format!("not partitioned by flywheel-shard: {reason}"));
                }
            }
        }
    }
    true
}

/// Whether a kernel may replace `op` as it stands: in an unpartitioned program, or in a
/// manual region over every mesh axis of more than one chip; else why not.
pub fn kernel_placement(op: OperationRef) -> Result<(), String> {
    let Some(module) = top_module(op) else { return Ok(()) };
    let partitions = partitions(module);
    if partitions <= 1 {
        return Ok(());
    }
    let not_manual = |why: String| {
        Err(format!("the program is partitioned over {partitions} chips and {why}; XLA cannot partition a kernel (flywheel-shard makes manual regions in Shardy programs)"))
    };
    let meshes = match meshes(module) {
        Ok(meshes) if !meshes.is_empty() => meshes,
        _ => return not_manual("it has no Shardy mesh".into()),
    };
    match free_axes(op, &meshes) {
        Ok((_, free)) if free.is_empty() => Ok(()),
        Ok((_, free)) => not_manual(format!("mesh axes {} are not manual here", quoted(&names(&free)))),
        Err(reason) => not_manual(reason),
    }
}

/// `mhlo.num_partitions` of the module (1 when absent).
fn partitions(module: OperationRef) -> i64 {
    module
        .attribute("mhlo.num_partitions")
        .ok()
        .and_then(|a| IntegerAttribute::try_from(a).ok())
        .map_or(1, |a| a.value())
}

/// The `sdy.mesh` ops of `module`, or the location and reason of one that cannot be read.
fn meshes<'c>(module: OperationRef<'c, '_>) -> Result<Vec<Mesh>, (Location<'c>, String)> {
    let body = module.region(0).ok().and_then(|region| region.first_block());
    let mut meshes = Vec::new();
    for op in body.map(block_ops).unwrap_or_default() {
        if op.name().as_string_ref().as_str() != Ok("sdy.mesh") {
            continue;
        }
        let name = op.attribute("sym_name").ok().and_then(flywheel_dialect::ir::string_attribute);
        let text = op.attribute("mesh").map(|a| a.to_string()).unwrap_or_default();
        match (name, parse_mesh_axes(&text)) {
            (Some(name), Some(axes)) => meshes.push(Mesh { name, axes }),
            _ => {
                return Err((
                    op.location(),
                    format!(
                        "cannot read the sdy.mesh {text:?} (expected #sdy.mesh<[\"axis\"=size, ...]> and a sym_name)"
                    ),
                ))
            }
        }
    }
    Ok(meshes)
}

/// The axes of `#sdy.mesh<["a"=2, "b"=4], device_ids=[...]>` (empty for `#sdy.mesh<[]>`).
pub fn parse_mesh_axes(text: &str) -> Option<Vec<(String, i64)>> {
    let list = text.strip_prefix("#sdy.mesh<[")?;
    let list = &list[..list.find(']')?];
    if list.trim().is_empty() {
        return Some(Vec::new());
    }
    list.split(',')
        .map(|axis| {
            let (name, size) = axis.trim().split_once('=')?;
            Some((name.strip_prefix('"')?.strip_suffix('"')?.to_owned(), size.trim().parse().ok()?))
        })
        .collect()
}

/// The quoted names in a Shardy attribute's text (`#sdy<manual_axes{"a", "b"}>`, a
/// dimension sharding): every "..." in it.
fn quoted_names(text: &str) -> Vec<String> {
    text.split('"').skip(1).step_by(2).map(str::to_owned).collect()
}

/// The mesh `op` is partitioned over and its axes of more than one chip that no
/// enclosing manual region has made manual yet, in mesh order.
fn free_axes(op: OperationRef, meshes: &[Mesh]) -> Result<(Mesh, Vec<(String, i64)>), String> {
    let mut manual = Vec::new();
    let mut mesh_name = None;
    let mut parent = op.parent_operation();
    while let Some(region_op) = parent {
        if region_op.name().as_string_ref().as_str() == Ok(MANUAL_COMPUTATION) {
            manual.extend(region_op.attribute("manual_axes").map(|a| quoted_names(&a.to_string())).unwrap_or_default());
            let shardings = region_op.attribute("in_shardings").map(|a| a.to_string()).unwrap_or_default();
            mesh_name = mesh_name.or_else(|| {
                shardings.split_once("<@").and_then(|(_, rest)| rest.split([',', '>']).next()).map(str::to_owned)
            });
        }
        parent = region_op.parent_operation();
    }
    let mesh = match mesh_name {
        Some(name) => meshes
            .iter()
            .find(|mesh| mesh.name == name)
            .ok_or(format!("its manual region names mesh @{name}, which the module does not define"))?,
        None if meshes.len() == 1 => &meshes[0],
        None => {
            return Err(format!("the module has {} meshes and the op is in no manual region naming one", meshes.len()))
        }
    };
    let free = mesh.axes.iter().filter(|(name, size)| *size > 1 && !manual.contains(name)).cloned().collect();
    Ok((mesh.clone(), free))
}

fn names(axes: &[(String, i64)]) -> Vec<String> {
    axes.iter().map(|(name, _)| name.clone()).collect()
}

fn quoted(names: &[String]) -> String {
    names.iter().map(|name| format!("\"{name}\"")).collect::<Vec<_>>().join(", ")
}

/// Which dimensions of an operand or result hold the batch and the heads.
#[derive(Clone, Copy)]
struct Split {
    batch: Option<usize>,
    heads: Option<usize>,
}

/// What a region needs to know of one op: the splits of its operands and results, and
/// the head attributes to scale.
struct Partitionable {
    operands: Vec<Split>,
    results: Vec<Split>,
    head_attributes: &'static [&'static str],
}

/// k, operand 1 of both ops: the axes must divide its batch and heads (its heads are the
/// fewest: key/value heads for attention, key heads for Gated DeltaNet).
const KEY_OPERAND: usize = 1;

fn partitionable(op: OperationRef) -> Result<Partitionable, String> {
    let in_layout =
        |layout: Layout| Split { batch: Some(layout.position(Role::Batch)), heads: Some(layout.position(Role::Heads)) };
    // Masks and biases broadcast a size-1 batch or head dimension, which stays whole.
    let broadcastable = |value: Value| {
        let d = shape(value.r#type()).unwrap_or_default();
        Split { batch: (d.first() != Some(&1)).then_some(0), heads: (d.get(1) != Some(&1)).then_some(1) }
    };
    if let Some(attention) = AttentionOp::from_operation(op) {
        let layout = attention.layout().map_err(|error| error.to_string())?;
        let operands = [attention.q(), attention.k(), attention.v()]
            .into_iter()
            .flatten()
            .map(|_| in_layout(layout))
            .chain(attention.mask().map(broadcastable))
            .chain(attention.bias().map(broadcastable))
            .chain(
                [attention.q_segment_ids(), attention.kv_segment_ids()]
                    .into_iter()
                    .flatten()
                    .map(|_| Split { batch: Some(0), heads: None }),
            )
            .collect();
        return Ok(Partitionable {
            operands,
            results: vec![in_layout(layout)],
            head_attributes: &["q_heads", "kv_heads"],
        });
    }
    let gated_delta = GatedDeltaOp::from_operation(op).ok_or("it is not attention or Gated DeltaNet")?;
    let layout = gated_delta.layout().map_err(|error| error.to_string())?;
    let gate = Split {
        batch: Some(layout.position_without_head_dim(Role::Batch)),
        heads: Some(layout.position_without_head_dim(Role::Heads)),
    };
    let state = Split { batch: Some(0), heads: Some(1) };
    let mut operands = vec![in_layout(layout), in_layout(layout), in_layout(layout), gate, gate];
    operands.extend(gated_delta.initial_state().map(|_| state));
    Ok(Partitionable { operands, results: vec![in_layout(layout), state], head_attributes: &[] })
}

/// The mesh axes of each dimension of `value` as the program shards it: the
/// `sdy.sharding` of the function argument or `sdy.sharding_constraint` it comes from
/// through ops that keep its shape (converts, elementwise ops).
fn existing_sharding<'c: 'a, 'a>(mut value: Value<'c, 'a>) -> Option<Vec<Vec<String>>> {
    for _ in 0..64 {
        if let Some(argument) = flywheel_dialect::ir::block_argument(value) {
            let function = argument.owner().parent_operation()?;
            let attributes = ArrayAttribute::try_from(function.attribute("arg_attrs").ok()?).ok()?;
            let dictionary =
                DictionaryAttribute::try_from(attributes.element(argument.argument_number()).ok()?).ok()?;
            return Some(dimension_axes(&dictionary.element_by_name("sdy.sharding")?.to_string()));
        }
        let op = flywheel_dialect::ir::defining_op(value)?;
        if op.name().as_string_ref().as_str() == Ok("sdy.sharding_constraint") {
            return Some(dimension_axes(&op.attribute("sharding").ok()?.to_string()));
        }
        let dims = shape(value.r#type());
        value = op.operands().find(|operand| shape(operand.r#type()) == dims)?;
    }
    None
}

/// The axis names of each dimension of `#sdy.sharding<@mesh, [{"a"}, {}, {"b", "c"}]>`.
fn dimension_axes(text: &str) -> Vec<Vec<String>> {
    let Some((_, dims)) = text.split_once('[') else { return Vec::new() };
    let dims = dims.rsplit_once(']').map_or(dims, |(dims, _)| dims);
    dims.split('}').filter(|piece| piece.contains('{')).map(quoted_names).collect()
}

fn shape(r#type: Type) -> Option<Vec<i64>> {
    TensorInfo::of_type(r#type)?.shape.into_iter().collect()
}

/// Replaces `op` by an `sdy.manual_computation` over `free` axes of `mesh` computing it on
/// each chip's share; the remark to give. The caller erases `op`.
fn wrap<'c>(op: OperationRef<'c, '_>, mesh: &Mesh, free: &[(String, i64)]) -> Result<String, String> {
    let plan = partitionable(op)?;
    let key = plan.operands[KEY_OPERAND];
    let key_dims = op.operand(KEY_OPERAND).ok().and_then(|k| shape(k.r#type())).ok_or("k is not a static tensor")?;
    let count = |dim: Option<usize>| dim.map_or(1, |dim| key_dims[dim]);
    let (batch, heads) = (count(key.batch), count(key.heads));
    let (mut head_axes, mut batch_axes, mut repeated) = (Vec::new(), Vec::new(), Vec::new());
    let (mut head_shards, mut batch_shards) = (1, 1);
    // Axes the program already splits the batch over (in k, else q or v) keep that job,
    // so Shardy need not move data at the region's boundary.
    let existing = [KEY_OPERAND, 0, 2]
        .into_iter()
        .find_map(|index| existing_sharding(op.operand(index).ok()?))
        .unwrap_or_default();
    let splits_batch =
        |name: &String| key.batch.and_then(|dim| existing.get(dim)).is_some_and(|axes| axes.contains(name));
    for (name, size) in free {
        if splits_batch(name) && batch % (batch_shards * size) == 0 {
            batch_axes.push(name.clone());
            batch_shards *= size;
        } else if heads % (head_shards * size) == 0 {
            head_axes.push(name.clone());
            head_shards *= size;
        } else if batch % (batch_shards * size) == 0 {
            batch_axes.push(name.clone());
            batch_shards *= size;
        } else {
            repeated.push(name.clone());
        }
    }
    let context = op.context();
    let context = unsafe { context.to_ref() };
    let parse = |text: &str| Attribute::parse(context, text).ok_or(format!("internal error: {text} does not parse"));
    let sharding = |split: &Split, rank: usize| {
        let dims: Vec<String> = (0..rank)
            .map(|dim| match (split.batch == Some(dim), split.heads == Some(dim)) {
                (true, _) if !batch_axes.is_empty() => format!("{{{}}}", quoted(&batch_axes)),
                (_, true) if !head_axes.is_empty() => format!("{{{}}}", quoted(&head_axes)),
                _ => "{}".to_owned(),
            })
            .collect();
        format!("<@{}, [{}]>", mesh.name, dims.join(", "))
    };
    let local = |r#type: Type<'c>, split: &Split| -> Result<Vec<i64>, String> {
        let mut dims = shape(r#type).ok_or(format!("{type} is not a static tensor"))?;
        if let Some(batch) = split.batch {
            dims[batch] /= batch_shards;
        }
        if let Some(heads) = split.heads {
            dims[heads] /= head_shards;
        }
        Ok(dims)
    };
    let local_type = |r#type: Type<'c>, split: &Split| -> Result<Type<'c>, String> {
        let element = TensorInfo::of_type(r#type).ok_or(format!("{type} is not a tensor"))?.element;
        let dims: Vec<u64> = local(r#type, split)?.into_iter().map(|d| d as u64).collect();
        Ok(RankedTensorType::new(&dims, element, None).into())
    };
    let operands: Vec<Value> = op.operands().collect();
    let results: Vec<Type> = op.results().map(|result| result.r#type()).collect();
    let in_shardings: Vec<String> = operands
        .iter()
        .zip(&plan.operands)
        .map(|(value, split)| sharding(split, shape(value.r#type()).map_or(0, |d| d.len())))
        .collect();
    let out_shardings: Vec<String> = results
        .iter()
        .zip(&plan.results)
        .map(|(r#type, split)| sharding(split, shape(*r#type).map_or(0, |d| d.len())))
        .collect();
    let location = op.location();
    let arguments = operands
        .iter()
        .zip(&plan.operands)
        .map(|(value, split)| Ok((local_type(value.r#type(), split)?, location)))
        .collect::<Result<Vec<_>, String>>()?;
    let local_results = results
        .iter()
        .zip(&plan.results)
        .map(|(r#type, split)| local_type(*r#type, split))
        .collect::<Result<Vec<_>, String>>()?;

    let body = Block::new(&arguments);
    let block_arguments: Vec<Value> =
        (0..arguments.len()).map(|i| body.argument(i).expect("in range").into()).collect();
    let mut inner = OperationBuilder::new(op.name().as_string_ref().as_str().map_err(|e| e.to_string())?, location)
        .add_operands(&block_arguments)
        .add_results(&local_results)
        .add_attributes(&op.attributes().collect::<Vec<_>>())
        .build()
        .map_err(|error| error.to_string())?;
    for name in plan.head_attributes {
        let count = op
            .attribute(name)
            .ok()
            .and_then(|a| IntegerAttribute::try_from(a).ok())
            .ok_or(format!("it has no {name}"))?
            .value();
        inner.set_attribute(name, parse(&format!("{} : i64", count / head_shards))?);
    }
    let inner = body.append_operation(inner);
    let inner_results: Vec<Value> = inner.results().map(Into::into).collect();
    body.append_operation(
        OperationBuilder::new("sdy.return", location)
            .add_operands(&inner_results)
            .build()
            .map_err(|error| error.to_string())?,
    );
    let region = Region::new();
    region.append_block(body);
    let mut manual = OperationBuilder::new(MANUAL_COMPUTATION, location)
        .add_operands(&operands)
        .add_results(&results)
        .add_regions([region])
        .build()
        .map_err(|error| error.to_string())?;
    let free_names = names(free);
    manual.set_attribute("in_shardings", parse(&format!("#sdy.sharding_per_value<[{}]>", in_shardings.join(", ")))?);
    manual.set_attribute("out_shardings", parse(&format!("#sdy.sharding_per_value<[{}]>", out_shardings.join(", ")))?);
    manual.set_attribute("manual_axes", parse(&format!("#sdy<manual_axes{{{}}}>", quoted(&free_names)))?);
    let manual = op.block().ok_or("the op is not in a block")?.insert_operation_before(op, manual);
    for (old, new) in op.results().zip(manual.results()) {
        unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(old.to_raw(), new.to_raw()) };
    }
    let mut note = format!(
        "partitioned over mesh @{} axes {}: heads split {head_shards} ways, batch {batch_shards} ways",
        mesh.name,
        quoted(&free_names)
    );
    if !repeated.is_empty() {
        note += &format!("; axes {} divide neither, their chips repeat the work", quoted(&repeated));
    }
    Ok(note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_mesh_axes() {
        assert_eq!(parse_mesh_axes("#sdy.mesh<[\"b\"=2, \"h\"=4]>"), Some(vec![("b".into(), 2), ("h".into(), 4)]));
        assert_eq!(parse_mesh_axes("#sdy.mesh<[], device_ids=[0]>"), Some(vec![]));
        assert_eq!(parse_mesh_axes("#sdy.mesh<[\"x\"=4], device_ids=[3, 2, 1, 0]>"), Some(vec![("x".into(), 4)]));
        assert_eq!(parse_mesh_axes("#sdy.mesh<[x=4]>"), None);
        assert_eq!(
            dimension_axes("#sdy.sharding<@mesh, [{}, {\"b\", \"h\"}, {?}, {\"x\", ?}p1]>"),
            vec![vec![], vec!["b".to_owned(), "h".to_owned()], vec![], vec!["x".to_owned()]]
        );
        assert_eq!(quoted_names("#sdy<manual_axes{\"b\", \"h\"}>"), vec!["b".to_owned(), "h".to_owned()]);
    }
}
