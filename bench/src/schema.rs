//! The benchmark's schema: 73 InnoDB tables made by a seeded generator, the same on every
//! system under test. Each table has an `id` primary key, 3 to 13 more columns of varied types
//! (VARCHAR, CHAR, TEXT, BLOB, DECIMAL, DATETIME, DATE, ENUM, integers, DOUBLE) with comments,
//! 0 to 3 secondary indexes, and 0 to 200 rows. Two scalar columns of every table, `g` and
//! `h`, are never indexed: the temp-table workloads group and de-duplicate on them.

/// How many tables (the number of tables of the application whose start-up this mimics).
pub const TABLES: usize = 73;
/// The seed of the schema everyone measures.
pub const SEED: u64 = 0x5eed_0f72_ea00;

/// A small xorshift generator: deterministic, good enough for a schema.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.next_u64() as usize % items.len()]
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
}

/// A column type, with what its values look like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnType {
    Int,
    BigInt,
    SmallUnsigned,
    Bool,
    Double,
    Decimal(u8, u8),
    Varchar(u16),
    Char(u8),
    Text,
    MediumText,
    Blob,
    DateTime,
    Date,
    Enum(&'static [&'static str]),
}

const ENUMS: &[&[&str]] = &[
    &["active", "inactive", "pending"],
    &["draft", "published", "archived", "deleted"],
    &["low", "medium", "high"],
];

impl ColumnType {
    fn random(rng: &mut Rng, scalar_only: bool) -> ColumnType {
        loop {
            let t = match rng.range(0, 13) {
                0 => ColumnType::Int,
                1 => ColumnType::BigInt,
                2 => ColumnType::SmallUnsigned,
                3 => ColumnType::Bool,
                4 => ColumnType::Double,
                5 => {
                    let p = rng.range(6, 18) as u8;
                    ColumnType::Decimal(p, rng.range(0, 4) as u8)
                }
                6 => ColumnType::Varchar(*rng.pick(&[16, 32, 64, 100, 191, 255])),
                7 => ColumnType::Char(rng.range(2, 12) as u8),
                8 => ColumnType::Text,
                9 => ColumnType::MediumText,
                10 => ColumnType::Blob,
                11 => ColumnType::DateTime,
                12 => ColumnType::Date,
                _ => ColumnType::Enum(ENUMS[rng.next_u64() as usize % ENUMS.len()]),
            };
            if !(scalar_only && t.is_blob()) {
                return t;
            }
        }
    }

    /// TEXT and BLOB: an index on one needs a prefix, and a temp table with one goes to Aria.
    pub fn is_blob(&self) -> bool {
        matches!(
            self,
            ColumnType::Text | ColumnType::MediumText | ColumnType::Blob
        )
    }

    pub fn sql(&self) -> String {
        match self {
            ColumnType::Int => "INT".into(),
            ColumnType::BigInt => "BIGINT".into(),
            ColumnType::SmallUnsigned => "SMALLINT UNSIGNED".into(),
            ColumnType::Bool => "TINYINT(1)".into(),
            ColumnType::Double => "DOUBLE".into(),
            ColumnType::Decimal(p, s) => format!("DECIMAL({p},{s})"),
            ColumnType::Varchar(n) => format!("VARCHAR({n})"),
            ColumnType::Char(n) => format!("CHAR({n})"),
            ColumnType::Text => "TEXT".into(),
            ColumnType::MediumText => "MEDIUMTEXT".into(),
            ColumnType::Blob => "BLOB".into(),
            ColumnType::DateTime => "DATETIME".into(),
            ColumnType::Date => "DATE".into(),
            ColumnType::Enum(values) => {
                let v: Vec<String> = values.iter().map(|v| format!("'{v}'")).collect();
                format!("ENUM({})", v.join(","))
            }
        }
    }

