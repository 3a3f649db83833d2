//! Build script of rheap-sys: finds the MariaDB server headers, refuses a version that the
//! installed server would reject, builds the C++ shim with cmake and generates bindings.
//!
//! Where things come from (each variable is read through [`env`], which tells cargo to rerun
//! when it changes):
//! - `MARIADB_SOURCE_DIR`: a MariaDB server source tree. Default: the tree `ci/setup` unpacks
//!   from Debian's source package into `<workspace>/.cache/mariadb/src`.
//! - `MARIADB_SERVER_INCLUDE_DIR`: the generated headers of the installed server build
//!   (my_config.h, mysql_version.h, mysqld_error.h). Default: `/usr/include/mariadb/server`
//!   (package libmariadbd-dev).
//! - `MARIADB_SERVICES_LIB`: the plugin services archive. Default:
//!   `/usr/lib/x86_64-linux-gnu/libmysqlservices.a` (package libmariadbd-dev).
//! - `MARIADBD`: the server the plugin is for. Default: `/usr/sbin/mariadbd`.
//!
//! A storage engine loads only into a server of exactly its `MYSQL_VERSION_ID`, so the source
//! tree, the generated headers and the server binary must all agree (see [`version`]).

mod bindings;
mod version;

use std::path::{Path, PathBuf};

/// Reads a build-time environment variable and asks cargo to rerun when it changes.
fn env(name: &str) -> Option<String> {
    println!("cargo:rerun-if-env-changed={name}");
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Stops the build with a message that names what to do.
fn fail(msg: impl std::fmt::Display) -> ! {
    eprintln!("\nrheap-sys: {msg}\n");
    std::process::exit(1);
}

/// The header and library locations of one server build.
pub struct Server {
    /// The source tree (include/, sql/, wsrep-lib/).
    pub src: PathBuf,
    /// The installed generated headers.
    pub generated: PathBuf,
    /// Holds probes_mysql_nodtrace.h, which cmake would generate from its .h.in.
    pub probes: PathBuf,
    pub services_lib: PathBuf,
    pub mariadbd: PathBuf,
}

impl Server {
    fn find(out: &Path) -> Server {
        let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
        let src = match env("MARIADB_SOURCE_DIR") {
            Some(dir) => PathBuf::from(dir),
            None => manifest.join("../.cache/mariadb/src"),
        };
        if !src.join("sql/handler.h").is_file() {
            fail(format_args!(
                "no MariaDB server sources at {} (sql/handler.h is missing). Run `ci/setup` as \
                 root, or set MARIADB_SOURCE_DIR to a MariaDB source tree of the installed \
                 server's version.",
                src.display()
            ));
        }
        let generated = PathBuf::from(
            env("MARIADB_SERVER_INCLUDE_DIR")
                .unwrap_or_else(|| "/usr/include/mariadb/server".into()),
        );
        if !generated.join("mysql_version.h").is_file() {
            fail(format_args!(
                "no mysql_version.h in {}: install libmariadbd-dev (ci/setup does) or set \
                 MARIADB_SERVER_INCLUDE_DIR",
                generated.display()
            ));
        }
        let services_lib = PathBuf::from(
            env("MARIADB_SERVICES_LIB")
                .unwrap_or_else(|| "/usr/lib/x86_64-linux-gnu/libmysqlservices.a".into()),
        );
        if !services_lib.is_file() {
            fail(format_args!(
                "no {}: install libmariadbd-dev (ci/setup does) or set MARIADB_SERVICES_LIB",
                services_lib.display()
            ));
        }
        let mariadbd =
            PathBuf::from(env("MARIADBD").unwrap_or_else(|| "/usr/sbin/mariadbd".into()));
        let probes = out.join("probes");
        std::fs::create_dir_all(&probes).unwrap();
        let probes_in = src.join("include/probes_mysql_nodtrace.h.in");
        std::fs::copy(&probes_in, probes.join("probes_mysql_nodtrace.h"))
            .unwrap_or_else(|e| fail(format_args!("cannot copy {}: {e}", probes_in.display())));
        Server {
            src,
            generated,
            probes,
            services_lib,
            mariadbd,
        }
    }

    /// Include directories, in the order that compiles: the source tree's include/ must come
    /// before the installed directory, since both have a my_global.h.
    pub fn include_dirs(&self) -> Vec<PathBuf> {
        vec![
            self.src.join("include"),
            self.src.join("sql"),
            self.probes.clone(),
            self.generated.clone(),
            self.src.join("wsrep-lib/include"),
            self.src.join("wsrep-lib/wsrep-API/v26"),
        ]
    }
}

/// Builds `librheap_shim.a` with cmake and tells dependents where it is.
fn build_shim(server: &Server) {
    println!("cargo:rerun-if-changed=shim");
    let includes: Vec<String> = server
        .include_dirs()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    // Cargo features reach build scripts as variables (no rerun-if-env-changed needed: a
    // feature change is a different build of this crate, in its own OUT_DIR).
    let failpoints = std::env::var_os("CARGO_FEATURE_FAILPOINTS").is_some();
    let dst = cmake::Config::new("shim")
        .define("RHEAP_SERVER_INCLUDES", includes.join(";"))
        .define("RHEAP_FAILPOINTS", if failpoints { "ON" } else { "OFF" })
        .profile("Release")
        .build();
    // Only the engine's cdylib links these (engine/build.rs): the shim's undefined server
    // symbols resolve against mariadbd at load time, which no test executable could do.
    println!("cargo:lib_dir={}", dst.join("lib").display());
    println!("cargo:services_lib={}", server.services_lib.display());
}

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let server = Server::find(&out);
    // The paths this build used, for the crate's tests of the version check.
    for (key, path) in [
        ("SOURCE_DIR", &server.src),
        ("GENERATED_DIR", &server.generated),
        ("MARIADBD", &server.mariadbd),
    ] {
        println!("cargo:rustc-env=RHEAP_BUILD_{key}={}", path.display());
    }
    match version::check(&server.src, &server.generated, &server.mariadbd) {
        Ok(v) => println!("cargo:version_id={}", v.id()),
        Err(msg) => fail(msg),
    }
    build_shim(&server);
    bindings::generate(&server, &out);
}
