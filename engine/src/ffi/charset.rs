//! The server's collations, reached through the shim: [`ServerCollation`] implements the core's
//! [`Collation`] with a column's own `CHARSET_INFO`, so keys compare exactly as the server
//! compares strings.

use rheap_core::key::collation::Collation;
use rheap_sys::shim;
use std::ffi::c_void;

#[derive(Debug)]
pub struct ServerCollation {
    cs: *const c_void,
    mbmaxlen: usize,
    binary: bool,
    /// The column's bytes and the weight image's bytes for them (asked for on every image).
    width: (usize, usize),
    /// For an 8-bit collation that weighs each byte by a table, the table (the server's).
    map: Option<&'static [u8; 256]>,
    /// Weighs on one level: unpadded weights decide equality (see
    /// [`Collation::weights_unpadded`]).
    one_level: bool,
    /// PAD SPACE (not NO PAD).
    pads_with_space: bool,
    /// A space in the character set: its bytes and their count.
    space: ([u8; 8], usize),
}

// SAFETY: a CHARSET_INFO is immutable, static server data, used from every thread by the server
// itself; its functions keep no state between calls.
unsafe impl Send for ServerCollation {}
// SAFETY: as above.
unsafe impl Sync for ServerCollation {}

impl ServerCollation {
    /// The collation of a key segment of `len` bytes.
    ///
    /// # Safety
    /// `cs` must be a `CHARSET_INFO` of the running server (they live until shutdown).
    pub unsafe fn new(
        cs: *const c_void,
        mbmaxlen: usize,
        binary: bool,
        len: usize,
    ) -> ServerCollation {
        let mut c = ServerCollation {
            cs,
            mbmaxlen: mbmaxlen.max(1),
            binary,
            width: (usize::MAX, 0),
            map: None,
            // SAFETY: a live CHARSET_INFO (this function's contract).
            one_level: unsafe { shim::rheap_cs_one_level(cs) } != 0,
            // SAFETY: as above.
            pads_with_space: unsafe { shim::rheap_cs_pads_with_space(cs) } != 0,
            space: ([0; 8], 0),
        };
        // SAFETY: a live CHARSET_INFO; the buffer is writable for its 8 bytes.
        c.space.1 = unsafe { shim::rheap_cs_space(cs, c.space.0.as_mut_ptr(), 8) }.min(8);
        // Without a space of its own, no weight of a space: its weights are always padded.
        c.one_level &= c.space.1 != 0;
        c.width = (len, c.weights_len(len));
        // SAFETY: a live CHARSET_INFO (this function's contract). The table it returns is the
        // collation's sort_order: 256 bytes of static server data, alive until shutdown.
        c.map = unsafe { shim::rheap_cs_weight_map(cs).cast::<[u8; 256]>().as_ref() };
        c
    }
}

impl Collation for ServerCollation {
    fn is_binary(&self) -> bool {
        self.binary
    }

    fn mbmaxlen(&self) -> usize {
        self.mbmaxlen
    }

    fn charpos(&self, s: &[u8], chars: usize) -> usize {
        // SAFETY: a live CHARSET_INFO (constructor contract); `s` is readable for its length.
        let n = unsafe { shim::rheap_cs_charpos(self.cs, s.as_ptr(), s.len(), chars) };
        n.min(s.len())
    }

    fn weights_len(&self, len: usize) -> usize {
        if len == self.width.0 {
            return self.width.1;
        }
        // SAFETY: a live CHARSET_INFO (constructor contract).
        unsafe { shim::rheap_cs_strnxfrmlen(self.cs, len) }
    }

    fn weights(&self, s: &[u8], chars: usize, out: &mut [u8]) {
        if let Some(map) = self
            .map
            .filter(|_| out.len() == s.len() && chars >= s.len())
        {
            // What strnxfrm does for these collations when nothing is left to pad.
            out.iter_mut()
                .zip(s)
                .for_each(|(o, &b)| *o = map[usize::from(b)]);
            return;
        }
        // SAFETY: a live CHARSET_INFO; `out` is writable and `s` readable for their lengths.
        unsafe {
            shim::rheap_cs_strnxfrm(
                self.cs,
                out.as_mut_ptr(),
                out.len(),
                chars,
                s.as_ptr(),
                s.len(),
            )
        }
    }

    fn byte_weights(&self) -> Option<&'static [u8; 256]> {
        self.map
    }

    fn space(&self) -> &[u8] {
        &self.space.0[..self.space.1]
    }

    fn pads_with_space(&self) -> bool {
        self.pads_with_space
    }

    fn trim_spaces(&self, s: &[u8]) -> usize {
        // SAFETY: a live CHARSET_INFO (constructor contract); `s` is readable for its length.
        unsafe { shim::rheap_cs_lengthsp(self.cs, s.as_ptr(), s.len()) }.min(s.len())
    }

    fn weights_unpadded(&self, s: &[u8], chars: usize, out: &mut [u8]) -> Option<usize> {
        if !self.one_level {
            return None;
        }
        if let Some(map) = self.map {
            // What strnxfrm does for these collations: one weight a byte, up to `chars`.
            let n = s.len().min(chars).min(out.len());
            out.iter_mut()
                .zip(&s[..n])
                .for_each(|(o, &b)| *o = map[usize::from(b)]);
            return Some(n);
        }
        // SAFETY: a live CHARSET_INFO; `out` is writable and `s` readable for their lengths.
        let n = unsafe {
            shim::rheap_cs_strnxfrm_unpadded(
                self.cs,
                out.as_mut_ptr(),
                out.len(),
                chars,
                s.as_ptr(),
                s.len(),
            )
        };
        Some(n.min(out.len()))
    }

    fn hash(&self, s: &[u8], nr1: &mut u64, nr2: &mut u64) {
        // SAFETY: a live CHARSET_INFO; `s` readable for its length; nr1/nr2 are valid.
        unsafe { shim::rheap_cs_hash_sort(self.cs, s.as_ptr(), s.len(), nr1, nr2) }
    }
}
