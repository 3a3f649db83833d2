//! The workloads: each is a list of statements per table, and one iteration runs them for
//! every table it applies to (the temp-table queries only for tables with rows); or a blog's
//! page queries ([`crate::blog`]), the same list every iteration.

use crate::blog;
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
    /// Every statement makes one or more tables for its BLOB/TEXT/JSON columns or a unique
    /// constraint: in Aria on stock, on disk; served by rheap in Aria's place
    /// (`rheap_takeover_blob_tables`), none of them on disk.
    AriaBlobs,
}

/// The statements of a workload's iteration.
#[derive(Debug, Clone, Copy)]
pub enum Statements {
    /// These for every table of the schema it applies to.
    PerTable(fn(&Table) -> Vec<String>),
    /// These, over the blog's tables ([`blog::load_sql`]).
    Blog(fn() -> Vec<String>),
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
    /// The statements it runs.
    pub statements: Statements,
}

impl Workload {
    /// One iteration: the statements for every table this workload applies to, in order.
    pub fn iteration(&self, schema: &Schema) -> Vec<String> {
        match self.statements {
            Statements::PerTable(per_table) => schema
                .tables
                .iter()
                .filter(|t| !self.needs_rows || !t.rows.is_empty())
                .flat_map(per_table)
                .collect(),
            Statements::Blog(statements) => statements(),
        }
    }
}

pub const SHOW_FULL_COLUMNS: Workload = Workload {
    name: "show_full_columns",
    temp: Temp::SchemaBlobs,
    about: "SHOW FULL COLUMNS FROM t (I_S.COLUMNS has blobs: an Aria temp table on stock 10.11)",
    needs_rows: false,
    statements: Statements::PerTable(|t| vec![format!("SHOW FULL COLUMNS FROM `{}`", t.name)]),
};

pub const SHOW_INDEX: Workload = Workload {
    name: "show_index",
    temp: Temp::Heap,
    about: "SHOW INDEX FROM t",
    needs_rows: false,
    statements: Statements::PerTable(|t| vec![format!("SHOW INDEX FROM `{}`", t.name)]),
};

pub const SHOW_TABLE_STATUS: Workload = Workload {
    name: "show_table_status",
    temp: Temp::Heap,
    about: "SHOW TABLE STATUS LIKE 't'",
    needs_rows: false,
    statements: Statements::PerTable(|t| vec![format!("SHOW TABLE STATUS LIKE '{}'", t.name)]),
};

pub const ORM_STARTUP: Workload = Workload {
    name: "orm_startup",
    temp: Temp::Mixed,
    about: "per table: SHOW FULL COLUMNS, SHOW INDEX, SHOW CREATE TABLE, I_S.KEY_COLUMN_USAGE",
    needs_rows: false,
    statements: Statements::PerTable(|t| {
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
    }),
};

pub const GROUP_BY: Workload = Workload {
    name: "group_by",
    temp: Temp::Heap,
    about: "SELECT g, COUNT(*) FROM t GROUP BY g (g not indexed)",
    needs_rows: true,
    statements: Statements::PerTable(|t| {
        vec![format!("SELECT g, COUNT(*) FROM `{}` GROUP BY g", t.name)]
    }),
};

pub const DISTINCT: Workload = Workload {
    name: "distinct",
    temp: Temp::Heap,
    about: "SELECT DISTINCT h FROM t (h not indexed)",
    needs_rows: true,
    statements: Statements::PerTable(|t| vec![format!("SELECT DISTINCT h FROM `{}`", t.name)]),
};

pub const DERIVED_UNION: Workload = Workload {
    name: "derived_union",
    temp: Temp::Heap,
    about: "SELECT COUNT(*) FROM (SELECT g FROM t UNION SELECT h FROM t) d",
    needs_rows: true,
    statements: Statements::PerTable(|t| {
        vec![format!(
            "SELECT COUNT(*) FROM (SELECT g AS v FROM `{0}` UNION SELECT h FROM `{0}`) d",
            t.name
        )]
    }),
};

/// A blog page's statement, `about` it, over the blog's tables.
const fn blog(
    name: &'static str,
    about: &'static str,
    statements: fn() -> Vec<String>,
) -> Workload {
    Workload {
        name,
        about,
        needs_rows: false,
        temp: Temp::AriaBlobs,
        statements: Statements::Blog(statements),
    }
}

pub const BLOG_FOUND_ROWS: Workload = blog(
    "blog_found_rows",
    "SELECT SQL_CALC_FOUND_ROWS p.* ... GROUP BY p.ID ORDER BY post_date LIMIT 10 (a category page)",
    blog::found_rows,
);
pub const BLOG_DISTINCT: Workload = blog(
    "blog_distinct",
    "SELECT DISTINCT p.ID, p.post_title, p.post_content ... JOIN the posts' terms (an ORM's .distinct())",
    blog::distinct,
);
pub const BLOG_UNION: Workload = blog(
    "blog_union",
    "SELECT post_title ... UNION SELECT comment_content ... (TEXT columns)",
    blog::union,
);
pub const BLOG_GROUP_CONCAT: Workload = blog(
    "blog_group_concat",
    "a page of posts with GROUP_CONCAT(t.name ORDER BY t.name) of their terms",
    blog::group_concat,
);
pub const BLOG_JSON_PAGE: Workload = blog(
    "blog_json_page",
    "JSON_ARRAYAGG(JSON_OBJECT(... body ...)) of an author's posts in a derived table",
    blog::json_page,
);
pub const BLOG_TOP_COMMENTS: Workload = blog(
    "blog_top_comments",
    "ROW_NUMBER() OVER (PARTITION BY post ...) over c.* in a derived table, rn <= 3",
    blog::top_comments,
);
pub const BLOG_COUNT_DISTINCT: Workload = blog(
    "blog_count_distinct",
    "COUNT(DISTINCT comment_content) over a range of posts' comments (TEXT)",
    blog::count_distinct,
);
pub const BLOG_GROUP_BY_TEXT: Workload = blog(
    "blog_group_by_text",
    "SELECT post_title, COUNT(*), ... GROUP BY post_title (TEXT: a unique constraint)",
    blog::group_by_text,
);

/// Every workload, in report order.
pub const ALL: &[Workload] = &[
    SHOW_FULL_COLUMNS,
    SHOW_INDEX,
    SHOW_TABLE_STATUS,
    ORM_STARTUP,
    GROUP_BY,
    DISTINCT,
    DERIVED_UNION,
    BLOG_FOUND_ROWS,
    BLOG_DISTINCT,
    BLOG_UNION,
    BLOG_GROUP_CONCAT,
    BLOG_JSON_PAGE,
    BLOG_TOP_COMMENTS,
    BLOG_COUNT_DISTINCT,
    BLOG_GROUP_BY_TEXT,
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
