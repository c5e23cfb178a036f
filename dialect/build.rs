//! Compiles the small C++ shims that give Rust what the MLIR C API lacks: diagnostics of
//! every severity (the C API only emits errors), inlining a call and buffered printing.

fn main() {
    let prefix = std::env::var("MLIR_SYS_220_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-22".into());
    println!("cargo:rerun-if-changed=src/diagnostics.cpp");
    println!("cargo:rerun-if-changed=src/ir.cpp");
    println!("cargo:rerun-if-env-changed=MLIR_SYS_220_PREFIX");
    cc::Build::new()
        .cpp(true)
        .file("src/diagnostics.cpp")
        .file("src/ir.cpp")
        .include(format!("{prefix}/include"))
        .flag("-std=c++17")
        .flag("-fno-exceptions")
        .warnings(false)
        .compile("flywheel_shims");
}
