//! Building StableHLO ops (generic form, attributes as properties, as JAX prints them)
//! in front of an op, for passes that rewrite into or out of StableHLO.

use crate::analysis::atoms::{Atom, Atoms, Axis};
use flywheel_dialect::stablehlo::{build, ComparisonDirection, ComparisonType, DotDimensionNumbers};
use melior::{
    ir::{
        operation::{OperationBuilder, OperationLike, OperationMutLike, OperationRef},
        Attribute, Block, BlockLike, BlockRef, Location, Operation, Region, RegionLike, Type, TypeLike, Value,
        ValueLike,
    },
    ContextRef,
};
use mlir_sys::{
    mlirAttributeParseGet, mlirDenseElementsAttrSplatGet, mlirDenseI64ArrayGet, mlirFloatAttrDoubleGet,
    mlirIntegerAttrGet, mlirRankedTensorTypeGet, mlirShapedTypeGetElementType, mlirTypeIsAFloat, mlirTypeParseGet,
    MlirStringRef,
};

/// Whether every atom of `axes` is in `target`: what [`materialize`] needs (it only
/// rearranges and broadcasts).
pub fn covers(atoms: &Atoms, axes: &[Axis], target: &[Axis]) -> bool {
    let wanted: Vec<Atom> = target.iter().flat_map(|axis| atoms.leaves(axis)).collect();
    axes.iter().flat_map(|axis| atoms.leaves(axis)).all(|atom| wanted.contains(&atom))
}

/// Builds `value` (whose axes are `axes`) rearranged into `target` axes: a reshape to one
/// axis per atom, a transpose into the target's atom order, a broadcast for the target's
/// atoms the value does not have, and a reshape to the target's axes. Each step is left
/// out when it would do nothing. Every atom of `value` must be in `target`.
pub fn materialize<'c, 'a>(
    builder: &HloBuilder<'c, 'a>,
    atoms: &Atoms,
    value: Value<'c, 'a>,
    axes: &[Axis],
    element: &str,
    target: &[Axis],
) -> Value<'c, 'a> {
    let sizes = |leaves: &[Atom]| -> Vec<i64> { leaves.iter().map(|&atom| atoms.size(atom)).collect() };
    let shape: Vec<i64> = axes.iter().map(|axis| atoms.axis_size(axis)).collect();
    let source: Vec<Atom> = axes.iter().flat_map(|axis| atoms.leaves(axis)).collect();
    let wanted: Vec<Atom> = target.iter().flat_map(|axis| atoms.leaves(axis)).collect();
    let permutation: Vec<i64> =
        wanted.iter().filter_map(|atom| source.iter().position(|s| s == atom)).map(|p| p as i64).collect();
    assert_eq!(permutation.len(), source.len(), "every atom of the value is in the target");
    let target_shape: Vec<i64> = target.iter().map(|axis| atoms.axis_size(axis)).collect();
    let in_order = permutation.iter().enumerate().all(|(i, &p)| i as i64 == p);
    if in_order && wanted.len() == source.len() {
        return builder.reshape(value, &shape, &target_shape, element);
    }
    let flat = builder.reshape(value, &shape, &sizes(&source), element);
    let transposed = builder.transpose(flat, &permutation, &sizes(&source), element);
    let present: Vec<i64> =
        wanted.iter().enumerate().filter(|(_, atom)| source.contains(atom)).map(|(i, _)| i as i64).collect();
    let full = if present.len() == wanted.len() {
        transposed
    } else {
        builder.broadcast_in_dim(transposed, &present, &sizes(&wanted), element)
    };
    builder.reshape(full, &sizes(&wanted), &target_shape, element)
}

fn string_ref(text: &str) -> MlirStringRef {
    MlirStringRef { data: text.as_ptr().cast(), length: text.len() }
}

/// Inserts ops before `anchor`, at `location`.
pub struct HloBuilder<'c, 'a> {
    context: ContextRef<'c>,
    place: Place<'c, 'a>,
    location: Location<'c>,
}

/// Where a builder puts ops.
#[derive(Clone, Copy)]
enum Place<'c, 'a> {
    Before(OperationRef<'c, 'a>),
    End(BlockRef<'c, 'a>),
}

impl<'c, 'a> HloBuilder<'c, 'a> {
    pub fn before(anchor: OperationRef<'c, 'a>) -> Self {
        HloBuilder { context: anchor.context(), place: Place::Before(anchor), location: anchor.location() }
    }

