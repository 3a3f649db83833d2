//! What one statement did, as the fuzzer compares it: the rows (every value as text), the
//! affected rows and the server's info line, the warnings, or the error.

use anyhow::Result;
use mysql::prelude::Queryable;
use mysql::{Conn, Row};
use rheap_harness::sql::value_text;
use std::collections::HashMap;
use std::fmt;

/// The result of one statement.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Outcome {
    pub rows: Vec<Vec<String>>,
    pub affected: u64,
    /// The server's info line ("Records: 3  Duplicates: 1  Warnings: 0").
    pub info: String,
    /// `SHOW WARNINGS`, one line each.
    pub warnings: Vec<String>,
    /// The error as `code: message`.
    pub error: Option<String>,
}

impl Outcome {
    /// Runs `sql` on `conn`. Server errors are part of the outcome; a lost connection is an
    /// `Err`.
    pub fn of(conn: &mut Conn, sql: &str) -> Result<Outcome> {
        let mut out = Outcome::default();
        let run = (|| -> mysql::Result<()> {
            let mut result = conn.query_iter(sql)?;
            for row in result.by_ref() {
                let row: Row = row?;
                out.rows
                    .push((0..row.len()).map(|i| value_text(&row[i])).collect());
            }
            out.affected = result.affected_rows();
            out.info = result.info_str().into_owned();
            Ok(())
        })();
        match run {
            Ok(()) => {}
            Err(mysql::Error::MySqlError(e)) => {
                out.error = Some(format!("{}: {}", e.code, e.message));
            }
            Err(e) => return Err(e.into()),
        }
        if conn.warnings() > 0 || out.error.is_some() {
            let w: Vec<Row> = conn.query("SHOW WARNINGS")?;
            out.warnings = w
                .iter()
                .map(|r| {
                    (0..r.len())
                        .map(|i| value_text(&r[i]))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect();
        }
        Ok(out)
    }

    /// The outcome with every occurrence of `from` (a table name) written as `to`.
    pub fn renamed(mut self, from: &str, to: &str) -> Outcome {
        let fix = |s: &mut String| {
            if s.contains(from) {
                *s = s.replace(from, to);
            }
        };
        self.rows.iter_mut().flatten().for_each(fix);
        self.warnings.iter_mut().for_each(fix);
        if let Some(e) = &mut self.error {
            fix(e);
        }
        fix(&mut self.info);
        self
    }

    /// Rows read in an order that is defined only up to rows with equal keys (an index scan
    /// in key order, where MEMORY orders equal keys by the rows' addresses): within each run
    /// of rows whose key (`weight_of` by the row's first column, `id`) is the same, rows are
    /// sorted, so that two engines' reads compare equal exactly when they return the same rows
    /// in the same key order.
    pub fn canonical_by_key(mut self, weight_of: &HashMap<String, String>) -> Outcome {
        let weight = |row: &Vec<String>| weight_of.get(&row[0]).cloned().unwrap_or_default();
        let mut start = 0;
        while start < self.rows.len() {
            let w = weight(&self.rows[start]);
            let mut end = start + 1;
            while end < self.rows.len() && weight(&self.rows[end]) == w {
                end += 1;
            }
            self.rows[start..end].sort();
            start = end;
        }
        self
    }

    /// Each row replaced by its key's weight (`weight_of` by the row's `id`): for reads whose
    /// rows among equal keys are the engine's choice (a LIMIT or a HANDLER read landing among
    /// duplicates), only where they land in key order is compared.
    pub fn key_positions(mut self, weight_of: &HashMap<String, String>) -> Outcome {
        for row in &mut self.rows {
            let w = weight_of.get(&row[0]).cloned().unwrap_or_default();
            *row = vec![w];
        }
        self
    }

    /// The rows as a multiset (sorted), for results whose order SQL leaves undefined.
    pub fn unordered(mut self) -> Outcome {
        self.rows.sort();
        self
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(e) = &self.error {
            writeln!(f, "ERROR {e}")?;
        }
        for row in &self.rows {
            writeln!(f, "{}", row.join("\t"))?;
        }
        if self.rows.is_empty() && self.error.is_none() {
            writeln!(f, "(affected {}; {})", self.affected, self.info)?;
        }
        for w in &self.warnings {
            writeln!(f, "warning: {w}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(rs: &[&[&str]]) -> Outcome {
        Outcome {
            rows: rs
                .iter()
                .map(|r| r.iter().map(|s| s.to_string()).collect())
                .collect(),
            ..Outcome::default()
        }
    }

    #[test]
    fn equal_keys_may_come_in_any_order_but_keys_may_not() {
        let w: HashMap<String, String> = [("1", "a"), ("2", "a"), ("3", "b")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let a = rows(&[&["1", "x"], &["2", "y"], &["3", "z"]]).canonical_by_key(&w);
        let b = rows(&[&["2", "y"], &["1", "x"], &["3", "z"]]).canonical_by_key(&w);
        assert_eq!(a, b);
        let c = rows(&[&["3", "z"], &["1", "x"], &["2", "y"]]).canonical_by_key(&w);
        assert_ne!(a, c);
        let p = rows(&[&["1", "x"], &["3", "z"]]).key_positions(&w);
        let q = rows(&[&["2", "y"], &["3", "z"]]).key_positions(&w);
        assert_eq!(p, q);
    }

    #[test]
    fn renaming_reaches_errors_and_rows() {
        let o = Outcome {
            rows: vec![vec!["t_r".into()]],
            error: Some("1114: The table 't_r' is full".into()),
            ..Outcome::default()
        };
        let o = o.renamed("t_r", "t");
        assert_eq!(o.error.as_deref(), Some("1114: The table 't' is full"));
        assert_eq!(o.rows[0][0], "t");
    }
}
