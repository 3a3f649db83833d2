//! What rheap's tests, benchmark and build tooling share to run a private MariaDB server with
//! the plugin: where things are ([`paths`]), the staged plugin directory ([`plugin`]: found or
//! staged from `target/dist`, never built; `cargo xtask dist` builds it), the server itself
//! ([`server`]), SQL helpers ([`sql`]), streaming a command's output ([`process`]), a
//! connection pinned to a CPU ([`pinned`]) and mmap/munmap counts by strace ([`syscalls`]).
//!
//! Nothing here mocks the server: every server is a real `mariadbd` from the installed
//! packages, in a temporary directory of its own, reached over a socket in that directory.

pub mod paths;
pub mod pinned;
pub mod plugin;
pub mod process;
pub mod server;
pub mod sql;
pub mod syscalls;

pub use server::Server;
