//! Store ids: `sn_` + 24 lowercase hex characters (96 bits).
//!
//! `id = "sn_" + hex(HMAC-SHA256(key, SHA-256(original))[0..12])`, where `key` is the
//! store's 32 random bytes kept in `<store>/key` (mode 0600). The same original always
//! gets the same id in one store (markers are byte-stable), and without the key an id
//! cannot be derived from a guessed original. Hashing the SHA-256 digest rather than
//! the original itself means one pass over the bytes gives both the id and the
//! `sha256` that restore responses report.

use crate::error::{IoContext, StoreError};
use crate::fsutil;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::io::{ErrorKind, Read, Write};
use std::path::Path;

/// The prefix of every id.
pub const ID_PREFIX: &str = "sn_";
/// Number of hex characters after the prefix.
pub const ID_HEX_LEN: usize = 24;
/// Total length of an id in bytes (`sn_` + 24 hex).
pub const ID_LEN: usize = ID_PREFIX.len() + ID_HEX_LEN;
/// Size of the per-store key, in bytes.
pub const KEY_LEN: usize = 32;

/// Checks an id before any path is built from it.
///
/// # Errors
/// One line saying what is wrong (never echoing more than 40 characters of the input).
pub fn validate_id(id: &str) -> Result<(), String> {
    let shown: String = id.chars().take(40).collect();
    let shown = format!("{shown:?}");
    if !id.starts_with(ID_PREFIX) {
        return Err(format!(
            "id {shown} is not a snip id: ids look like sn_ followed by {ID_HEX_LEN} lowercase hex characters"
        ));
    }
    if id.len() != ID_LEN {
        return Err(format!(
            "id {shown} has {} characters; snip ids have {ID_LEN} (sn_ + {ID_HEX_LEN} hex); copy it from the marker",
            id.chars().count()
        ));
    }
    if !id[ID_PREFIX.len()..]
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(format!(
            "id {shown} has characters other than lowercase hex after sn_; copy it from the marker"
        ));
    }
    Ok(())
}

/// True when `id` is a well-formed store id.
pub fn is_valid_id(id: &str) -> bool {
    validate_id(id).is_ok()
}

/// SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const H: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(H[(b >> 4) as usize] as char);
        s.push(H[(b & 15) as usize] as char);
    }
    s
}

/// The per-store HMAC key.
#[derive(Clone)]
pub(crate) struct Key([u8; KEY_LEN]);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(..)")
    }
}

impl Key {
    /// The key with these bytes (the shared store's, read from Redis).
    pub(crate) fn from_bytes(k: [u8; KEY_LEN]) -> Key {
        Key(k)
    }

    /// The id of an original whose SHA-256 digest is `digest`.
    pub(crate) fn id_for_digest(&self, digest: &[u8; 32]) -> String {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("any key length");
        mac.update(digest);
        let tag = mac.finalize().into_bytes();
        let mut id = String::with_capacity(ID_LEN);
        id.push_str(ID_PREFIX);
        id.push_str(&hex(&tag[..ID_HEX_LEN / 2]));
        id
    }

    /// Whether `id` is the id of an original whose SHA-256 is `sha256` (64 lowercase
    /// hex digits, as an entry's header holds it): false for any other text.
    pub(crate) fn names(&self, id: &str, sha256: &str) -> bool {
        let nibble = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        };
        let hex = sha256.as_bytes();
        if hex.len() != 64 {
            return false;
        }
        let mut digest = [0u8; 32];
        for (d, pair) in digest.iter_mut().zip(hex.chunks_exact(2)) {
            match (nibble(pair[0]), nibble(pair[1])) {
                (Some(hi), Some(lo)) => *d = hi << 4 | lo,
                _ => return false,
            }
        }
        self.id_for_digest(&digest) == id
    }

    /// Loads `<dir>/key`, creating it (0600, 32 random bytes) when missing. Safe when
    /// several processes do this at once: the key appears under its name only when
    /// complete (written to a temp file, then hard-linked, which fails if another
    /// process won the race; the winner's key is then read).
    /// A missing key is created with `first`'s bytes when given (the key a store held
    /// originals under before its directory was removed, see
    /// [`crate::flush_held`]), else 32 random bytes.
    pub(crate) fn load_or_create(dir: &Path, first: Option<&Key>) -> Result<Key, StoreError> {
        let path = dir.join("key");
        for _ in 0..3 {
            match Self::load(&path) {
                Ok(k) => return Ok(k),
                Err(StoreError::Io { cause, .. }) if cause.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            let mut k = [0u8; KEY_LEN];
            match first {
                Some(first) => k = first.0,
                None => getrandom::fill(&mut k).map_err(|e| {
                    StoreError::io(
                        "get random bytes for",
                        &path,
                        std::io::Error::other(e.to_string()),
                    )
                })?,
            }
            let mut tmp = tempfile::Builder::new()
                .prefix(".key-")
                .tempfile_in(dir)
                .ctx("create", dir)?;
            tmp.write_all(&k).ctx("write", tmp.path())?;
            match std::fs::hard_link(tmp.path(), &path) {
                Ok(()) => return Ok(Key(k)),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(StoreError::io("create", &path, e)),
            }
        }
        Self::load(&path)
    }

    fn load(path: &Path) -> Result<Key, StoreError> {
        let mut f = fsutil::open_private_file(path)?;
        let mut k = [0u8; KEY_LEN];
        let mut extra = [0u8; 1];
        let damaged = || StoreError::Refused {
            path: path.to_path_buf(),
            reason: format!(
                "the key file is not {KEY_LEN} bytes (damaged); remove it and snip makes a new one"
            ),
        };
        match f.read_exact(&mut k) {
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(damaged()),
            r => r.ctx("read", path)?,
        }
        if f.read(&mut extra).ctx("read", path)? != 0 {
            return Err(damaged());
        }
        Ok(Key(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation() {
        assert!(is_valid_id("sn_0123456789abcdef01234567"));
        for bad in [
            "",
            "sn_",
            "../x",
            "/etc/passwd",
            "sn_0123456789abcdef0123456",
            "sn_0123456789abcdef012345678",
            "sn_0123456789ABCDEF01234567",
            "sn_0123456789abcdef0123456\0",
            "sn_0123456789abcdef012345é",
            "sn_../../../../../etc/passwd",
            "SN_0123456789abcdef01234567",
        ] {
            let e = validate_id(bad).unwrap_err();
            assert!(!e.contains('\n'), "{e}");
        }
        let long = "sn_".to_string() + &"a".repeat(10_000);
        assert!(validate_id(&long).unwrap_err().len() < 200);
    }

    #[test]
    fn hex_is_lowercase() {
        assert_eq!(hex(&[0x00, 0xab, 0xff]), "00abff");
    }

    #[test]
    fn id_depends_on_key_and_digest() {
        let a = Key([1; KEY_LEN]);
        let b = Key([2; KEY_LEN]);
        let d = sha256(b"hello");
        assert_eq!(a.id_for_digest(&d), a.id_for_digest(&d));
        assert_ne!(a.id_for_digest(&d), b.id_for_digest(&d));
        assert_ne!(a.id_for_digest(&d), a.id_for_digest(&sha256(b"hellp")));
        assert!(is_valid_id(&a.id_for_digest(&d)));
    }
}
