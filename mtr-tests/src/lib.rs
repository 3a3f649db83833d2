//! rheap's tests beyond the engine's own: mysql-test-run suites and their runner, the clean-room
//! install test of the Debian package, the server's
//! storage_engine suite and upstream conformance, the stress run, the differential fuzzer, and
//! the CI driver (`src/bin/rheap-dev.rs`). The private servers they start, and the staged
//! plugin directory, come from `rheap-harness`; nothing here builds the plugin
//! (`cargo xtask dist` does).
//!
//! Nothing here mocks the server: every test starts a real `mariadbd` from the installed
//! packages, in a temporary directory of its own, reached over a socket in that directory.

pub mod cleanroom;
pub mod conformance;
pub mod container_recipe;
pub mod created_files;
pub mod docker_check;
pub mod fuzz;
pub mod list_file;
pub mod mtr;
pub mod root;
pub mod storage_engine;
pub mod stress;
