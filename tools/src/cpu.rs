//! Running StableHLO on the PJRT CPU plugin, to check numerics without a TPU.

use crate::{
    kernel_handler,
    plugin::{mlir_program, Padded, Plugin},
    program::{partitioning, Partitioning},
    source::parse_module,
    tpu::pjrt_message,
};
use flywheel_dialect::create_context;
use flywheel_dialect::ir::string_attribute;
use flywheel_kernels::array::{Array, DType};
use melior::{
    ir::{
        attribute::{ArrayAttribute, DictionaryAttribute, TypeAttribute},
        operation::{OperationLike, OperationMutLike, OperationRef, OperationRefMut},
        r#type::{FunctionType, RankedTensorType},
        Attribute, BlockLike, Identifier, Module, ShapedTypeLike,
    },
    Context,
};
use pjrt::{Buffer, Client, LoadedExecutable, PrimitiveType};
use pjrt_sys::{
    PJRT_Buffer, PJRT_Buffer_Type, PJRT_Client, PJRT_Client_AddressableDevices_Args,
    PJRT_Client_BufferFromHostBuffer_Args, PJRT_Client_Compile_Args, PJRT_Client_Create_Args, PJRT_Device, PJRT_Event,
    PJRT_ExecuteOptions, PJRT_HostBufferSemantics_PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes,
    PJRT_LoadedExecutable_Execute_Args, PJRT_NamedValue, PJRT_NamedValue_Type_PJRT_NamedValue_kInt64,
};
use std::{
    borrow::Cow,
    path::{Path, PathBuf},
};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum CpuError {
    #[error("PJRT CPU plugin not found at {0} (run scripts/setup, or set FLYWHEEL_CPU_PLUGIN / --plugin PATH)")]
    PluginMissing(PathBuf),
    #[error("cannot load the PJRT CPU plugin from {path}: {message}")]
    PluginLoad { path: PathBuf, message: String },
    #[error("the CPU plugin could not compile the module: {0}")]
    Compile(String),
    #[error("the CPU plugin failed to run the module: {0}")]
    Execute(String),
}

/// Where the CPU plugin is: the explicit path, else `$FLYWHEEL_CPU_PLUGIN`, else the
/// project venv's `lammps_jax_pjrt_cpu` package.
pub fn locate_cpu_plugin(explicit: Option<&Path>) -> Result<PathBuf, CpuError> {
    let path = match (explicit, std::env::var_os("FLYWHEEL_CPU_PLUGIN")) {
        (Some(path), _) => path.to_path_buf(),
        (None, Some(path)) => PathBuf::from(path),
        (None, None) => crate::tpu::venv_site_packages().join("lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so"),
    };
    if path.is_file() {
        Ok(path)
    } else {
        Err(CpuError::PluginMissing(path))
    }
}

fn buffer_type(dtype: DType) -> PrimitiveType {
    match dtype {
        DType::Bool => PrimitiveType::Pred,
        DType::I8 => PrimitiveType::S8,
        DType::I16 => PrimitiveType::S16,
        DType::I32 => PrimitiveType::S32,
        DType::I64 => PrimitiveType::S64,
        DType::U8 => PrimitiveType::U8,
        DType::U16 => PrimitiveType::U16,
        DType::U32 => PrimitiveType::U32,
        DType::U64 => PrimitiveType::U64,
        DType::F16 => PrimitiveType::F16,
        DType::BF16 => PrimitiveType::BF16,
        DType::F32 => PrimitiveType::F32,
        DType::F64 => PrimitiveType::F64,
    }
}

