//! The note a refused block leaves for the write that asked for it: a block refused by a limit
//! (the table's own, [`super::meter`], or the server-wide budget, [`super::budget`]) and not by
//! the system makes the write's `OutOfMemory` a table that is full, as HEAP's "table is full".
//! A table changes only under its write lock, so the note is the running thread's.

use std::cell::Cell;

thread_local! {
    /// A block this thread asked for was refused by a limit, and no write has answered for it
    /// yet ([`take`]).
    static REFUSED: Cell<bool> = const { Cell::new(false) };
}

/// Notes that a limit refused this thread's block.
pub(crate) fn note() {
    REFUSED.with(|r| r.set(true));
}

/// Whether an allocation this thread could not make since the last call was refused by a
/// limit (and not by the system). Forgets it.
pub fn take() -> bool {
    REFUSED.with(|r| r.replace(false))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_note_is_answered_once() {
        assert!(!super::take());
        super::note();
        assert!(super::take());
        assert!(!super::take(), "forgotten once answered");
    }
}
