//! How key columns of a character type compare: the column's collation.
//!
//! The engine never interprets characters itself. In the server every string key column
//! carries the server's own `CHARSET_INFO`, reached through the shim (the plugin's `ffi::charset`); the core
//! only sees this trait, so it is tested here with small collations of its own.
//!
//! Indexes compare *weight images*: the collation's `strnxfrm` output for a column, padded to
//! a fixed width, so that two strings are equal under the collation exactly when their images
//! are equal, and ordered as their images compare byte by byte. This is how the server's own
//! filesort orders strings, and it lets both index kinds work on plain byte strings.

use std::fmt;
use std::sync::Arc;

/// One collation (a server `CHARSET_INFO`).
pub trait Collation: fmt::Debug + Send + Sync {
    /// Whether this is the `binary` pseudo-collation: bytes compare as bytes and, on equal
    /// prefixes, the shorter string sorts first (no padding).
    fn is_binary(&self) -> bool;
    /// Most bytes one character takes (`mbmaxlen`).
    fn mbmaxlen(&self) -> usize;
    /// Bytes taken by the first `chars` characters of `s`, at most `s.len()` (`charpos`).
    fn charpos(&self, s: &[u8], chars: usize) -> usize;
    /// Bytes of the weight image of a column of `len` bytes (`strnxfrmlen`).
    fn weights_len(&self, len: usize) -> usize;
    /// Fills all of `out` with the weights of `s`, which holds at most `chars` characters,
    /// padded as the collation pads (`strnxfrm` with PAD_WITH_SPACE | PAD_TO_MAXLEN).
    fn weights(&self, s: &[u8], chars: usize, out: &mut [u8]);
    /// Writes the weights of the characters of `s` (at most `chars`) to the start of `out`,
    /// without padding, and returns their bytes; None when the collation weighs on more than
    /// one level, or cannot say. Where it answers, two strings are equal exactly when these
    /// weights are: as they are under NO PAD, and under PAD SPACE once trailing spaces are
    /// cut from the strings ([`trim_spaces`](Self::trim_spaces)) and trailing spaces'
    /// weights from the weights.
    fn weights_unpadded(&self, s: &[u8], chars: usize, out: &mut [u8]) -> Option<usize> {
        let _ = (s, chars, out);
        None
    }
    /// Whether trailing spaces do not count (PAD SPACE), as in every collation but the NO PAD
    /// ones.
    fn pads_with_space(&self) -> bool {
        true
    }
    /// A space character in the collation's character set (U+0020; two or four bytes in
    /// UCS-2, UTF-16 and UTF-32).
    fn space(&self) -> &[u8] {
        b" "
    }
    /// The bytes of `s` without the spaces it ends in (`lengthsp`).
    fn trim_spaces(&self, s: &[u8]) -> usize {
        s.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1)
    }
    /// Mixes `s` into HEAP's running hash (`hash_sort`).
    fn hash(&self, s: &[u8], nr1: &mut u64, nr2: &mut u64);
    /// For an 8-bit collation whose weights are one byte per byte, looked up in a table (and
    /// padded with the weight of a space): the table. [`weights`](Self::weights) of `n`
    /// bytes into `n` bytes is then the table applied to each byte.
    fn byte_weights(&self) -> Option<&'static [u8; 256]> {
        None
    }
}

/// A shared collation handle, as key segments hold it.
pub type CollationRef = Arc<dyn Collation>;

/// HEAP's byte-wise hash step (`hp_rec_hashnr` for columns that are not strings).
pub fn hash_byte(nr: &mut u64, nr2: &mut u64, byte: u8) {
    *nr ^= ((*nr & 63).wrapping_add(*nr2))
        .wrapping_mul(u64::from(byte))
        .wrapping_add(*nr << 8);
    *nr2 = nr2.wrapping_add(3);
}

/// Collations for tests of the core: `binary`, and an ASCII case-insensitive PAD SPACE one.
#[cfg(test)]
pub mod testing {
    use super::*;

    /// A single-byte collation for tests: `binary` (bytes as they are, no padding), or ASCII
    /// letters without case and trailing spaces not counting (PAD SPACE).
    #[derive(Debug)]
    pub struct Simple {
        binary: bool,
        /// Trailing spaces do not count (PAD SPACE).
        pad: bool,
        /// Weighs on one level (gives unpadded weights).
        one_level: bool,
    }

