//! Links the C++ shim into `ha_rheap.so` (the cdylib only: a test executable could not resolve
//! the server symbols the shim uses, which mariadbd provides at load time) and exports just the
//! symbols the server looks for.
fn main() {
    let lib_dir = std::env::var("DEP_RHEAP_SHIM_LIB_DIR").expect("rheap-sys sets lib_dir");
    let services =
        std::env::var("DEP_RHEAP_SHIM_SERVICES_LIB").expect("rheap-sys sets services_lib");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("exports.map");
    println!("cargo:rerun-if-changed={}", script.display());
    for arg in [
        "-Wl,--whole-archive".to_string(),
        format!("{lib_dir}/librheap_shim.a"),
        "-Wl,--no-whole-archive".to_string(),
        services,
        "-lstdc++".to_string(),
        format!("-Wl,--version-script={}", script.display()),
        // The shim's calls into the engine's exported `rheap_*` functions bind here, at link
        // time: a direct call, not one through the PLT.
        "-Wl,-Bsymbolic-functions".to_string(),
    ] {
        println!("cargo:rustc-cdylib-link-arg={arg}");
    }
}
