//! The on-disk form of one original: a fixed 116-byte text header, then the bytes.
//!
//! ```text
//! snip-original v1 sha256=<64 lowercase hex> bytes=<20 decimal digits, zero-padded>\n
//! <the original, exactly>
//! ```
//!
//! The header lets a restore report the original's size and SHA-256 without hashing
//! it again, and lets a reader reject a damaged file: a size not matching the header
//! (always checked), or bytes not matching its SHA-256 (checked when the whole
//! original is read, [`Entry::read_all_verified`]).

use crate::id::{self, hex};
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;

/// Length of the header in bytes, including its final `\n`.
pub const HEADER_LEN: usize = 116;
const MAGIC: &[u8] = b"snip-original v1 sha256=";
const BYTES: &[u8] = b" bytes=";

/// Renders the header of an original of `len` bytes with SHA-256 `digest`.
pub fn header(digest: &[u8; 32], len: u64) -> Vec<u8> {
    let mut h = Vec::with_capacity(HEADER_LEN);
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(hex(digest).as_bytes());
    h.extend_from_slice(BYTES);
    h.extend_from_slice(format!("{len:020}").as_bytes());
    h.push(b'\n');
    debug_assert_eq!(h.len(), HEADER_LEN);
    h
}

/// Where an entry's bytes are read from.
#[derive(Debug)]
pub(crate) enum Source {
    /// An entry file of the filesystem store.
    File(File),
    /// A value in the shared store: read by ranges.
    Remote(std::sync::Arc<crate::redis_store::Redis>, String),
    /// An original held in memory until it is written (see [`crate::behind`]).
    Memory(std::sync::Arc<[u8]>),
}

/// An opened entry: its file, the original's size and SHA-256 (lowercase hex).
#[derive(Debug)]
pub struct Entry {
    src: Source,
    /// Size of the original in bytes (the file minus its header).
    pub len: u64,
    /// SHA-256 of the original, lowercase hex.
    pub sha256: String,
}

impl Entry {
    /// An entry over `src`, an original in memory whose SHA-256 is `digest`.
    pub(crate) fn in_memory(src: Source, digest: &[u8; 32]) -> Entry {
        let len = match &src {
            Source::Memory(b) => b.len() as u64,
            _ => 0,
        };
        Entry {
            src,
            len,
            sha256: hex(digest),
        }
    }

