//! rheap's tests that need a server: the mysql-test-run suites and their runner, the server's
//! storage_engine suite and upstream conformance, the stress run and the differential fuzzers.
//! `cargo xtask` runs them by name (`cargo xtask mtr`, `fuzz`, `test`, ...). The private
//! servers they start, and the staged plugin directory, come from `rheap-harness`; nothing here
//! builds the plugin (`cargo xtask dist` does).
//!
//! Nothing here mocks the server: every test starts a real `mariadbd` from the installed
//! packages, in a temporary directory of its own, reached over a socket in that directory.

pub mod conformance;
pub mod created_files;
pub mod fuzz;
pub mod list_file;
pub mod mtr;
pub mod storage_engine;
pub mod stress;
