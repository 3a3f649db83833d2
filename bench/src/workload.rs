//! The workloads: each is a list of statements per table; one iteration runs them for every
//! table it applies to (the temp-table queries only for tables with rows).

use crate::schema::{Schema, Table};

/// Where a workload's internal temporary tables live on MariaDB 10.11.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Temp {
    /// Every statement makes at least one in-memory (HEAP) temp table: rheap's to take over.
    Heap,
    /// Every statement makes one for an information_schema table with BLOB/TEXT columns: in
    /// Aria on stock, served by rheap (`rheap_takeover_information_schema`).
    SchemaBlobs,
    /// Some statements make HEAP tables, some information_schema tables with BLOB/TEXT
    /// columns, some none.
    Mixed,
}

/// A named workload.
#[derive(Debug, Clone, Copy)]
pub struct Workload {
    pub name: &'static str,
    /// What it stands for, one line.
    pub about: &'static str,
    /// Whether it runs only on tables with rows.
    pub needs_rows: bool,
    /// Where its internal temp tables go on 10.11.
    pub temp: Temp,
    /// The statements it runs for one table.
    pub per_table: fn(&Table) -> Vec<String>,
}

impl Workload {
    /// One iteration: the statements for every table this workload applies to, in order.
    pub fn iteration(&self, schema: &Schema) -> Vec<String> {
        schema
            .tables
            .iter()
            .filter(|t| !self.needs_rows || !t.rows.is_empty())
            .flat_map(|t| (self.per_table)(t))
            .collect()
    }
}

pub const SHOW_FULL_COLUMNS: Workload = Workload {
    name: "show_full_columns",
    temp: Temp::SchemaBlobs,
    about: "SHOW FULL COLUMNS FROM t (I_S.COLUMNS has blobs: an Aria temp table on stock 10.11)",
    needs_rows: false,
    per_table: |t| vec![format!("SHOW FULL COLUMNS FROM `{}`", t.name)],
};

pub const SHOW_INDEX: Workload = Workload {
    name: "show_index",
    temp: Temp::Heap,
    about: "SHOW INDEX FROM t",
    needs_rows: false,
    per_table: |t| vec![format!("SHOW INDEX FROM `{}`", t.name)],
};

pub const SHOW_TABLE_STATUS: Workload = Workload {
    name: "show_table_status",
    temp: Temp::Heap,
    about: "SHOW TABLE STATUS LIKE 't'",
    needs_rows: false,
    per_table: |t| vec![format!("SHOW TABLE STATUS LIKE '{}'", t.name)],
};

pub const ORM_STARTUP: Workload = Workload {
    name: "orm_startup",
    temp: Temp::Mixed,
    about: "per table: SHOW FULL COLUMNS, SHOW INDEX, SHOW CREATE TABLE, I_S.KEY_COLUMN_USAGE",
    needs_rows: false,
    per_table: |t| {
        vec![
            format!("SHOW FULL COLUMNS FROM `{}`", t.name),
            format!("SHOW INDEX FROM `{}`", t.name),
            format!("SHOW CREATE TABLE `{}`", t.name),
            format!(
                "SELECT CONSTRAINT_NAME, COLUMN_NAME, ORDINAL_POSITION, REFERENCED_TABLE_NAME, \
                 REFERENCED_COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE \
                 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{}'",
                t.name
            ),
        ]
    },
};

pub const GROUP_BY: Workload = Workload {
    name: "group_by",
    temp: Temp::Heap,
    about: "SELECT g, COUNT(*) FROM t GROUP BY g (g not indexed)",
    needs_rows: true,
    per_table: |t| vec![format!("SELECT g, COUNT(*) FROM `{}` GROUP BY g", t.name)],
};

pub const DISTINCT: Workload = Workload {
    name: "distinct",
    temp: Temp::Heap,
    about: "SELECT DISTINCT h FROM t (h not indexed)",
    needs_rows: true,
    per_table: |t| vec![format!("SELECT DISTINCT h FROM `{}`", t.name)],
};

pub const DERIVED_UNION: Workload = Workload {
    name: "derived_union",
    temp: Temp::Heap,
    about: "SELECT COUNT(*) FROM (SELECT g FROM t UNION SELECT h FROM t) d",
    needs_rows: true,
    per_table: |t| {
        vec![format!(
            "SELECT COUNT(*) FROM (SELECT g AS v FROM `{0}` UNION SELECT h FROM `{0}`) d",
            t.name
        )]
    },
};

/// Every workload, in report order.
pub const ALL: &[Workload] = &[
    SHOW_FULL_COLUMNS,
    SHOW_INDEX,
    SHOW_TABLE_STATUS,
    ORM_STARTUP,
    GROUP_BY,
    DISTINCT,
    DERIVED_UNION,
];

pub fn by_name(name: &str) -> Option<Workload> {
    ALL.iter().copied().find(|w| w.name == name)
}

/// The command lines' parser of a workload's name ([`ALL`]'s names, each with its `about` in
/// `--help`; any other name is an error that lists them).
pub fn arg_parser() -> impl clap::builder::TypedValueParser<Value = Workload> {
    clap::builder::TypedValueParser::map(
        clap::builder::PossibleValuesParser::new(
            ALL.iter()
                .map(|w| clap::builder::PossibleValue::new(w.name).help(w.about)),
        ),
        |name| by_name(&name).expect("one of the possible values"),
    )
}
