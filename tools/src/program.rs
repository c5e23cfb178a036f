//! What the tools need to know about a program before handing it to PJRT: its entry
//! function's signature and how it is partitioned over chips.

use flywheel_dialect::ir::string_attribute;
use flywheel_kernels::array::{type_text, DType};
use melior::ir::{
    attribute::{IntegerAttribute, TypeAttribute},
    operation::{OperationLike, OperationRef},
    r#type::{FunctionType, RankedTensorType, ShapedTypeLike},
    AttributeLike, BlockLike, Module, Type,
};
use mlir_sys::{MlirAttribute, MlirNamedAttribute};

/// The type of one parameter or result of a program's entry function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSpec {
    pub dtype: DType,
    pub dims: Vec<i64>,
}

impl TensorSpec {
    pub fn type_text(&self) -> String {
        type_text(self.dtype, &self.dims)
    }
}

/// The parameter and result types of a module's entry function: `@main` (as JAX names
/// it), else its only public function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    pub parameters: Vec<TensorSpec>,
    pub results: Vec<TensorSpec>,
}

pub fn entry_signature(module: &Module) -> Result<Signature, String> {
    function_signature(&entry_function(module)?)
}

/// Marks every parameter of the entry function `mhlo.layout_mode = "auto"` (as JAX's
/// `Layout.AUTO` does): the compiler chooses the parameters' layouts, where by default it
/// takes its default layouts and relays out what needs another.
pub fn let_compiler_lay_out_parameters(module: &Module) -> Result<(), String> {
    let function = entry_function(module)?;
    // Bound first: a context reference taken from a temporary dangles in release builds.
    let context_ref = module.context();
    let context = unsafe { context_ref.to_ref() }.to_raw();
    let parameters = entry_signature(module)?.parameters.len();
    let existing = function.attribute("arg_attrs").ok().map(|attribute| attribute.to_raw());
    // SAFETY: attributes of a live module, built in its context; element indices are
    // below the counts the C API reports.
    unsafe {
        let key = mlir_sys::mlirIdentifierGet(context, string_ref("mhlo.layout_mode"));
        let auto = mlir_sys::mlirStringAttrGet(context, string_ref("auto"));
        let dictionaries: Vec<MlirAttribute> = (0..parameters)
            .map(|index| {
                let mut entries: Vec<MlirNamedAttribute> = existing
                    .filter(|array| mlir_sys::mlirAttributeIsAArray(*array))
                    .filter(|array| (index as isize) < mlir_sys::mlirArrayAttrGetNumElements(*array))
                    .map(|array| mlir_sys::mlirArrayAttrGetElement(array, index as isize))
                    .filter(|dictionary| mlir_sys::mlirAttributeIsADictionary(*dictionary))
                    .map(|dictionary| {
                        (0..mlir_sys::mlirDictionaryAttrGetNumElements(dictionary))
                            .map(|at| mlir_sys::mlirDictionaryAttrGetElement(dictionary, at))
                            .filter(|entry| !mlir_sys::mlirIdentifierEqual(entry.name, key))
                            .collect()
                    })
                    .unwrap_or_default();
                entries.push(MlirNamedAttribute { name: key, attribute: auto });
                mlir_sys::mlirDictionaryAttrGet(context, entries.len() as isize, entries.as_ptr())
            })
            .collect();
        let array = mlir_sys::mlirArrayAttrGet(context, dictionaries.len() as isize, dictionaries.as_ptr());
        mlir_sys::mlirOperationSetAttributeByName(function.to_raw(), string_ref("arg_attrs"), array);
    }
    Ok(())
}

fn string_ref(text: &str) -> mlir_sys::MlirStringRef {
    mlir_sys::MlirStringRef { data: text.as_ptr().cast(), length: text.len() }
}

