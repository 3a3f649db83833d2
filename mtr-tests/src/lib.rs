//! The test harness of rheap: private MariaDB servers with the plugin, the staged plugin
//! directory, mysql-test-run, and the CI driver (`src/bin/rheap-dev.rs`).
//!
//! Nothing here mocks the server: every test starts a real `mariadbd` from the installed
//! packages, in a temporary directory of its own, reached over a socket in that directory.

pub mod callgrind;
pub mod conformance;
pub mod created_files;
pub mod docker_check;
pub mod fuzz;
pub mod layout;
pub mod list_file;
pub mod mtr;
pub mod paths;
pub mod pgo;
pub mod pinned;
pub mod plugin;
pub mod process;
pub mod server;
pub mod sql;
pub mod storage_engine;
pub mod stress;

pub use server::Server;
