package jsonrpc

import (
	"strings"
	"testing"
)

// The scanner validates every byte of every message once; these show its
// throughput on a typical 1 KiB call and a 16 MiB text result.
//
//	go test ./jsonrpc -run '^$' -bench Scan
func BenchmarkScan1KiB(b *testing.B) {
	benchScan(b, `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`+strings.Repeat("a", 1024)+`"}}}`)
}

func BenchmarkScan16MiBResult(b *testing.B) {
	benchScan(b, `{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"`+strings.Repeat("x", 16<<20-100)+`"}]}}`)
}

func benchScan(b *testing.B, msg string) { benchScanWith(b, Scanner{}, msg) }

func benchScanWith(b *testing.B, sc Scanner, msg string) {
	line := []byte(msg + "\n")
	var bt Batch
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if err := sc.Scan(line, &bt); err != nil || bt.Msgs[0].Kind == Invalid {
			b.Fatal(err, bt.Msgs[0].Problem)
		}
	}
}

// The strict scan, used on every server message, beside the loose one.
func BenchmarkScanStrict1KiB(b *testing.B) {
	benchScanWith(b, Scanner{Strict: true}, `{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"`+strings.Repeat("a", 1024)+`"}]}}`)
}

func BenchmarkScanStrict16MiBResult(b *testing.B) {
	benchScanWith(b, Scanner{Strict: true}, `{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"`+strings.Repeat("x", 16<<20-100)+`"}]}}`)
}