/// `@main` (as JAX names it), else the module's only public function.
fn entry_function<'c, 'a>(module: &'a Module<'c>) -> Result<OperationRef<'c, 'a>, String> {
    let mut public = Vec::new();
    let body = module.body();
    let mut next = body.first_operation();
    while let Some(operation) = next {
        if operation.name().as_string_ref().as_str() == Ok("func.func") {
            let private =
                operation.attribute("sym_visibility").ok().and_then(string_attribute).is_some_and(|v| v == "private");
            let name = operation.attribute("sym_name").ok().and_then(string_attribute).unwrap_or_default();
            if name == "main" {
                return Ok(operation);
            }
            if !private {
                public.push(operation);
            }
        }
        next = operation.next_in_block();
    }
    match public.as_slice() {
        [only] => Ok(*only),
        [] => Err("the module has no public function to run".into()),
        _ => Err("the module has several public functions and none is named @main".into()),
    }
}

fn function_signature<'c: 'a, 'a>(function: &impl OperationLike<'c, 'a>) -> Result<Signature, String> {
    let attribute = function.attribute("function_type").map_err(|_| "func.func without a function_type")?;
    let r#type =
        FunctionType::try_from(TypeAttribute::try_from(attribute).map_err(|_| "function_type is not a type")?.value())
            .map_err(|_| "function_type is not a function type")?;
    let specs = |types: Vec<Type>| types.into_iter().map(tensor_spec).collect::<Result<Vec<_>, _>>();
    let parameters = specs((0..r#type.input_count()).map(|i| r#type.input(i).unwrap()).collect())?;
    let results = specs((0..r#type.result_count()).map(|i| r#type.result(i).unwrap()).collect())?;
    Ok(Signature { parameters, results })
}

fn tensor_spec(r#type: Type) -> Result<TensorSpec, String> {
    let tensor =
        RankedTensorType::try_from(r#type).map_err(|_| format!("unsupported parameter type {type} (tensors only)"))?;
    let element = tensor.element().to_string();
    let dtype =
        DType::from_mlir_name(&element).ok_or_else(|| format!("unsupported element type {element} in {type}"))?;
    let dims = (0..tensor.rank())
        .map(|dim| match tensor.dim_size(dim) {
            Ok(melior::ir::r#type::DimSize::Static(size)) => Ok(size as i64),
            _ => Err(format!("dynamic shape {type} is not supported")),
        })
        .collect::<Result<_, _>>()?;
    Ok(TensorSpec { dtype, dims })
}

/// How a program is split over devices, from the module attributes JAX writes
/// (`mhlo.num_partitions`, `mhlo.num_replicas`) and whether its shardings are Shardy's
/// (`sdy.mesh`) or GSPMD's (`mhlo.sharding`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partitioning {
    pub replicas: i64,
    pub partitions: i64,
    pub shardy: bool,
}

pub fn partitioning(module: &Module) -> Partitioning {
    let operation = module.as_operation();
    let count = |name: &str| {
        operation.attribute(name).ok().and_then(|a| IntegerAttribute::try_from(a).ok()).map_or(1, |a| a.value())
    };
    let mut shardy = false;
    let mut next = module.body().first_operation();
    while let Some(child) = next {
        shardy |= child.name().as_string_ref().as_str() == Ok("sdy.mesh");
        next = child.next_in_block();
    }
    Partitioning { replicas: count("mhlo.num_replicas"), partitions: count("mhlo.num_partitions"), shardy }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiler_layouts_mark_every_parameter_and_keep_its_attributes() {
        let context = flywheel_dialect::create_context();
        let text = r#"func.func @main(%a: tensor<2xf32> {mhlo.sharding = "{replicated}"}, %b: tensor<2xi1>, %c: tensor<f32> {mhlo.layout_mode = "default"}) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}"#;
        let module = Module::parse(&context, text).expect("parses");
        let_compiler_lay_out_parameters(&module).expect("an entry function");
        let printed = module.as_operation().to_string();
        assert!(
            printed.contains(r#"%arg0: tensor<2xf32> {mhlo.layout_mode = "auto", mhlo.sharding = "{replicated}"}"#),
            "{printed}"
        );
        assert!(printed.contains(r#"%arg1: tensor<2xi1> {mhlo.layout_mode = "auto"}"#), "{printed}");
        assert!(printed.contains(r#"%arg2: tensor<f32> {mhlo.layout_mode = "auto"}"#), "{printed}");
    }
}
