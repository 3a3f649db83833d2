//! A table definition's shape: the key under which a closed internal table is kept for reuse
//! ([`crate::recycle`]). (Not a table's key, [`crate::key::KeyDef`].)

/// Words a [`Shape`] holds at most: a table with a few keys and variable-length fields.
const KEY_WORDS: usize = 48;

/// Every field of a shim definition, as words: two definitions with equal keys make the same
/// [`TableDef`](crate::table::TableDef), so a table built from one can serve the other. The plugin
/// makes it from the shim's definition, naming every field, so that a field added to the
/// shim's structs fails to compile there until it is part of the key.
#[derive(Clone)]
pub struct Shape {
    len: usize,
    words: [u64; KEY_WORDS],
    /// A hash of the words, made once with the key: a kept table's tag is wanted when it
    /// opens and again when it closes, and an equal tag is the first test of equal keys.
    tag: u64,
}

impl PartialEq for Shape {
    fn eq(&self, other: &Shape) -> bool {
        self.tag == other.tag && self.words[..self.len] == other.words[..other.len]
    }
}

impl std::fmt::Debug for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.words[..self.len]).finish()
    }
}

impl Shape {
    /// A hash of the key, to tell most unequal keys apart without comparing them.
    pub fn tag(&self) -> u64 {
        self.tag
    }

    fn hash(words: &[u64]) -> u64 {
        words.iter().fold(words.len() as u64, |h, &w| {
            (h.rotate_left(5) ^ w).wrapping_mul(0x517c_c1b7_2722_0a95)
        })
    }

    /// An empty key, to [`push`](Self::push) words into and [`seal`](Self::seal).
    pub fn new() -> Shape {
        Shape {
            len: 0,
            words: [0; KEY_WORDS],
            tag: 0,
        }
    }

    /// Makes the tag once every word is in.
    pub fn seal(mut self) -> Shape {
        self.tag = Shape::hash(&self.words[..self.len]);
        self
    }

    /// Appends `words`; None when the key has no room for them.
    pub fn push(&mut self, words: &[u64]) -> Option<()> {
        let end = self.len + words.len();
        self.words.get_mut(self.len..end)?.copy_from_slice(words);
        self.len = end;
        Some(())
    }
}

impl Default for Shape {
    fn default() -> Shape {
        Shape::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(words: &[u64]) -> Option<Shape> {
        let mut k = Shape::new();
        k.push(words)?;
        Some(k.seal())
    }

    #[test]
    fn keys_are_equal_when_their_words_are() {
        let a = key(&[1, 2, 3]).unwrap();
        assert_eq!(a, key(&[1, 2, 3]).unwrap());
        assert_eq!(a.tag(), key(&[1, 2, 3]).unwrap().tag());
        // Pushed in pieces: the same words, the same key.
        let mut b = Shape::new();
        b.push(&[1]).unwrap();
        b.push(&[]).unwrap();
        b.push(&[2, 3]).unwrap();
        assert_eq!(b.seal(), a);
        assert_eq!(Shape::default().seal(), Shape::new().seal());
        assert_eq!(format!("{a:?}"), "[1, 2, 3]");
    }

    #[test]
    fn keys_differ_when_their_words_do() {
        let a = key(&[1, 2, 3]).unwrap();
        for other in [
            &[1, 2][..],
            &[1, 2, 3, 0],
            &[0, 1, 2, 3],
            &[3, 2, 1],
            &[1, 2, 4],
            &[],
        ] {
            let o = key(other).unwrap();
            assert_ne!(a, o, "{other:?}");
            assert_ne!(a.tag(), o.tag(), "{other:?}: the tag tells them apart");
        }
    }

    #[test]
    fn equal_tags_alone_do_not_make_equal_keys() {
        // Two keys made to share a tag: the words decide.
        let a = key(&[7, 8]).unwrap();
        let mut b = key(&[7, 9]).unwrap();
        b.tag = a.tag;
        assert_ne!(a, b);
        // Words past a key's length do not count.
        let mut c = key(&[7, 8]).unwrap();
        c.words[KEY_WORDS - 1] = 5;
        assert_eq!(a, c);
    }

    #[test]
    fn a_key_holds_at_most_its_words() {
        let full: Vec<u64> = (0..KEY_WORDS as u64).collect();
        let k = key(&full).expect("exactly full");
        assert_ne!(k, key(&full[1..]).unwrap());
        assert!(key(&(0..=KEY_WORDS as u64).collect::<Vec<_>>()).is_none());
        // A push that does not fit leaves the key as it was.
        let mut k = Shape::new();
        k.push(&full[..KEY_WORDS - 1]).unwrap();
        assert!(k.push(&[1, 2]).is_none());
        k.push(&[KEY_WORDS as u64 - 1]).unwrap();
        assert_eq!(k.seal(), key(&full).unwrap());
        let mut k = Shape::new();
        k.push(&full).unwrap();
        assert!(k.push(&[0]).is_none(), "no room for one more");
    }
}
