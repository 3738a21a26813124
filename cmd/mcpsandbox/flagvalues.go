package main

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// flag.Value adapters pointing straight into a Policy field, so that the
// table in runflags.go is the whole mapping.

type stringValue struct{ p *string }

func (v stringValue) Set(s string) error { *v.p = s; return nil }
func (v stringValue) String() string     { return *v.p }

type boolValue struct{ p *bool }

func (v boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("use true or false")
	}
	*v.p = b
	return nil
}
func (v boolValue) String() string   { return strconv.FormatBool(*v.p) }
func (v boolValue) IsBoolFlag() bool { return true }

type durationValue struct{ p *time.Duration }

func (v durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("use a duration such as 500ms, 15s or 2m")
	}
	*v.p = d
	return nil
}
func (v durationValue) String() string { return shortDuration(*v.p) }

// shortDuration prints 1m rather than Go's 1m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

type intValue struct{ p *int }

func (v intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("use a whole number")
	}
	*v.p = n
	return nil
}
func (v intValue) String() string { return strconv.Itoa(*v.p) }

type int64Value struct{ p *int64 }

func (v int64Value) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return errors.New("use a whole number")
	}
	*v.p = n
	return nil
}
func (v int64Value) String() string { return strconv.FormatInt(*v.p, 10) }

type uint64Value struct{ p *uint64 }

func (v uint64Value) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return errors.New("use a positive whole number")
	}
	*v.p = n
	return nil
}
func (v uint64Value) String() string { return strconv.FormatUint(*v.p, 10) }

type floatValue struct{ p *float64 }

func (v floatValue) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("use a number such as 0.5 or 2")
	}
	*v.p = f
	return nil
}
func (v floatValue) String() string { return strconv.FormatFloat(*v.p, 'g', -1, 64) }

// listValue appends: the flag may be given many times.
type listValue struct{ p *[]string }

func (v listValue) Set(s string) error { *v.p = append(*v.p, s); return nil }
func (v listValue) String() string     { return strings.Join(*v.p, ",") }