    /// A value as an SQL literal, drawn from about `distinct` different values (so that
    /// grouping finds groups).
    fn value(&self, rng: &mut Rng, distinct: u64) -> String {
        let k = rng.range(0, distinct.max(1) - 1);
        match self {
            ColumnType::Int => (k as i64 * 37 - 500).to_string(),
            ColumnType::BigInt => (k * 1_000_003 + 7_000_000_000).to_string(),
            ColumnType::SmallUnsigned => (k * 11 % 65_536).to_string(),
            ColumnType::Bool => (k % 2).to_string(),
            ColumnType::Double => format!("{}.25", k as i64 - 20),
            ColumnType::Decimal(p, s) => {
                let int_digits = u32::from(p - s).min(6);
                let int = k * 97 % 10u64.pow(int_digits);
                if *s == 0 {
                    int.to_string()
                } else {
                    format!("{int}.{:0width$}", k % 10, width = *s as usize)
                }
            }
            ColumnType::Varchar(n) => quote(&word_string(k, usize::from(*n).min(40))),
            ColumnType::Char(n) => quote(&word_string(k, usize::from(*n))),
            ColumnType::Text | ColumnType::MediumText => quote(&format!(
                "{} {}",
                WORDS[k as usize % WORDS.len()],
                "lorem ".repeat(8)
            )),
            ColumnType::Blob => format!("X'{:016x}'", k.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            ColumnType::DateTime => format!(
                "'2023-{:02}-{:02} {:02}:{:02}:00'",
                k % 12 + 1,
                k % 28 + 1,
                k % 24,
                k * 7 % 60
            ),
            ColumnType::Date => format!("'2022-{:02}-{:02}'", k % 12 + 1, k % 28 + 1),
            ColumnType::Enum(values) => quote(values[k as usize % values.len()]),
        }
    }
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A deterministic string of at most `max` characters for value number `k`.
fn word_string(k: u64, max: usize) -> String {
    let mut s = format!("{}-{k}", WORDS[k as usize % WORDS.len()]);
    s.truncate(max);
    s
}

const WORDS: &[&str] = &[
    "account",
    "address",
    "invoice",
    "order",
    "product",
    "customer",
    "payment",
    "shipment",
    "category",
    "review",
    "session",
    "audit",
    "message",
    "setting",
    "tag",
    "coupon",
    "warehouse",
    "supplier",
    "employee",
    "report",
];

#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    pub ty: ColumnType,
    pub comment: String,
}

#[derive(Debug, Clone)]
pub struct Index {
    pub name: String,
    pub unique: bool,
    /// Column names, each with a prefix length for TEXT/BLOB.
    pub parts: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Table {
    pub name: String,
    pub comment: String,
    /// After `id`; the first two are `g` and `h`.
    pub columns: Vec<Column>,
    /// Secondary indexes (the primary key on `id` is always there).
    pub indexes: Vec<Index>,
    /// Rows as SQL value lists, without `id` (AUTO_INCREMENT numbers them).
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn create_sql(&self) -> String {
        let mut defs =
            vec!["`id` INT UNSIGNED NOT NULL AUTO_INCREMENT COMMENT 'row id'".to_string()];
        for c in &self.columns {
            defs.push(format!(
                "`{}` {} COMMENT {}",
                c.name,
                c.ty.sql(),
                quote(&c.comment)
            ));
        }
        defs.push("PRIMARY KEY (`id`)".into());
        for i in &self.indexes {
            defs.push(format!(
                "{}KEY `{}` ({})",
                if i.unique { "UNIQUE " } else { "" },
                i.name,
                i.parts.join(", ")
            ));
        }
        format!(
            "CREATE TABLE `{}` (\n  {}\n) ENGINE=InnoDB COMMENT={}",
            self.name,
            defs.join(",\n  "),
            quote(&self.comment)
        )
    }

    /// One multi-row INSERT, or none for an empty table.
    pub fn insert_sql(&self) -> Option<String> {
        if self.rows.is_empty() {
            return None;
        }
        let names: Vec<String> = self
            .columns
            .iter()
            .map(|c| format!("`{}`", c.name))
            .collect();
        let rows: Vec<String> = self
            .rows
            .iter()
            .map(|r| format!("({})", r.join(", ")))
            .collect();
        Some(format!(
            "INSERT INTO `{}` ({}) VALUES {}",
            self.name,
            names.join(", "),
            rows.join(", ")
        ))
    }
}

#[derive(Debug, Clone)]
pub struct Schema {
    pub tables: Vec<Table>,
}

impl Schema {
    /// The benchmark's schema.
    pub fn standard() -> Schema {
        Schema::generate(SEED, TABLES)
    }

