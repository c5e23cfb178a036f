//! Running StableHLO on the PJRT CPU plugin, to check numerics without a TPU.

use crate::{
    array::{Array, DType},
    kernel_handler,
    plugin::{mlir_program, Padded, Plugin},
    tpu::pjrt_message,
};
use pjrt::{Buffer, Client, CompileOptions, LoadedExecutable, PrimitiveType};
use pjrt_sys::{
    PJRT_Buffer, PJRT_Buffer_Type, PJRT_Client, PJRT_Client_AddressableDevices_Args,
    PJRT_Client_BufferFromHostBuffer_Args, PJRT_Client_Compile_Args, PJRT_Client_Create_Args, PJRT_Device, PJRT_Event,
    PJRT_ExecuteOptions, PJRT_HostBufferSemantics_PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes,
    PJRT_LoadedExecutable_Execute_Args,
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

/// A loaded CPU plugin with its client.
///
/// Client creation, compile, upload and execute go through the C API (the pjrt crate's
/// structs for them are older than the plugin's, and it cannot upload bf16, f16 or pred);
/// the crate's wrappers own the objects and read results back.
pub struct CpuRunner {
    plugin: Plugin,
    client: Client,
    raw_client: *mut PJRT_Client,
    device: *mut PJRT_Device,
    /// Whether the Mosaic interpreter handler is registered, or why not.
    kernel_support: Result<(), String>,
}

impl CpuRunner {
    pub fn load(path: &Path) -> Result<CpuRunner, CpuError> {
        let failure = |message: String| CpuError::PluginLoad { path: path.to_path_buf(), message };
        let plugin = Plugin::load(path).map_err(failure)?;
        // Programs without kernels run on a plugin that cannot take the handler.
        let kernel_support = kernel_handler::register(&plugin);
        let mut args = PJRT_Client_Create_Args::new();
        unsafe { plugin.call(|api| api.PJRT_Client_Create, &mut args) }.map_err(failure)?;
        let raw_client = args.client;
        let client = Client::wrap(&plugin.api, raw_client);
        let mut args = PJRT_Client_AddressableDevices_Args::new();
        args.client = raw_client;
        unsafe { plugin.call(|api| api.PJRT_Client_AddressableDevices, &mut args) }.map_err(failure)?;
        if args.num_addressable_devices == 0 {
            return Err(failure("the plugin has no addressable device".into()));
        }
        let device = unsafe { *args.addressable_devices };
        Ok(CpuRunner { plugin, client, raw_client, device, kernel_support })
    }

    /// Compiles `module` (StableHLO text or bytecode) and runs it on `inputs`.
    /// FlyWheel's Mosaic kernels in it run in the interpreter (see `kernel_handler`).
    pub fn run(&self, module: &[u8], inputs: &[Array]) -> Result<Vec<Array>, CpuError> {
        let module = kernel_handler::kernels_for_cpu(module).map_err(CpuError::Compile)?;
        if let (Cow::Owned(_), Err(message)) = (&module, &self.kernel_support) {
            return Err(CpuError::Compile(message.clone()));
        }
        let program = mlir_program(&module);
        let options = CompileOptions::new().encode();
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
        // their raw pointers.
        let (_buffers, mut input_pointers): (Vec<Buffer>, Vec<*mut PJRT_Buffer>) =
            inputs.iter().map(|input| self.upload(input)).collect::<Result<Vec<_>, _>>()?.into_iter().unzip();
        let argument_lists = [input_pointers.as_mut_ptr().cast_const()];
        let mut output_pointers: Vec<*mut PJRT_Buffer> = vec![std::ptr::null_mut(); output_count];
        let output_lists = [output_pointers.as_mut_ptr()];
        let mut complete: *mut PJRT_Event = std::ptr::null_mut();
        let mut options = unsafe { Padded::new(PJRT_ExecuteOptions::new()) };
        let mut args = PJRT_LoadedExecutable_Execute_Args::new();
        args.executable = raw_executable;
        args.options = &mut options.args;
        args.argument_lists = argument_lists.as_ptr();
        args.num_devices = 1;
        args.num_args = input_pointers.len();
        args.output_lists = output_lists.as_ptr();
        args.device_complete_events = &mut complete;
        // SAFETY: the buffers, pointer lists and options outlive the call; the plugin fills
        // `output_count` output pointers and one completion event.
        unsafe { self.plugin.call(|api| api.PJRT_LoadedExecutable_Execute, &mut args) }.map_err(CpuError::Execute)?;
        let outputs: Vec<Buffer> = output_pointers.into_iter().map(|pointer| Buffer::wrap(&self.client, pointer)).collect();
        pjrt::Event::wrap(&self.plugin.api, complete).wait().map_err(|error| CpuError::Execute(pjrt_message(&error)))?;
        outputs.iter().map(|buffer| self.download(buffer).map_err(CpuError::Execute)).collect()
    }

    fn upload(&self, array: &Array) -> Result<(Buffer, *mut PJRT_Buffer), CpuError> {
        let mut args = PJRT_Client_BufferFromHostBuffer_Args::new();
        args.client = self.raw_client;
        args.data = array.bytes.as_ptr().cast();
        args.type_ = buffer_type(array.dtype) as PJRT_Buffer_Type;
        args.dims = array.dims.as_ptr();
        args.num_dims = array.dims.len();
        args.host_buffer_semantics = PJRT_HostBufferSemantics_PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
        args.device = self.device;
        // SAFETY: `array` outlives the call and the wait for `done_with_host_buffer` below.
        unsafe { self.plugin.call(|api| api.PJRT_Client_BufferFromHostBuffer, &mut args) }.map_err(CpuError::Execute)?;
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
