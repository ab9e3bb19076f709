//! The two signals a reader and a writer of files must not die of, for the programs built on
//! this crate to install once at start ([`install`]):
//!
//! * **SIGBUS**: a memory-mapped file ([`crate::binary::read_bytes`]) truncated by another
//!   program while we read it (what `onnx.save` does when it rewrites a model in place)
//!   faults on the next access to a page past its new end. The handler finds which mapped
//!   file the faulting address lies in, says that file changed while it was read, removes
//!   the temporary files of unfinished writes ([`crate::remove_unfinished`]) and ends the
//!   process with status 1. A fault at any other address is not ours to explain: the
//!   default action is restored and the fault happens again, as it would have.
//! * **SIGXFSZ**: a write past `ulimit -f` kills the process silently by default, leaving
//!   its temporary file. Ignored, the write fails with `EFBIG` instead, which the writer
//!   reports and cleans up after like any other write error.
//!
//! The handler may only do what is safe in a signal handler: it reads a fixed table of
//! atomics (no lock, no allocation), writes with `write(2)` and leaves with `_exit(2)`;
//! removing the temporaries takes a lock and allocates, which is safe here because SIGBUS
//! is synchronous: it comes from a read of a mapped file, never from inside the allocator
//! or the temporaries' list.

#![allow(unsafe_code)]

use std::sync::atomic::{AtomicPtr, AtomicU8, AtomicUsize, Ordering};

/// How many maps can be live at once with a name to report (a model and its side files;
/// maps past this many are still read, and a fault in them is a plain SIGBUS).
const SLOTS: usize = 256;

const FREE: u8 = 0;
const WRITING: u8 = 1;
const READY: u8 = 2;

/// One live map: its address range and the message to print if it faults.
struct Slot {
    state: AtomicU8,
    start: AtomicUsize,
    end: AtomicUsize,
    message: AtomicPtr<u8>,
    message_len: AtomicUsize,
}

#[allow(clippy::declare_interior_mutable_const)] // the initialiser of each slot
const EMPTY: Slot = Slot {
    state: AtomicU8::new(FREE),
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    message: AtomicPtr::new(std::ptr::null_mut()),
    message_len: AtomicUsize::new(0),
};

static MAPS: [Slot; SLOTS] = [EMPTY; SLOTS];

/// The program's name, for the message (`onnx`, `onnx-view`).
static PROGRAM: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static PROGRAM_LEN: AtomicUsize = AtomicUsize::new(0);
/// Written to standard output before the message (a terminal program's way back to the
/// normal screen).
static RESTORE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static RESTORE_LEN: AtomicUsize = AtomicUsize::new(0);

/// Installs the SIGBUS handler and ignores SIGXFSZ (see the module's comment). `program`
/// starts the message (`onnx: model.onnx: …`).
pub fn install(program: &'static str) {
    PROGRAM_LEN.store(program.len(), Ordering::Relaxed);
    PROGRAM.store(program.as_ptr().cast_mut(), Ordering::Release);
    // SAFETY: sigaction with a zeroed mask and a handler of the SA_SIGINFO form; signal
    // with SIG_IGN. Neither touches memory of ours beyond the struct passed.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_bus_error as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// Has the SIGBUS handler write `bytes` to standard output before its message: a
/// full-screen program leaves its alternate screen, so the message stays visible.
pub fn restore_terminal_with(bytes: &'static [u8]) {
    RESTORE_LEN.store(bytes.len(), Ordering::Relaxed);
    RESTORE.store(bytes.as_ptr().cast_mut(), Ordering::Release);
}

/// A map's place in the table while it lives; dropping it frees the place.
#[derive(Debug)]
pub(crate) struct Registered(Option<usize>);

/// Notes that `len` bytes from `start` are `label`'s contents, mapped.
pub(crate) fn register(start: *const u8, len: usize, label: &str) -> Registered {
    if len == 0 {
        return Registered(None);
    }
    for (i, slot) in MAPS.iter().enumerate() {
        if slot.state.compare_exchange(FREE, WRITING, Ordering::Acquire, Ordering::Relaxed).is_ok() {
            let message = format!(
                ": {label}: the file changed while it was being read (another program truncated or rewrote \
                 it); stopped, and nothing was written\n"
            );
            // Kept for the life of the process: the handler may read it at any moment,
            // even while the map it belongs to is being dropped.
            let message: &'static mut str = message.leak();
            slot.start.store(start as usize, Ordering::Relaxed);
            slot.end.store(start as usize + len, Ordering::Relaxed);
            slot.message_len.store(message.len(), Ordering::Relaxed);
            slot.message.store(message.as_mut_ptr(), Ordering::Relaxed);
            slot.state.store(READY, Ordering::Release);
            return Registered(Some(i));
        }
    }
    Registered(None)
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(i) = self.0 {
            MAPS[i].state.store(FREE, Ordering::Release);
        }
    }
}

/// The message of the live map holding `address`.
fn message_for(address: usize) -> Option<(*const u8, usize)> {
    MAPS.iter().find_map(|slot| {
        if slot.state.load(Ordering::Acquire) != READY {
            return None;
        }
        let (start, end) = (slot.start.load(Ordering::Relaxed), slot.end.load(Ordering::Relaxed));
        (start..end)
            .contains(&address)
            .then(|| (slot.message.load(Ordering::Relaxed).cast_const(), slot.message_len.load(Ordering::Relaxed)))
    })
}

extern "C" fn on_bus_error(signal: libc::c_int, info: *mut libc::siginfo_t, _context: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler; the messages
    // are leaked strings that live as long as the process; write and _exit are
    // async-signal-safe.
    unsafe {
        let address = (*info).si_addr() as usize;
        let Some((message, len)) = message_for(address) else {
            // Not a map of ours: fault again under the default action.
            libc::signal(signal, libc::SIG_DFL);
            return;
        };
        let restore = RESTORE.load(Ordering::Acquire);
        if !restore.is_null() {
            libc::write(1, restore.cast(), RESTORE_LEN.load(Ordering::Relaxed));
        }
        let program = PROGRAM.load(Ordering::Acquire);
        if !program.is_null() {
            libc::write(2, program.cast(), PROGRAM_LEN.load(Ordering::Relaxed));
        }
        libc::write(2, message.cast(), len);
        crate::remove_unfinished();
        libc::_exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registered_range_is_found_until_it_is_dropped() {
        let bytes = [0u8; 100];
        let registered = register(bytes.as_ptr(), bytes.len(), "m.onnx");
        let inside = bytes.as_ptr() as usize + 50;
        let (message, len) = message_for(inside).expect("found");
        // SAFETY: a leaked string of that length.
        let text = unsafe { std::str::from_utf8(std::slice::from_raw_parts(message, len)) }.expect("utf-8");
        assert!(text.starts_with(": m.onnx: the file changed while it was being read"), "{text}");
        assert!(message_for(bytes.as_ptr() as usize + 100).is_none(), "the end is outside");
        drop(registered);
        assert!(message_for(inside).is_none());
    }
}