fn dtype_of_buffer(r#type: PrimitiveType) -> Result<DType, String> {
    DType::ALL
        .into_iter()
        .find(|&dtype| buffer_type(dtype) == r#type)
        .ok_or_else(|| format!("unsupported output element type {type:?}"))
}

/// CPU devices the client makes: the most partitions a program may have to run here.
const CPU_DEVICES: usize = 8;

/// `module` as the CPU runs it, and how it is partitioned: Mosaic kernel calls become
/// calls of the interpreter handler, and a partitioned program's entry arguments and
/// results are replicated over its mesh (each device gets whole inputs and gives whole
/// outputs; the partitioning inside, manual regions included, is untouched). Unchanged
/// (borrowed) when neither applies.
pub fn for_cpu(module: &[u8]) -> Result<(Cow<'_, [u8]>, Partitioning, bool), String> {
    let context = create_context();
    let parsed = parse_module(&context, module).ok_or("the program does not parse")?;
    let partitioning = partitioning(&parsed);
    if partitioning.partitions > 1 {
        replicate_entry(&context, &parsed, partitioning)?;
    }
    let kernels = kernel_handler::call_interpreter(&context, &parsed)?;
    if partitioning.partitions <= 1 && !kernels {
        return Ok((Cow::Borrowed(module), partitioning, kernels));
    }
    Ok((Cow::Owned(parsed.as_operation().to_string().into_bytes()), partitioning, kernels))
}

/// Gives every argument and result of `module`'s public functions an explicit
/// replicated sharding: one left out would be given whatever Shardy or GSPMD propagates
/// to it.
fn replicate_entry(context: &Context, module: &Module, partitioning: Partitioning) -> Result<(), String> {
    let symbol = |op: &OperationRef| op.attribute("sym_name").ok().and_then(string_attribute);
    let mut mesh = None;
    let mut functions = Vec::new();
    let mut next = module.body().first_operation();
    while let Some(op) = next {
        next = op.next_in_block();
        match op.name().as_string_ref().as_str() {
            Ok("sdy.mesh") => mesh = mesh.or_else(|| symbol(&op)),
            Ok("func.func")
                if op.attribute("sym_visibility").ok().and_then(string_attribute).is_none_or(|s| s == "public") =>
            {
                functions.push(op)
            }
            _ => {}
        }
    }
    let (key, replicated) = match (&mesh, partitioning.shardy) {
        (Some(mesh), true) => (
            "sdy.sharding",
            Box::new(move |rank: usize| format!("#sdy.sharding<@{mesh}, [{}]>", vec!["{}"; rank].join(", ")))
                as Box<dyn Fn(usize) -> String>,
        ),
        _ => ("mhlo.sharding", Box::new(|_| "\"{replicated}\"".to_owned()) as Box<dyn Fn(usize) -> String>),
    };
    for function in functions {
        let r#type = FunctionType::try_from(
            function
                .attribute("function_type")
                .ok()
                .and_then(|a| TypeAttribute::try_from(a).ok())
                .ok_or("a function without a type")?
                .value(),
        )
        .map_err(|_| "a function type that is not one")?;
        let lists = [
            ("arg_attrs", (0..r#type.input_count()).map(|i| r#type.input(i)).collect::<Result<Vec<_>, _>>()),
            ("res_attrs", (0..r#type.result_count()).map(|i| r#type.result(i)).collect::<Result<Vec<_>, _>>()),
        ];
        // SAFETY: the function is live in `module`; only its attributes change.
        let mut function = unsafe { OperationRefMut::from_raw(function.to_raw()) };
        for (list, types) in lists {
            let types = types.map_err(|error| error.to_string())?;
            let existing = function.attribute(list).ok().and_then(|a| ArrayAttribute::try_from(a).ok());
            let mut dictionaries = Vec::new();
            for (index, r#type) in types.into_iter().enumerate() {
                let rank = RankedTensorType::try_from(r#type).map_or(0, |tensor| tensor.rank());
                let sharding =
                    Attribute::parse(context, &replicated(rank)).ok_or("cannot write a replicated sharding")?;
                let mut elements = vec![(Identifier::new(context, key), sharding)];
                if let Some(dictionary) = existing
                    .and_then(|list| list.element(index).ok())
                    .and_then(|a| DictionaryAttribute::try_from(a).ok())
                {
                    for element in (0..dictionary.len()).filter_map(|i| dictionary.element(i).ok()) {
                        if !matches!(element.0.as_string_ref().as_str(), Ok("sdy.sharding" | "mhlo.sharding")) {
                            elements.push(element);
                        }
                    }
                }
                dictionaries.push(DictionaryAttribute::new(context, &elements).into());
            }
            function.set_attribute(list, ArrayAttribute::new(context, &dictionaries).into());
        }
    }
    Ok(())
}

/// A loaded CPU plugin with its client.
///
/// Client creation, compile, upload and execute go through the C API (the pjrt crate's
/// structs for them are older than the plugin's, and it cannot upload bf16, f16 or pred);
/// the crate's wrappers own the objects and read results back.
pub struct CpuRunner {
    plugin: Plugin,
    client: Client,
    raw_client: *mut PJRT_Client,
    /// The client's devices, in order: a program partitioned over N chips runs on the
    /// first N.
    devices: Vec<*mut PJRT_Device>,
    /// Whether the Mosaic interpreter handler is registered, or why not.
    kernel_support: Result<(), String>,
}

impl CpuRunner {
    pub fn load(path: &Path) -> Result<CpuRunner, CpuError> {
        let failure = |message: String| CpuError::PluginLoad { path: path.to_path_buf(), message };
        let plugin = Plugin::load(path).map_err(failure)?;
        // Programs without kernels run on a plugin that cannot take the handler.
        let kernel_support = kernel_handler::register(&plugin);
        let name = "cpu_device_count";
        let mut device_count = PJRT_NamedValue::new();
        device_count.name = name.as_ptr().cast();
        device_count.name_size = name.len();
        device_count.type_ = PJRT_NamedValue_Type_PJRT_NamedValue_kInt64;
        device_count.__bindgen_anon_1.int64_value = CPU_DEVICES as i64;
        device_count.value_size = 1;
        let mut args = PJRT_Client_Create_Args::new();
        args.create_options = &device_count;
        args.num_options = 1;
        // SAFETY: the option and its name outlive the call.
        unsafe { plugin.call(|api| api.PJRT_Client_Create, &mut args) }.map_err(failure)?;
        let raw_client = args.client;
        let client = Client::wrap(&plugin.api, raw_client);
        let mut args = PJRT_Client_AddressableDevices_Args::new();
        args.client = raw_client;
        unsafe { plugin.call(|api| api.PJRT_Client_AddressableDevices, &mut args) }.map_err(failure)?;
        if args.num_addressable_devices == 0 {
            return Err(failure("the plugin has no addressable device".into()));
        }
        // SAFETY: the plugin returned this many device pointers, owned by the client.
        let devices =
            unsafe { std::slice::from_raw_parts(args.addressable_devices, args.num_addressable_devices) }.to_vec();
        Ok(CpuRunner { plugin, client, raw_client, devices, kernel_support })
    }

    /// Compiles `module` (StableHLO text or bytecode) and runs it on `inputs`.
    /// FlyWheel's Mosaic kernels in it run in the interpreter (see `kernel_handler`). A
    /// program partitioned over N chips runs SPMD on N CPU devices, each given the whole
    /// inputs (see `for_cpu`); the outputs are the first device's.
    pub fn run(&self, module: &[u8], inputs: &[Array]) -> Result<Vec<Array>, CpuError> {
        let (module, partitioning, kernels) = for_cpu(module).map_err(CpuError::Compile)?;
        let partitions = usize::try_from(partitioning.partitions * partitioning.replicas).unwrap_or(0);
        if partitions == 0 || partitions > self.devices.len() {
            return Err(CpuError::Compile(format!(
                "the program is partitioned over {partitions} devices; the CPU runs at most {}",
                self.devices.len()
            )));
        }
        if let (true, Err(message)) = (kernels, &self.kernel_support) {
            return Err(CpuError::Compile(message.clone()));
        }
        let program = mlir_program(&module);
        let options = crate::tpu::compile_options(partitioning).encode();
        let mut args = PJRT_Client_Compile_Args::new();
        args.client = self.raw_client;
        args.program = &program;
        args.compile_options = options.as_ptr().cast();
        args.compile_options_size = options.len();
        unsafe { self.plugin.call(|api| api.PJRT_Client_Compile, &mut args) }.map_err(CpuError::Compile)?;
        let raw_executable = args.executable;
        let executable = LoadedExecutable::wrap(&self.client, raw_executable);
        let output_count = executable.executable().num_outputs();

        // The wrappers own the input buffers (and free them when done); the plugin takes
        // their raw pointers. Each device gets its own copy of every input.
        let mut buffers = Vec::new();
        let mut input_pointers: Vec<Vec<*mut PJRT_Buffer>> = Vec::new();
        for &device in &self.devices[..partitions] {
            let (owned, pointers): (Vec<Buffer>, Vec<*mut PJRT_Buffer>) = inputs
                .iter()
                .map(|input| self.upload(input, device))
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .unzip();
            buffers.push(owned);
            input_pointers.push(pointers);
        }
        let argument_lists: Vec<*const *mut PJRT_Buffer> =
            input_pointers.iter_mut().map(|list| list.as_mut_ptr().cast_const()).collect();
        let mut output_pointers: Vec<Vec<*mut PJRT_Buffer>> =
            vec![vec![std::ptr::null_mut(); output_count]; partitions];
        let output_lists: Vec<*mut *mut PJRT_Buffer> =
            output_pointers.iter_mut().map(|list| list.as_mut_ptr()).collect();
        let mut complete: Vec<*mut PJRT_Event> = vec![std::ptr::null_mut(); partitions];
        let mut options = unsafe { Padded::new(PJRT_ExecuteOptions::new()) };
        let mut args = PJRT_LoadedExecutable_Execute_Args::new();
        args.executable = raw_executable;
        args.options = &mut options.args;
        args.argument_lists = argument_lists.as_ptr();
        args.num_devices = partitions;
        args.num_args = inputs.len();
        args.output_lists = output_lists.as_ptr();
        args.device_complete_events = complete.as_mut_ptr();
        // SAFETY: the buffers, pointer lists and options outlive the call; the plugin fills
        // `output_count` output pointers and one completion event per device.
        unsafe { self.plugin.call(|api| api.PJRT_LoadedExecutable_Execute, &mut args) }.map_err(CpuError::Execute)?;
        let mut per_device: Vec<Vec<Buffer>> = output_pointers
            .into_iter()
            .map(|list| list.into_iter().map(|pointer| Buffer::wrap(&self.client, pointer)).collect())
            .collect();
        for event in complete {
            pjrt::Event::wrap(&self.plugin.api, event)
                .wait()
                .map_err(|error| CpuError::Execute(pjrt_message(&error)))?;
        }
        per_device.swap_remove(0).iter().map(|buffer| self.download(buffer).map_err(CpuError::Execute)).collect()
    }

    fn upload(&self, array: &Array, device: *mut PJRT_Device) -> Result<(Buffer, *mut PJRT_Buffer), CpuError> {
        let mut args = PJRT_Client_BufferFromHostBuffer_Args::new();
        args.client = self.raw_client;
        args.data = array.bytes.as_ptr().cast();
        args.type_ = buffer_type(array.dtype) as PJRT_Buffer_Type;
        args.dims = array.dims.as_ptr();
        args.num_dims = array.dims.len();
        args.host_buffer_semantics = PJRT_HostBufferSemantics_PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
        args.device = device;
        // SAFETY: `array` outlives the call and the wait for `done_with_host_buffer` below.
        unsafe { self.plugin.call(|api| api.PJRT_Client_BufferFromHostBuffer, &mut args) }
            .map_err(CpuError::Execute)?;
        if !args.done_with_host_buffer.is_null() {
            pjrt::Event::wrap(&self.plugin.api, args.done_with_host_buffer)
                .wait()
                .map_err(|error| CpuError::Execute(pjrt_message(&error)))?;
        }
        Ok((Buffer::wrap(&self.client, args.buffer), args.buffer))
    }

    fn download(&self, buffer: &Buffer) -> Result<Array, String> {
        let dtype = dtype_of_buffer(buffer.primitive_type())?;
        let (args, bytes) = buffer.call_copy_to_host().map_err(|error| pjrt_message(&error))?;
        pjrt::Event::wrap(&self.plugin.api, args.event).wait().map_err(|error| pjrt_message(&error))?;
        Array::from_bytes(dtype, buffer.dims(), bytes)
    }
}
