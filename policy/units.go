package policy

import (
	"fmt"
	"math"
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

// byteUnits are the units a size may end in, matched in any case (1gb,
// 1GB and 1Gb alike), longest first. All are binary: K, KB and KiB are
// 1024 bytes, GB is GiB.
var byteUnits = []struct {
	unit string // in lower case
	mult ByteSize
}{
	{"kib", KiB}, {"mib", MiB}, {"gib", GiB},
	{"kb", KiB}, {"mb", MiB}, {"gb", GiB},
	{"k", KiB}, {"m", MiB}, {"g", GiB}, {"b", 1}, {"", 1},
}

// sizeUnits says which units exist, for errors.
const sizeUnits = "the units are B, KiB, MiB and GiB, in any case; K or KB means KiB, M or MB MiB, G or GB GiB (all binary: 1GB is 1024MiB); e.g. 64MiB"

// ParseByteSize parses a size: a number and an optional unit (byteUnits).
func ParseByteSize(s string) (ByteSize, error) {
	s = strings.TrimSpace(s)
	lower := strings.ToLower(s)
	for _, u := range byteUnits {
		num, ok := strings.CutSuffix(lower, u.unit)
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil {
			continue
		}
		switch {
		case n < 0:
			return 0, fmt.Errorf("size %q is negative", s)
		case math.IsNaN(n) || n*float64(u.mult) >= math.MaxInt64:
			return 0, fmt.Errorf("size %q is out of range: %s", s, sizeUnits)
		}
		return ByteSize(n * float64(u.mult)), nil
	}
	if unit := strings.TrimLeft(s, "0123456789.+- "); unit != s && unit != "" {
		return 0, fmt.Errorf("size %q: %q is no unit of size: %s", s, unit, sizeUnits)
	}
	return 0, fmt.Errorf("size %q: use a number with an optional unit: %s", s, sizeUnits)
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
