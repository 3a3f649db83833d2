//! Where things are: this repository, its build output, the installed server.

use std::path::PathBuf;

/// The workspace root.
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("harness is a workspace member")
        .to_path_buf()
}

/// Where `cargo xtask dist` puts the plugin it built (`ha_rheap.so`, `build.json`; the
/// fault-injection variant under `failpoints/`).
pub fn dist() -> PathBuf {
    target().join("dist")
}

/// cargo's target directory (`CARGO_TARGET_DIR`, else `<workspace>/target`).
pub fn target() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"))
}

/// The installed server binary (`MARIADBD`, else /usr/sbin/mariadbd).
pub fn mariadbd() -> PathBuf {
    std::env::var_os("MARIADBD")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/usr/sbin/mariadbd".into())
}

/// The installed server's plugin directory (`MARIADB_PLUGIN_DIR`, else Debian's).
pub fn server_plugin_dir() -> PathBuf {
    std::env::var_os("MARIADB_PLUGIN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/usr/lib/mysql/plugin".into())
}

/// The installed mysql-test-run (package mariadb-test).
pub fn mtr_dir() -> PathBuf {
    std::env::var_os("MARIADB_MTR_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/usr/share/mysql/mysql-test".into())
}

/// Our mtr suites that run from an installed test directory: the Debian package installs them
/// (`cargo xtask package`), the clean-room test runs them there with plain mtr. (`rheap_loaded`
/// only makes sense beside upstream tests our driver runs.)
pub const PACKAGED_SUITES: &[&str] = &["rheap", "rheap_takeover"];

/// Our mtr suites.
pub fn suites() -> PathBuf {
    workspace().join("mtr-tests/mysql-test")
}

/// The Perl file, beside our suites, that adds the server log lines mysql-test-run must not
/// count as warnings where rheap is loaded to its `@::global_suppressions`: every suite that
/// runs with the plugin reads it from its `suite.pm`.
pub fn mtr_suppressions() -> PathBuf {
    suites().join("rheap_suppressions.pl")
}
