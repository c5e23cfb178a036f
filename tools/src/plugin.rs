//! Loading a PJRT plugin (libtpu, the CPU plugin) and calling its C API directly where the
//! pjrt crate falls short: it builds host buffers of only some element types, keeps its
//! raw pointers private, and its bundled C-API header is older than libtpu's (its memory
//! statistics call is rejected). Everything else goes through the crate, which wraps the
//! raw objects FlyWheel creates.

use pjrt_sys::{
    PJRT_Api, PJRT_Error, PJRT_Error_Destroy_Args, PJRT_Error_Message_Args, PJRT_Extension_Base, PJRT_Program,
};
use std::path::Path;

/// A PJRT struct with zeroed room for fields newer than the pjrt crate's header, and a
/// `struct_size` that covers it: plugins reject structs smaller than their own version's
/// (fields are only ever appended, and zero means "not set").
#[repr(C)]
pub struct Padded<A> {
    pub args: A,
    newer_fields: [usize; 8],
}

impl<A> Padded<A> {
    /// # Safety
    /// `A` must be a PJRT struct, which starts with `size_t struct_size`.
    pub unsafe fn new(args: A) -> Padded<A> {
        let mut padded = Padded { args, newer_fields: [0; 8] };
        std::ptr::from_mut(&mut padded).cast::<usize>().write(std::mem::size_of::<Padded<A>>());
        padded
    }
}

/// A loaded plugin. It stays loaded for the life of the process: the objects the pjrt
/// crate wraps call back into it when they are dropped.
pub struct Plugin {
    pub api: pjrt::Api,
    raw: *const PJRT_Api,
}

impl Plugin {
    pub fn load(path: &Path) -> Result<Plugin, String> {
        // Plugins log through absl/TSL, INFO lines included, to stderr; warnings and errors
        // only, unless the caller asks for more (TF_CPP_MIN_LOG_LEVEL=0).
        if std::env::var_os("TF_CPP_MIN_LOG_LEVEL").is_none() {
            std::env::set_var("TF_CPP_MIN_LOG_LEVEL", "1");
        }
        // SAFETY: loading a PJRT plugin runs its initializers; `GetPjrtApi` is the entry
        // point every PJRT plugin exports and returns a table valid while it is loaded.
        let library = unsafe { libloading::Library::new(path) }.map_err(|error| error.to_string())?;
        let raw = unsafe {
            let get_api: libloading::Symbol<unsafe extern "C" fn() -> *const PJRT_Api> =
                library.get(b"GetPjrtApi").map_err(|error| error.to_string())?;
            get_api()
        };
        if raw.is_null() {
            return Err("GetPjrtApi returned null".into());
        }
        std::mem::forget(library);
        Ok(Plugin { api: pjrt::Api::wrap(raw), raw })
    }

    /// Calls the C-API function `select` picks from the table, its arguments `Padded`,
    /// and turns a returned error into its message.
    ///
    /// # Safety
    /// `args` must be the argument struct the selected function expects (PJRT argument
    /// structs start with `size_t struct_size`), every pointer in it valid for the call.
    pub unsafe fn call<A: Copy>(
        &self,
        select: impl FnOnce(&PJRT_Api) -> Option<unsafe extern "C" fn(*mut A) -> *mut PJRT_Error>,
        args: &mut A,
    ) -> Result<(), String> {
        let api = &*self.raw;
        let function = select(api).ok_or("the plugin lacks a required PJRT function")?;
        let mut padded = Padded::new(*args);
        let error = function(&mut padded.args);
        *args = padded.args;
        self.check(error)
    }

    /// The extension of type `kind` in the plugin's extension list (PJRT's
    /// `PJRT_Extension_Type`), as its `PJRT_Extension_Base`.
    pub fn extension(&self, kind: u32) -> Option<*const PJRT_Extension_Base> {
        // SAFETY: the API table and its extension list live as long as the plugin.
        let mut extension = unsafe { (*self.raw).extension_start };
        while !extension.is_null() {
            if unsafe { (*extension).type_ } == kind {
                return Some(extension);
            }
            extension = unsafe { (*extension).next };
        }
        None
    }

    /// Turns a PJRT error a call returned (null: none) into its message, freeing it.
    ///
    /// # Safety
    /// `error` must be null or an error this plugin returned and nobody freed.
    pub unsafe fn check(&self, error: *mut PJRT_Error) -> Result<(), String> {
        if error.is_null() {
            return Ok(());
        }
        let api = &*self.raw;
        let mut message_args = PJRT_Error_Message_Args::new();
        message_args.error = error;
        api.PJRT_Error_Message.expect("PJRT_Error_Message")(&mut message_args);
        let text = std::slice::from_raw_parts(message_args.message.cast::<u8>(), message_args.message_size);
        let text = String::from_utf8_lossy(text).into_owned();
        let mut destroy_args = PJRT_Error_Destroy_Args::new();
        destroy_args.error = error;
        api.PJRT_Error_Destroy.expect("PJRT_Error_Destroy")(&mut destroy_args);
        Err(text)
    }
}

/// A `PJRT_Program` naming StableHLO (text or bytecode) in `module`, which must outlive it.
pub fn mlir_program(module: &[u8]) -> PJRT_Program {
    const FORMAT: &str = "mlir";
    let mut program = PJRT_Program::new();
    program.code = module.as_ptr().cast_mut().cast();
    program.code_size = module.len();
    program.format = FORMAT.as_ptr().cast();
    program.format_size = FORMAT.len();
    program
}