    /// Reads and checks the header of an opened entry file of `file_len` bytes.
    ///
    /// # Errors
    /// `InvalidData` when the header is malformed or disagrees with the file size.
    pub fn from_file(mut file: File, file_len: u64) -> io::Result<Entry> {
        let mut h = [0u8; HEADER_LEN];
        file.read_exact(&mut h).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "entry is shorter than its header",
            )
        })?;
        Entry::from_header(&h, file_len, Source::File(file))
    }

    /// Checks `h` (the first bytes of an entry of `total_len` bytes, header included)
    /// and opens the entry over `src`.
    ///
    /// # Errors
    /// `InvalidData` when the header is malformed or disagrees with the size.
    pub(crate) fn from_header(h: &[u8], total_len: u64, src: Source) -> io::Result<Entry> {
        let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
        if h.len() < HEADER_LEN {
            return Err(bad("entry is shorter than its header"));
        }
        let rest = h[..HEADER_LEN]
            .strip_prefix(MAGIC)
            .ok_or_else(|| bad("entry header is not snip-original v1"))?;
        let (sha, rest) = rest.split_at(64);
        if !sha
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
        {
            return Err(bad("entry header has a malformed sha256"));
        }
        let rest = rest
            .strip_prefix(BYTES)
            .ok_or_else(|| bad("entry header has no size"))?;
        let (digits, nl) = rest.split_at(20);
        if nl != b"\n" || !digits.iter().all(u8::is_ascii_digit) {
            return Err(bad("entry header has a malformed size"));
        }
        let len: u64 = std::str::from_utf8(digits)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad("entry header has a malformed size"))?;
        if total_len != len + HEADER_LEN as u64 {
            return Err(bad("entry size does not match its header (damaged file)"));
        }
        Ok(Entry {
            src,
            len,
            sha256: String::from_utf8_lossy(sha).into_owned(),
        })
    }

    /// Reads original bytes `[start, end)` (0-based, half-open, clamped to the
    /// original's size).
    ///
    /// # Errors
    /// Any read error; `UnexpectedEof` if the file shrank.
    pub fn read_range(&self, start: u64, end: u64) -> io::Result<Vec<u8>> {
        let end = end.min(self.len);
        let start = start.min(end);
        match &self.src {
            Source::File(file) => {
                let mut buf = vec![0u8; (end - start) as usize];
                file.read_exact_at(&mut buf, HEADER_LEN as u64 + start)?;
                Ok(buf)
            }
            Source::Remote(r, key) => {
                r.read_range(key, HEADER_LEN as u64 + start, HEADER_LEN as u64 + end)
            }
            Source::Memory(b) => Ok(b[start as usize..end as usize].to_vec()),
        }
    }

    /// The stored line index (the shared store keeps one for originals over 1 MiB),
    /// read whole; `None` for an entry file or when there is none.
    ///
    /// # Errors
    /// Any read error.
    pub(crate) fn line_index(&self) -> io::Result<Option<crate::restore::Sparse>> {
        match &self.src {
            Source::File(_) | Source::Memory(_) => Ok(None),
            Source::Remote(r, key) => r.line_index(key),
        }
    }

    /// Reads the whole original.
    ///
    /// # Errors
    /// Any read error.
    pub fn read_all(&self) -> io::Result<Vec<u8>> {
        self.read_range(0, self.len)
    }

    /// Reads the whole original and checks it against the SHA-256 in its header.
    ///
    /// # Errors
    /// Any read error; [`Damaged`] (kind `InvalidData`) when the bytes do not match.
    pub fn read_all_verified(&self) -> io::Result<Vec<u8>> {
        let all = self.read_all()?;
        if hex(&id::sha256(&all)) != self.sha256 {
            return Err(io::Error::new(io::ErrorKind::InvalidData, Damaged));
        }
        Ok(all)
    }

    /// True when `md` describes this entry's file (same device and inode).
    pub fn is_file(&self, md: &std::fs::Metadata) -> bool {
        use std::os::unix::fs::MetadataExt;
        match &self.src {
            Source::File(file) => file
                .metadata()
                .is_ok_and(|m| m.dev() == md.dev() && m.ino() == md.ino()),
            Source::Remote(..) | Source::Memory(_) => false,
        }
    }
}

/// An entry whose bytes do not match the SHA-256 in its header.
#[derive(Debug)]
pub struct Damaged;

impl std::fmt::Display for Damaged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("its bytes do not match the sha256 in its header")
    }
}

impl std::error::Error for Damaged {}

impl Damaged {
    /// True when `e` is a [`Damaged`] error.
    pub fn is(e: &io::Error) -> bool {
        e.get_ref().is_some_and(|r| r.is::<Damaged>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn header_round_trip_and_damage() {
        let d = crate::id::sha256(b"abc");
        let h = header(&d, 3);
        assert_eq!(h.len(), HEADER_LEN);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("e");
        let mut f = File::create(&p).unwrap();
        f.write_all(&h).unwrap();
        f.write_all(b"abc").unwrap();
        drop(f);
        let e = Entry::from_file(File::open(&p).unwrap(), 119).unwrap();
        assert_eq!(e.len, 3);
        assert_eq!(e.sha256, hex(&d));
        assert_eq!(e.read_range(1, 99).unwrap(), b"bc");
        // A truncated file is damaged, never served.
        assert!(Entry::from_file(File::open(&p).unwrap(), 118).is_err());
        assert_eq!(e.read_all_verified().unwrap(), b"abc");
        // Same size, other bytes: damaged when read whole.
        std::fs::write(&p, [h.as_slice(), b"abd"].concat()).unwrap();
        let e = Entry::from_file(File::open(&p).unwrap(), 119).unwrap();
        assert_eq!(e.read_range(0, 2).unwrap(), b"ab");
        assert!(Damaged::is(&e.read_all_verified().unwrap_err()));
    }
}
