package jsonrpc

import (
	"sync"
	"syscall"
	"unsafe"
)

// A line past 1 MiB is read into a region mapped outside the Go heap, kept
// for the reader's life and reused by the next reader after it:
//   - it is never zeroed by Go nor counted in the heap the garbage collector
//     paces itself by, so keeping it costs nothing while it is empty;
//   - its pages go back to the OS right after each big line (MADV_DONTNEED),
//     so an idle relay keeps none of them;
//   - it asks for huge pages (MADV_HUGEPAGE), so a 16 MiB line takes eight
//     page faults instead of four thousand, which were most of what reading
//     it cost beyond the copy itself.
//
// Regions are never unmapped: a line handed out by a reader that has since
// been dropped then reads as zeros or as another reader's data, never as an
// address that is gone.

const hugePage = 2 << 20

var regionPool struct {
	sync.Mutex
	free map[int][][]byte // by length
}

// bigRegion returns an empty region of n bytes, or nil when none can be
// mapped (the reader then uses the Go heap).
func bigRegion(n int) []byte {
	regionPool.Lock()
	if l := regionPool.free[n]; len(l) > 0 {
		b := l[len(l)-1]
		regionPool.free[n] = l[:len(l)-1]
		regionPool.Unlock()
		return b
	}
	regionPool.Unlock()
	size := (n + hugePage - 1) &^ (hugePage - 1)
	m, err := syscall.Mmap(-1, 0, size+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	// Start on a huge page boundary so that every huge page is whole; the
	// slack before and after stays mapped but is never touched.
	off := int(hugePage-uintptr(unsafe.Pointer(&m[0]))%hugePage) % hugePage
	b := m[off : off+n : off+n]
	_ = syscall.Madvise(m[off:off+size], syscall.MADV_HUGEPAGE) // a hint: without it, small pages
	return b
}

// putRegion hands a region's pages back and keeps it for the next reader.
func putRegion(b []byte) {
	releaseRegion(b)
	regionPool.Lock()
	if regionPool.free == nil {
		regionPool.free = make(map[int][][]byte)
	}
	regionPool.free[len(b)] = append(regionPool.free[len(b)], b)
	regionPool.Unlock()
}

// releaseRegion hands all of a region's pages back to the OS; it then reads
// as zeros.
func releaseRegion(b []byte) {
	_ = syscall.Madvise(b[:cap(b)], syscall.MADV_DONTNEED)
}
