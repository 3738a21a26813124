package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ByteSize is a size in bytes that parses "16MiB", "64M", "1GiB", "4096".
type ByteSize int64

const (
	KiB ByteSize = 1 << 10
	MiB ByteSize = 1 << 20
	GiB ByteSize = 1 << 30
)

var byteSuffixes = []struct {
	suffix string
	mult   ByteSize
}{
	{"KiB", KiB}, {"MiB", MiB}, {"GiB", GiB},
	{"K", KiB}, {"M", MiB}, {"G", GiB}, {"KB", KiB}, {"MB", MiB}, {"GB", GiB},
	{"k", KiB}, {"m", MiB}, {"g", GiB}, {"B", 1}, {"", 1},
}

// ParseByteSize parses a size; suffixes are binary (K = KiB).
func ParseByteSize(s string) (ByteSize, error) {
	s = strings.TrimSpace(s)
	for _, bs := range byteSuffixes {
		num, ok := strings.CutSuffix(s, bs.suffix)
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil {
			continue
		}
		if n < 0 {
			return 0, fmt.Errorf("size %q is negative", s)
		}
		return ByteSize(n * float64(bs.mult)), nil
	}
	return 0, fmt.Errorf("size %q: use a number with an optional KiB, MiB or GiB suffix, e.g. 64MiB", s)
}

func (b ByteSize) String() string {
	switch {
	case b >= GiB && b%GiB == 0:
		return fmt.Sprintf("%dGiB", b/GiB)
	case b >= MiB && b%MiB == 0:
		return fmt.Sprintf("%dMiB", b/MiB)
	case b >= KiB && b%KiB == 0:
		return fmt.Sprintf("%dKiB", b/KiB)
	}
	return strconv.FormatInt(int64(b), 10)
}

// Set makes ByteSize a flag.Value.
func (b *ByteSize) Set(s string) error {
	v, err := ParseByteSize(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// Backoff is the delay range between restarts: MIN, doubling up to MAX.
type Backoff struct {
	Min, Max time.Duration
}

// ParseBackoff parses "MIN..MAX", e.g. "100ms..30s".
func ParseBackoff(s string) (Backoff, error) {
	lo, hi, ok := strings.Cut(s, "..")
	if !ok {
		return Backoff{}, fmt.Errorf("backoff %q: use MIN..MAX, e.g. 100ms..30s", s)
	}
	min, err := time.ParseDuration(strings.TrimSpace(lo))
	if err != nil {
		return Backoff{}, fmt.Errorf("backoff %q: MIN: %v", s, err)
	}
	max, err := time.ParseDuration(strings.TrimSpace(hi))
	if err != nil {
		return Backoff{}, fmt.Errorf("backoff %q: MAX: %v", s, err)
	}
	return Backoff{Min: min, Max: max}, nil
}

func (b Backoff) String() string { return b.Min.String() + ".." + b.Max.String() }

// Set makes Backoff a flag.Value.
func (b *Backoff) Set(s string) error {
	v, err := ParseBackoff(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}
