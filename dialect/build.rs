//! Compiles the small C++ shim that gives Rust the MLIR diagnostics the C API lacks
//! (warnings and remarks; the C API only emits errors).

fn main() {
    let prefix = std::env::var("MLIR_SYS_220_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-22".into());
    println!("cargo:rerun-if-changed=src/diagnostics.cpp");
    println!("cargo:rerun-if-env-changed=MLIR_SYS_220_PREFIX");
    cc::Build::new()
        .cpp(true)
        .file("src/diagnostics.cpp")
        .include(format!("{prefix}/include"))
        .flag("-std=c++17")
        .flag("-fno-exceptions")
        .warnings(false)
        .compile("flywheel_diagnostics");
}
