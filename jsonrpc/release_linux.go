package jsonrpc

import (
	"os"
	"syscall"
	"unsafe"
)

// releasePages hands the whole pages inside b back to the OS; b keeps its
// length and reads as zeros where they were. It reports whether it could.
func releasePages(b []byte) bool {
	page := uintptr(os.Getpagesize())
	if len(b) == 0 {
		return true
	}
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := int((page - addr%page) % page)
	hi := len(b) - int((addr+uintptr(len(b)))%page)
	if hi <= lo {
		return true
	}
	return syscall.Madvise(b[lo:hi], syscall.MADV_DONTNEED) == nil
}
