//! Anonymous memory mappings: page-aligned (or more), zero-filled memory
//! straight from the kernel, unmapped on drop. The memory workloads want
//! it for their working sets (alignment, huge pages, no allocator in the
//! way); hackbench's process tasks want a shared one to report through.

use std::io;

/// An anonymous mapping of `len` bytes starting at an `align`-aligned
/// address.
#[derive(Debug)]
pub struct AnonMap {
    /// The aligned start handed out.
    ptr: *mut u8,
    len: usize,
    /// The whole reservation, including the alignment slack.
    raw: *mut libc::c_void,
    raw_len: usize,
}

// SAFETY: the mapping is plain memory owned by this value; the only ways
// in are raw pointers, whose use the callers justify.
unsafe impl Send for AnonMap {}
// SAFETY: as above.
unsafe impl Sync for AnonMap {}

/// Whether a mapping is shared with the processes forked after it is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// Copy-on-write in a child (`MAP_PRIVATE`).
    Private,
    /// The same memory in every child (`MAP_SHARED`).
    Shared,
}

impl AnonMap {
    /// Maps `len` bytes (at least one) at an address aligned to `align` (a
    /// power of two; a page or less is what every mapping has). The memory
    /// is zero-filled.
    pub fn new(len: usize, align: usize, sharing: Sharing) -> io::Result<AnonMap> {
        if !align.is_power_of_two() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("alignment {align} is not a power of two"),
            ));
        }
        let len = len.max(1);
        let slack = if align > page_size() { align } else { 0 };
        let raw_len = len.checked_add(slack).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{len} bytes is too many"),
            )
        })?;
        let flags = libc::MAP_ANONYMOUS
            | match sharing {
                Sharing::Private => libc::MAP_PRIVATE,
                Sharing::Shared => libc::MAP_SHARED,
            };
        // SAFETY: a fresh anonymous mapping with no address hint: no
        // existing memory is touched. Checked below.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                raw_len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let aligned = (raw as usize).next_multiple_of(align.max(1));
        Ok(AnonMap {
            ptr: aligned as *mut u8,
            len,
            raw,
            raw_len,
        })
    }

    /// The aligned start.
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Bytes usable from [`AnonMap::ptr`].
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never true: a mapping has at least one byte.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Asks for transparent huge pages; a kernel without them ignores it.
    pub fn advise_hugepages(&self) {
        // SAFETY: the range lies inside our mapping; advice never changes
        // the contents.
        unsafe {
            libc::madvise(self.ptr.cast(), self.len, libc::MADV_HUGEPAGE);
        }
    }
}

impl Drop for AnonMap {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `new` mapped, once.
        unsafe {
            libc::munmap(self.raw, self.raw_len);
        }
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapping_is_aligned_zeroed_and_writable() {
        let align = 2 << 20;
        let map = AnonMap::new(3 * 4096 + 5, align, Sharing::Private).unwrap();
        assert_eq!(map.ptr() as usize % align, 0);
        assert_eq!(map.len(), 3 * 4096 + 5);
        // SAFETY: the mapping is `len` bytes, readable and writable, ours.
        let bytes = unsafe { std::slice::from_raw_parts_mut(map.ptr(), map.len()) };
        assert!(bytes.iter().all(|&b| b == 0));
        bytes.fill(7);
        assert_eq!(bytes[map.len() - 1], 7);
        assert!(AnonMap::new(10, 3, Sharing::Private).is_err());
    }

    #[test]
    fn a_shared_mapping_is_seen_by_a_forked_child() {
        let map = AnonMap::new(8, 8, Sharing::Shared).unwrap();
        let cell = map.ptr().cast::<u64>();
        // SAFETY: fork in a test; the child only writes the shared word and
        // exits without running any destructor.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            // SAFETY: the word is inside the shared mapping.
            unsafe {
                cell.write_volatile(42);
                libc::_exit(0);
            }
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        // SAFETY: as above; the child has exited.
        assert_eq!(unsafe { cell.read_volatile() }, 42);
    }
}