    /// A builder appending to `block` (a region being built), like `self`'s context and
    /// location.
    pub fn at_end<'b>(&self, block: BlockRef<'c, 'b>) -> HloBuilder<'c, 'b> {
        HloBuilder { context: self.context, place: Place::End(block), location: self.location }
    }

    /// Ends the block being built with `stablehlo.return`.
    pub fn terminate(&self, values: &[Value<'c, 'a>]) {
        self.insert_op(build("stablehlo.return", self.location, values, &[], &[]));
    }

    /// Adds `op` at the builder's place.
    pub fn insert_op(&self, op: Operation<'c>) -> OperationRef<'c, 'a> {
        match self.place {
            Place::Before(anchor) => {
                anchor.block().expect("the anchor is in a block").insert_operation_before(anchor, op)
            }
            Place::End(block) => block.append_operation(op),
        }
    }

    /// `tensor<{shape}x{element}>`: only the element type is parsed from text, as
    /// parsing the whole type costs as much as the raising around it.
    pub fn tensor_type(&self, shape: &[i64], element: &str) -> Type<'c> {
        // SAFETY: a live context; the shape is copied by the call.
        unsafe {
            let element_type = mlirTypeParseGet(self.context.to_ref().to_raw(), string_ref(element));
            assert!(!element_type.ptr.is_null(), "element type {element} parses");
            assert!(shape.iter().all(|&size| size >= 0), "a static shape: {shape:?}");
            let no_encoding = mlir_sys::MlirAttribute { ptr: std::ptr::null() };
            Type::from_raw(mlirRankedTensorTypeGet(shape.len() as isize, shape.as_ptr(), element_type, no_encoding))
        }
    }

    /// An attribute from its MLIR text.
    pub fn attribute(&self, text: &str) -> Attribute<'c> {
        let raw = unsafe { mlirAttributeParseGet(self.context.to_ref().to_raw(), string_ref(text)) };
        assert!(!raw.ptr.is_null(), "attribute {text} parses");
        unsafe { Attribute::from_raw(raw) }
    }

    fn i64_array(&self, values: &[i64]) -> Attribute<'c> {
        // SAFETY: `values` outlives the call, which copies them.
        unsafe {
            Attribute::from_raw(mlirDenseI64ArrayGet(
                self.context.to_ref().to_raw(),
                values.len() as isize,
                values.as_ptr(),
            ))
        }
    }

    fn insert(
        &self,
        name: &str,
        operands: &[Value<'c, 'a>],
        result: Type<'c>,
        properties: &[(&str, Attribute<'c>)],
    ) -> Value<'c, 'a> {
        self.insert_built(build(name, self.location, operands, &[result], properties))
    }

    fn insert_built(&self, op: Operation<'c>) -> Value<'c, 'a> {
        self.insert_op(op).result(0).expect("built with one result").into()
    }

    /// Any op, its results given as (shape, element type) and its attributes as MLIR
    /// text (`1.0 : f32`).
    pub fn op(
        &self,
        name: &str,
        operands: &[Value<'c, 'a>],
        results: &[(&[i64], &str)],
        attributes: &[(&str, String)],
    ) -> Vec<Value<'c, 'a>> {
        let types: Vec<Type> = results.iter().map(|(shape, element)| self.tensor_type(shape, element)).collect();
        let mut op = build(name, self.location, operands, &types, &[]);
        for (key, text) in attributes {
            op.set_attribute(key, self.attribute(text));
        }
        self.insert_op(op).results().map(Into::into).collect()
    }

    /// A scalar `dense<value>` constant of `element` (`f32`, `i32`, `i1`...).
    pub fn scalar(&self, value: f64, element: &str) -> Value<'c, 'a> {
        self.constant(value, self.tensor_type(&[], element), element)
    }

    /// A constant of tensor type `type` (whose elements are `element`s), every element
    /// `value` (rounded to the element type; ±inf and NaN kept). Built through the C API,
    /// not from text: folding builds one per folded op.
    pub fn constant(&self, value: f64, r#type: Type<'c>, element: &str) -> Value<'c, 'a> {
        // SAFETY: `type` is a live shaped type; the attributes are built in its context.
        let splat = unsafe {
            let element_type = mlirShapedTypeGetElementType(r#type.to_raw());
            let scalar = if mlirTypeIsAFloat(element_type) {
                mlirFloatAttrDoubleGet(self.context.to_ref().to_raw(), element_type, value)
            } else {
                let integer = if element == "i1" { i64::from(value != 0.0) } else { value as i64 };
                mlirIntegerAttrGet(element_type, integer)
            };
            Attribute::from_raw(mlirDenseElementsAttrSplatGet(r#type.to_raw(), scalar))
        };
        self.insert("stablehlo.constant", &[], r#type, &[("value", splat)])
    }

    /// A constant of `shape`, every element `value`.
    pub fn splat(&self, value: f64, element: &str, shape: &[i64]) -> Value<'c, 'a> {
        let scalar = self.scalar(value, element);
        self.broadcast_in_dim(scalar, &[], shape, element)
    }

    pub fn broadcast_in_dim(
        &self,
        x: Value<'c, 'a>,
        dimensions: &[i64],
        shape: &[i64],
        element: &str,
    ) -> Value<'c, 'a> {
        let r#type = self.tensor_type(shape, element);
        self.insert("stablehlo.broadcast_in_dim", &[x], r#type, &[("broadcast_dimensions", self.i64_array(dimensions))])
    }

    pub fn transpose(
        &self,
        x: Value<'c, 'a>,
        permutation: &[i64],
        input_shape: &[i64],
        element: &str,
    ) -> Value<'c, 'a> {
        if permutation.iter().enumerate().all(|(i, &p)| i as i64 == p) {
            return x;
        }
        let shape: Vec<i64> = permutation.iter().map(|&p| input_shape[p as usize]).collect();
        let r#type = self.tensor_type(&shape, element);
        self.insert("stablehlo.transpose", &[x], r#type, &[("permutation", self.i64_array(permutation))])
    }

    pub fn reshape(&self, x: Value<'c, 'a>, input_shape: &[i64], shape: &[i64], element: &str) -> Value<'c, 'a> {
        if input_shape == shape {
            return x;
        }
        let r#type = self.tensor_type(shape, element);
        self.insert("stablehlo.reshape", &[x], r#type, &[])
    }

    pub fn convert(&self, x: Value<'c, 'a>, shape: &[i64], from: &str, to: &str) -> Value<'c, 'a> {
        if from == to {
            return x;
        }
        self.insert("stablehlo.convert", &[x], self.tensor_type(shape, to), &[])
    }

    /// An elementwise op whose result has the type of its first operand.
    pub fn elementwise(&self, name: &str, operands: &[Value<'c, 'a>]) -> Value<'c, 'a> {
        self.insert(name, operands, operands[0].r#type(), &[])
    }

    /// `on_true` where `predicate` holds, else `on_false` (both of the result's type).
    pub fn select(&self, predicate: Value<'c, 'a>, on_true: Value<'c, 'a>, on_false: Value<'c, 'a>) -> Value<'c, 'a> {
        self.insert("stablehlo.select", &[predicate, on_true, on_false], on_true.r#type(), &[])
    }

    pub fn compare(
        &self,
        a: Value<'c, 'a>,
        b: Value<'c, 'a>,
        direction: ComparisonDirection,
        compare_type: ComparisonType,
        shape: &[i64],
    ) -> Value<'c, 'a> {
        let properties = [
            ("comparison_direction", self.attribute(&direction.to_string())),
            ("compare_type", self.attribute(&compare_type.to_string())),
        ];
        self.insert("stablehlo.compare", &[a, b], self.tensor_type(shape, "i1"), &properties)
    }

    pub fn iota(&self, dimension: i64, shape: &[i64], element: &str) -> Value<'c, 'a> {
        let dimension = self.attribute(&format!("{dimension} : i64"));
        self.insert("stablehlo.iota", &[], self.tensor_type(shape, element), &[("iota_dimension", dimension)])
    }

    /// `x` grown to `shape` with zeros after its elements (none between or before).
    pub fn pad_with_zeros(&self, x: Value<'c, 'a>, input_shape: &[i64], shape: &[i64], element: &str) -> Value<'c, 'a> {
        self.pad_with(x, 0.0, input_shape, shape, element)
    }

    /// `x` grown to `shape` with `value` after its elements (none between or before).
    pub fn pad_with(
        &self,
        x: Value<'c, 'a>,
        value: f64,
        input_shape: &[i64],
        shape: &[i64],
        element: &str,
    ) -> Value<'c, 'a> {
        if input_shape == shape {
            return x;
        }
        let high: Vec<i64> = shape.iter().zip(input_shape).map(|(to, from)| to - from).collect();
        let padding = self.scalar(value, element);
        let properties = [
            ("edge_padding_low", self.i64_array(&vec![0; shape.len()])),
            ("edge_padding_high", self.i64_array(&high)),
            ("interior_padding", self.i64_array(&vec![0; shape.len()])),
        ];
        self.insert("stablehlo.pad", &[x, padding], self.tensor_type(shape, element), &properties)
    }

    /// The leading `shape` corner of `x`.
    pub fn leading_slice(&self, x: Value<'c, 'a>, input_shape: &[i64], shape: &[i64], element: &str) -> Value<'c, 'a> {
        if input_shape == shape {
            return x;
        }
        self.slice(x, &vec![0; shape.len()], shape, element)
    }

    /// The elements of `x` from `start` (inclusive) to `limit` (exclusive) on each axis.
    pub fn slice(&self, x: Value<'c, 'a>, start: &[i64], limit: &[i64], element: &str) -> Value<'c, 'a> {
        let shape: Vec<i64> = start.iter().zip(limit).map(|(first, end)| end - first).collect();
        let properties = [
            ("start_indices", self.i64_array(start)),
            ("limit_indices", self.i64_array(limit)),
            ("strides", self.i64_array(&vec![1; shape.len()])),
        ];
        self.insert("stablehlo.slice", &[x], self.tensor_type(&shape, element), &properties)
    }

    /// `parts` joined along `dimension`, into `shape`.
    pub fn concatenate(&self, parts: &[Value<'c, 'a>], dimension: i64, shape: &[i64], element: &str) -> Value<'c, 'a> {
        let dimension = self.attribute(&format!("{dimension} : i64"));
        self.insert("stablehlo.concatenate", parts, self.tensor_type(shape, element), &[("dimension", dimension)])
    }

    /// `stablehlo.dynamic_slice(x, starts...)` of `sizes`.
    pub fn dynamic_slice(
        &self,
        x: Value<'c, 'a>,
        starts: &[Value<'c, 'a>],
        sizes: &[i64],
        element: &str,
    ) -> Value<'c, 'a> {
        let operands: Vec<Value> = std::iter::once(x).chain(starts.iter().copied()).collect();
        self.insert(
            "stablehlo.dynamic_slice",
            &operands,
            self.tensor_type(sizes, element),
            &[("slice_sizes", self.i64_array(sizes))],
        )
    }

    /// `stablehlo.dynamic_update_slice(x, update, starts...)`.
    pub fn dynamic_update_slice(
        &self,
        x: Value<'c, 'a>,
        update: Value<'c, 'a>,
        starts: &[Value<'c, 'a>],
    ) -> Value<'c, 'a> {
        let operands: Vec<Value> = [x, update].into_iter().chain(starts.iter().copied()).collect();
        self.insert("stablehlo.dynamic_update_slice", &operands, x.r#type(), &[])
    }

    /// A `stablehlo.while` over `inits`: `condition` and `body` get a builder for their
    /// block and the carried values, and return the predicate and the next values.
    pub fn while_loop(
        &self,
        inits: &[Value<'c, 'a>],
        condition: impl for<'b> FnOnce(&HloBuilder<'c, 'b>, &[Value<'c, 'b>]) -> Value<'c, 'b>,
        body: impl for<'b> FnOnce(&HloBuilder<'c, 'b>, &[Value<'c, 'b>]) -> Vec<Value<'c, 'b>>,
    ) -> Vec<Value<'c, 'a>> {
        let types: Vec<Type<'c>> = inits.iter().map(|value| value.r#type()).collect();
        let arguments: Vec<(Type<'c>, Location<'c>)> = types.iter().map(|&t| (t, self.location)).collect();
        let regions = [Region::new(), Region::new()];
        {
            let block = regions[0].append_block(Block::new(&arguments));
            let builder = self.at_end(block);
            let carried: Vec<Value> = (0..types.len()).map(|i| block.argument(i).expect("in range").into()).collect();
            let predicate = condition(&builder, &carried);
            builder.terminate(&[predicate]);
        }
        {
            let block = regions[1].append_block(Block::new(&arguments));
            let builder = self.at_end(block);
            let carried: Vec<Value> = (0..types.len()).map(|i| block.argument(i).expect("in range").into()).collect();
            let next = body(&builder, &carried);
            builder.terminate(&next);
        }
        let op = OperationBuilder::new("stablehlo.while", self.location)
            .add_operands(inits)
            .add_results(&types)
            .add_regions(regions)
            .build()
            .expect("an unregistered op builds");
        self.insert_op(op).results().map(Into::into).collect()
    }

    pub fn dot_general(
        &self,
        lhs: Value<'c, 'a>,
        rhs: Value<'c, 'a>,
        dimensions: &DotDimensionNumbers,
        shape: &[i64],
        element: &str,
    ) -> Value<'c, 'a> {
        self.dot_general_at(lhs, rhs, dimensions, shape, element, None)
    }

    /// `dot_general` with another dot's `precision_config` attribute, if it has one.
    pub fn dot_general_with_precision(
        &self,
        lhs: Value<'c, 'a>,
        rhs: Value<'c, 'a>,
        dimensions: &DotDimensionNumbers,
        shape: &[i64],
        precision_config: Option<Attribute<'c>>,
        element: &str,
    ) -> Value<'c, 'a> {
        let mut properties = vec![("dot_dimension_numbers", self.attribute(&dimensions.to_string()))];
        properties.extend(precision_config.map(|config| ("precision_config", config)));
        self.insert("stablehlo.dot_general", &[lhs, rhs], self.tensor_type(shape, element), &properties)
    }

    /// `dot_general`, with both operands at `precision` (`HIGHEST`, ...) when given.
    pub fn dot_general_at(
        &self,
        lhs: Value<'c, 'a>,
        rhs: Value<'c, 'a>,
        dimensions: &DotDimensionNumbers,
        shape: &[i64],
        element: &str,
        precision: Option<&str>,
    ) -> Value<'c, 'a> {
        let config = precision.map(|precision| {
            self.attribute(&format!("[#stablehlo<precision {precision}>, #stablehlo<precision {precision}>]"))
        });
        self.dot_general_with_precision(lhs, rhs, dimensions, shape, config, element)
    }

    /// `reduce(x, init)` over `dimensions` with the binary op `combiner`
    /// (`stablehlo.add`, `stablehlo.maximum`), all in `element`.
    pub fn reduce(
        &self,
        x: Value<'c, 'a>,
        init: Value<'c, 'a>,
        dimensions: &[i64],
        shape: &[i64],
        element: &str,
        combiner: &str,
    ) -> Value<'c, 'a> {
        let scalar = self.tensor_type(&[], element);
        let body = Block::new(&[(scalar, self.location), (scalar, self.location)]);
        let combined = body.append_operation(build(
            combiner,
            self.location,
            &[body.argument(0).expect("two arguments").into(), body.argument(1).expect("two arguments").into()],
            &[scalar],
            &[],
        ));
        body.append_operation(build(
            "stablehlo.return",
            self.location,
            &[combined.result(0).expect("one result").into()],
            &[],
            &[],
        ));
        let region = Region::new();
        region.append_block(body);
        let result_shape: Vec<i64> =
            shape.iter().enumerate().filter(|(i, _)| !dimensions.contains(&(*i as i64))).map(|(_, &d)| d).collect();
        let mut op = OperationBuilder::new("stablehlo.reduce", self.location)
            .add_operands(&[x, init])
            .add_results(&[self.tensor_type(&result_shape, element)])
            .add_regions([region])
            .build()
            .expect("an unregistered op builds");
        op.set_inherent_attribute("dimensions", self.i64_array(dimensions));
        self.insert_built(op)
    }

    /// The running sum of `x` along its last axis (an inclusive prefix sum): one product
    /// with a triangle of ones, at full f32 precision (a `reduce_window` of the whole axis
    /// costs its length squared in adds; shifted adds, log2 of it in separate fusions).
    pub fn prefix_sum(&self, x: Value<'c, 'a>, shape: &[i64], element: &str) -> Value<'c, 'a> {
        let last = shape.len() as i64 - 1;
        let length = shape[last as usize];
        let square = [length, length];
        let (from, to) = (self.iota(0, &square, "i32"), self.iota(1, &square, "i32"));
        let upper = self.compare(from, to, ComparisonDirection::Le, ComparisonType::Signed, &square);
        let ones = self.convert(upper, &square, "i1", element);
        let numbers = DotDimensionNumbers {
            lhs_batching: vec![],
            rhs_batching: vec![],
            lhs_contracting: vec![last],
            rhs_contracting: vec![0],
        };
        self.dot_general_at(x, ones, &numbers, shape, element, Some("HIGHEST"))
    }
}
