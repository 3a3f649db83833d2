//! Running SQL through the `mysql` crate and rendering results as text for snapshots.

use anyhow::{bail, Result};
use mysql::prelude::Queryable;
use mysql::{Row, Value};

/// One value as the `mysql` command-line client prints it in batch mode.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::NULL => "NULL".into(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Double(d) => d.to_string(),
        other => other.as_sql(true),
    }
}

/// Runs `sql` and returns its column names and its rows, each value as [`value_text`] gives it.
pub fn query_cells(
    conn: &mut impl Queryable,
    sql: &str,
) -> Result<(Vec<String>, Vec<Vec<String>>)> {
    let mut result = conn.query_iter(sql)?;
    let names: Vec<String> = result
        .columns()
        .as_ref()
        .iter()
        .map(|c| c.name_str().into_owned())
        .collect();
    let mut rows = Vec::new();
    for row in result.by_ref() {
        let row: Row = row?;
        rows.push((0..row.len()).map(|i| value_text(&row[i])).collect());
    }
    Ok((names, rows))
}

/// Runs `sql` and renders its result set: a header line of column names, then one
/// tab-separated line per row.
pub fn query_text(conn: &mut impl Queryable, sql: &str) -> Result<String> {
    let (names, rows) = query_cells(conn, sql)?;
    let mut out = names.join("\t");
    out.push('\n');
    for cells in rows {
        out.push_str(&cells.join("\t"));
        out.push('\n');
    }
    Ok(out)
}

/// A statement and its result or error, as a session transcript for a snapshot.
pub fn transcript(conn: &mut impl Queryable, statements: &[&str]) -> String {
    let mut out = String::new();
    for s in statements {
        out.push_str(s);
        out.push('\n');
        match query_text(conn, s) {
            Ok(text) if text.trim().is_empty() => {}
            Ok(text) => out.push_str(&text),
            Err(e) => out.push_str(&format!("ERROR: {}\n", error_text(&e))),
        }
    }
    out
}

/// A server error as `CODE: message`, without the client's decoration.
pub fn error_text(e: &anyhow::Error) -> String {
    match e.downcast_ref::<mysql::Error>() {
        Some(mysql::Error::MySqlError(m)) => format!("{}: {}", m.code, m.message),
        _ => format!("{e:#}"),
    }
}

/// Whether the server has the RHEAP engine loaded and usable.
pub fn rheap_available(conn: &mut impl Queryable) -> Result<bool> {
    let n: Option<u64> = conn.query_first(
        "SELECT COUNT(*) FROM information_schema.ENGINES WHERE ENGINE = 'RHEAP' AND SUPPORT IN ('YES', 'DEFAULT')",
    )?;
    Ok(n == Some(1))
}

/// The statements of a script written one per line: lines starting with `--` and blank lines
/// are skipped, and a statement ends at a line ending with `;` (which is dropped).
pub fn statements(script: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in script.lines().map(str::trim) {
        if line.is_empty() || line.starts_with("--") {
            continue;
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(line);
        if let Some(done) = current.strip_suffix(';') {
            out.push(done.to_string());
            current.clear();
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The global status variable `name` (`SHOW GLOBAL STATUS`), 0 when the server has none.
pub fn global_status(conn: &mut impl Queryable, name: &str) -> Result<u64> {
    status(conn, "GLOBAL", name)
}

/// This session's status variable `name` (`SHOW SESSION STATUS`), 0 when there is none.
pub fn session_status(conn: &mut impl Queryable, name: &str) -> Result<u64> {
    status(conn, "SESSION", name)
}

/// performance_schema's current bytes of the memory instrument `event`, and the sum of the
/// global status variables `names`, read in one statement, again until two reads give the
/// same pair (at most five reads).
///
/// Reading takes memory itself: SHOW STATUS and information_schema.GLOBAL_STATUS fill an
/// internal table, which rheap serves under takeover, and a count read while it is open and
/// one read after its close differ by what its close allocates or frees (rheap keeps the table
/// for a later statement: in 3,000 pairs read in two statements, the first two differed and
/// one more, by 4,096 bytes).
/// In one statement, performance_schema's value is read first, before that table's rows are
/// filled: it misses a block the table takes on its first use, which a second read finds with
/// the table kept from the first, and then no read differs (none of 20,000 pairs).
pub fn memory_and_status(
    conn: &mut impl Queryable,
    event: &str,
    names: &[&str],
) -> Result<(u64, u64)> {
    let names = names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "SELECT (SELECT CURRENT_NUMBER_OF_BYTES_USED \
         FROM performance_schema.memory_summary_global_by_event_name \
         WHERE EVENT_NAME = '{event}'), \
         (SELECT COALESCE(SUM(CAST(VARIABLE_VALUE AS UNSIGNED)), 0) \
         FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ({names}))"
    );
    // performance_schema's subquery is NULL when the instrument is not there (or not enabled).
    let read = |conn: &mut _| -> Result<(u64, u64)> {
        let row: Option<(Option<u64>, u64)> = Queryable::query_first(conn, &sql)?;
        match row {
            Some((Some(ps), status)) => Ok((ps, status)),
            _ => bail!("no memory instrument {event} in performance_schema"),
        }
    };
    let mut last = read(conn)?;
    for _ in 1..5 {
        let now = read(conn)?;
        if now == last {
            break;
        }
        last = now;
    }
    Ok(last)
}

fn status(conn: &mut impl Queryable, scope: &str, name: &str) -> Result<u64> {
    let row: Option<(String, u64)> =
        conn.query_first(format!("SHOW {scope} STATUS LIKE '{name}'"))?;
    Ok(row.map_or(0, |(_, n)| n))
}

#[cfg(test)]
mod tests {
    use super::statements;

    #[test]
    fn a_script_splits_at_line_ends_after_semicolons() {
        let script = "-- a comment\nSELECT 1;\n\nSELECT 'a;b',\n  2;\nSELECT 3";
        assert_eq!(
            statements(script),
            ["SELECT 1", "SELECT 'a;b', 2", "SELECT 3"]
        );
    }
}
