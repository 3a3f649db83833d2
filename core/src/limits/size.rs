//! A table's limits, as the server's settings and the table's definition give them, and what
//! makes it full.

/// What decides that a table is full (`rheap_table_size_limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LimitBy {
    /// The bytes rheap really holds for the table ([`crate::alloc::Meter`]): never more than
    /// the limit.
    #[default]
    Actual,
    /// The bytes HEAP would hold ([`HeapLedger`](super::HeapLedger)): full at MEMORY's own row, for parity runs.
    Heap,
}

/// What makes a table full, from `rheap_table_size_limit` (`setting`) and whether the table is
/// an ENGINE=MEMORY one served under `rheap_takeover=ALL` (`memory`): such a table is full at
/// MEMORY's own row whatever the setting ([`LimitBy::Heap`]), so that it holds every row MEMORY
/// would (a DBA sized it for MEMORY, whose blocks fill differently from rheap's); the setting
/// decides for RHEAP tables and internal ones.
pub fn limit_by(setting: LimitBy, memory: bool) -> LimitBy {
    if memory {
        LimitBy::Heap
    } else {
        setting
    }
}

/// A table's limits, as the server's settings and the table's definition give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeLimits {
    /// The most bytes the table may take.
    pub max_table_size: u64,
    /// The row count limit (MAX_ROWS), 0 for none.
    pub max_rows: u64,
}

/// The limits of a table, from its creating session's `max_heap_table_size` and
/// `tmp_memory_table_size`, and the MAX_ROWS of its share.
///
/// Under [`LimitBy::Heap`], as MEMORY has them: `max_heap_table_size` and MAX_ROWS; for an
/// internal table with BLOBs also at most `tmp_memory_table_size` (its BLOBs count against the
/// server's in-memory limit for internal tables, as its rows do through the MAX_ROWS the
/// server derives from that limit: past it, the server moves the table to Aria).
///
/// Under [`LimitBy::Actual`], an internal table's limit is the server's in-memory limit for
/// it, `tmp_memory_table_size` within `max_heap_table_size`, on its real bytes, and the
/// MAX_ROWS of its share has nothing more to say: the server derives it from that same limit
/// and HEAP's fixed row (or from a LIMIT, which the server stops at itself). A named table
/// keeps `max_heap_table_size` and the MAX_ROWS its creator gave.
pub fn size_limits(
    limit_by: LimitBy,
    max_heap_table_size: u64,
    tmp_memory_table_size: u64,
    max_rows: u64,
    internal: bool,
    has_blobs: bool,
) -> SizeLimits {
    let server_limit = max_heap_table_size.min(tmp_memory_table_size);
    match (limit_by, internal) {
        (LimitBy::Actual, true) => SizeLimits {
            max_table_size: server_limit,
            max_rows: 0,
        },
        (LimitBy::Heap, true) if has_blobs => SizeLimits {
            max_table_size: server_limit,
            max_rows,
        },
        _ => SizeLimits {
            max_table_size: max_heap_table_size,
            max_rows,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_tables_fill_at_memorys_row_whatever_the_setting() {
        for setting in [LimitBy::Actual, LimitBy::Heap] {
            assert_eq!(limit_by(setting, true), LimitBy::Heap);
            assert_eq!(limit_by(setting, false), setting);
        }
    }

    #[test]
    fn blobs_of_internal_tables_count_against_the_internal_limit() {
        let (heap, tmp) = (16 << 20, 8 << 20);
        let size = |tmp, internal, blobs| {
            size_limits(LimitBy::Heap, heap, tmp, 7, internal, blobs).max_table_size
        };
        assert_eq!(size(tmp, true, true), tmp);
        assert_eq!(size(32 << 20, true, true), heap);
        assert_eq!(size(tmp, true, false), heap);
        assert_eq!(size(tmp, false, true), heap);
    }

    #[test]
    fn under_actual_an_internal_table_has_the_servers_limit_on_its_bytes_alone() {
        let (heap, tmp) = (16 << 20, 8 << 20);
        for blobs in [false, true] {
            assert_eq!(
                size_limits(LimitBy::Actual, heap, tmp, 1234, true, blobs),
                SizeLimits {
                    max_table_size: tmp,
                    max_rows: 0
                }
            );
        }
        // A named table keeps max_heap_table_size and its MAX_ROWS.
        assert_eq!(
            size_limits(LimitBy::Actual, heap, tmp, 5, false, false),
            SizeLimits {
                max_table_size: heap,
                max_rows: 5
            }
        );
    }
}
