//! rheap's QPS benchmark: the statements ORMs and admin tools fire at start-up, and queries
//! that build in-memory temp tables, on a stock MariaDB and on one with rheap, at a small and a
//! large `tmp_table_size`, with 1 to 64 clients, all configurations in one interleaved run.
//!
//! - [`schema`]: the seeded generator of the 73 tables every server loads.
//! - [`workload`]: the named workloads (statements per table, or a blog's page queries).
//! - [`blog`]: the seeded blog schema (posts with LONGTEXT bodies, terms, comments) and its
//!   page queries, whose temp tables stock builds in Aria.
//! - [`system`]: one adapter per system under test; a configuration is a system at a size.
//! - [`check`]: every statement returns the same result set everywhere, and makes the temp
//!   tables it is meant to.
//! - [`run`]: interleaved rounds, client threads, median and spread.
//! - [`probe`]: mmap/munmap per statement (strace, outside the timed rounds).
//! - [`report`], [`plot`]: markdown, JSON, SVG.
//! - [`callgrind`]: reading a callgrind profile, for the `footprint` tool.

pub mod blog;
pub mod callgrind;
pub mod check;
pub mod plot;
pub mod probe;
pub mod progress;
pub mod report;
pub mod run;
pub mod schema;
pub mod system;
pub mod workload;