    /// `binary`.
    #[allow(non_upper_case_globals)]
    pub const Binary: Simple = Simple {
        binary: true,
        pad: false,
        one_level: true,
    };
    /// ASCII case-insensitive, PAD SPACE.
    #[allow(non_upper_case_globals)]
    pub const AsciiCi: Simple = Simple {
        binary: false,
        pad: true,
        one_level: true,
    };
    /// ASCII case-insensitive, NO PAD: trailing spaces count.
    #[allow(non_upper_case_globals)]
    pub const AsciiCiNoPad: Simple = Simple {
        binary: false,
        pad: false,
        one_level: true,
    };
    /// As [`AsciiCi`], but as a collation that weighs on more than one level would answer: no
    /// unpadded weights.
    #[allow(non_upper_case_globals)]
    pub const TwoLevels: Simple = Simple {
        binary: false,
        pad: true,
        one_level: false,
    };

    /// ASCII letters without case, as a weight table.
    static UPPER: [u8; 256] = {
        let mut t = [0u8; 256];
        let mut i = 0;
        while i < 256 {
            t[i] = (i as u8).to_ascii_uppercase();
            i += 1;
        }
        t
    };

    impl Simple {
        fn weight(&self, b: u8) -> u8 {
            if self.binary {
                b
            } else {
                b.to_ascii_uppercase()
            }
        }
    }

    impl Collation for Simple {
        fn is_binary(&self) -> bool {
            self.binary
        }
        fn mbmaxlen(&self) -> usize {
            1
        }
        fn charpos(&self, s: &[u8], chars: usize) -> usize {
            chars.min(s.len())
        }
        fn weights_len(&self, len: usize) -> usize {
            len
        }
        fn weights(&self, s: &[u8], _chars: usize, out: &mut [u8]) {
            out.fill(if self.binary { 0 } else { b' ' });
            for (o, &b) in out.iter_mut().zip(s) {
                *o = self.weight(b);
            }
        }
        fn byte_weights(&self) -> Option<&'static [u8; 256]> {
            (!self.binary && self.pad && self.one_level).then_some(&UPPER)
        }
        fn pads_with_space(&self) -> bool {
            self.pad
        }
        fn weights_unpadded(&self, s: &[u8], chars: usize, out: &mut [u8]) -> Option<usize> {
            if self.binary || !self.one_level {
                return None;
            }
            let n = s.len().min(chars).min(out.len());
            for (o, &b) in out.iter_mut().zip(&s[..n]) {
                *o = self.weight(b);
            }
            Some(n)
        }
        fn hash(&self, s: &[u8], nr1: &mut u64, nr2: &mut u64) {
            let end = if !self.pad {
                s.len()
            } else {
                s.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1)
            };
            for &b in &s[..end] {
                hash_byte(nr1, nr2, self.weight(b));
            }
        }
    }

    /// ASCII without case and PAD SPACE, as a multi-byte collation states its sizes
    /// (`utf8mb4_unicode_ci`-like: up to 4 bytes a character, 3 bytes of weight a
    /// character): the weights of a column of `len` bytes are those of `len / 4` characters.
    #[derive(Debug)]
    pub struct Wide;

    impl Collation for Wide {
        fn is_binary(&self) -> bool {
            false
        }
        fn mbmaxlen(&self) -> usize {
            4
        }
        fn charpos(&self, s: &[u8], chars: usize) -> usize {
            chars.min(s.len())
        }
        fn weights_len(&self, len: usize) -> usize {
            len.div_ceil(4) * 3
        }
        fn weights(&self, s: &[u8], _chars: usize, out: &mut [u8]) {
            out.fill(0);
            let pad = s.iter().copied().chain(std::iter::repeat(b' '));
            for (o, b) in out.chunks_mut(3).zip(pad) {
                o[o.len() - 1] = b.to_ascii_uppercase();
            }
        }
        fn weights_unpadded(&self, s: &[u8], chars: usize, out: &mut [u8]) -> Option<usize> {
            let n = s.len().min(chars).min(out.len() / 3);
            out[..3 * n].fill(0);
            for (o, b) in out.chunks_mut(3).zip(&s[..n]) {
                o[2] = b.to_ascii_uppercase();
            }
            Some(3 * n)
        }
        fn hash(&self, s: &[u8], nr1: &mut u64, nr2: &mut u64) {
            let end = s.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
            for &b in &s[..end] {
                hash_byte(nr1, nr2, b.to_ascii_uppercase());
            }
        }
    }
}