    pub fn generate(seed: u64, tables: usize) -> Schema {
        let mut rng = Rng::new(seed);
        let tables = (0..tables).map(|i| table(&mut rng, i)).collect();
        Schema { tables }
    }

    /// Every statement that creates and fills the schema, in order.
    pub fn load_sql(&self) -> Vec<String> {
        let mut out = Vec::new();
        for t in &self.tables {
            out.push(format!("DROP TABLE IF EXISTS `{}`", t.name));
            out.push(t.create_sql());
            out.extend(t.insert_sql());
        }
        out
    }
}

fn table(rng: &mut Rng, i: usize) -> Table {
    let word = *rng.pick(WORDS);
    let name = format!("{word}_{i:02}");
    let extra = rng.range(1, 11) as usize;
    let mut columns = vec![
        Column {
            name: "g".into(),
            ty: ColumnType::random(rng, true),
            comment: format!("the {word}'s group"),
        },
        Column {
            name: "h".into(),
            ty: ColumnType::random(rng, true),
            comment: format!("the {word}'s kind"),
        },
    ];
    for c in 0..extra {
        let ty = ColumnType::random(rng, false);
        columns.push(Column {
            name: format!("{}_{c}", rng.pick(WORDS)),
            comment: format!("{} of the {word}", ty.sql().to_lowercase()),
            ty,
        });
    }
    // Secondary indexes over the columns after g and h: 0 to 3, so 1 to 4 with the primary key.
    let mut indexes = Vec::new();
    let candidates = &columns[2..];
    let wanted = rng.range(0, 3) as usize;
    for k in 0..wanted.min(candidates.len()) {
        let width = rng.range(1, 2).min(candidates.len() as u64) as usize;
        let start = rng.range(0, (candidates.len() - width) as u64) as usize;
        let parts: Vec<String> = candidates[start..start + width]
            .iter()
            .map(|c| {
                if c.ty.is_blob() {
                    format!("`{}`(20)", c.name)
                } else {
                    format!("`{}`", c.name)
                }
            })
            .collect();
        indexes.push(Index {
            name: format!("ix_{k}"),
            unique: false,
            parts,
        });
    }
    // About one table in six is empty; the others get up to 200 rows.
    let n_rows = if rng.chance(16) { 0 } else { rng.range(1, 200) };
    let distinct = rng.range(3, 40);
    let rows = (0..n_rows)
        .map(|_| columns.iter().map(|c| c.ty.value(rng, distinct)).collect())
        .collect();
    Table {
        comment: format!("{word}s, table {i} of the application"),
        name,
        columns,
        indexes,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_deterministic_and_varied() {
        let a = Schema::standard();
        let b = Schema::standard();
        assert_eq!(a.load_sql(), b.load_sql());
        assert_eq!(a.tables.len(), TABLES);
        let all_sql = a.load_sql().join("\n");
        for ty in [
            "VARCHAR", "TEXT", "BLOB", "DECIMAL", "DATETIME", "ENUM", "COMMENT",
        ] {
            assert!(all_sql.contains(ty), "no {ty} in the schema");
        }
        assert!(a.tables.iter().all(|t| t.indexes.len() <= 3));
        assert!(a.tables.iter().any(|t| t.indexes.len() == 3));
        assert!(a.tables.iter().any(|t| t.rows.is_empty()));
        assert!(a.tables.iter().filter(|t| !t.rows.is_empty()).count() > TABLES / 2);
        let names: std::collections::BTreeSet<_> = a.tables.iter().map(|t| &t.name).collect();
        assert_eq!(names.len(), TABLES, "table names are unique");
    }
}
