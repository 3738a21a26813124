package npmregistry

import (
	"fmt"
	"time"
)

// TooYoungError says a version was published less than the cooldown ago.
type TooYoungError struct {
	Version   string // NAME@VERSION
	Published time.Time
	Age       time.Duration
	Cooldown  time.Duration
}

func (e *TooYoungError) Error() string {
	return fmt.Sprintf("%s was published %s ago (%s), younger than the cooldown of %s: wait until %s or pass --cooldown 0",
		e.Version, Words(e.Age), e.Published.UTC().Format("2006-01-02 15:04 UTC"), Words(e.Cooldown), e.Published.Add(e.Cooldown).UTC().Format("2006-01-02 15:04 UTC"))
}

// CheckCooldown returns a *TooYoungError when v was published less than
// cooldown before now; nil when it is older or cooldown is 0. A version
// with no publish time is an error: its age cannot be told.
func CheckCooldown(v *Version, now time.Time, cooldown time.Duration) error {
	if cooldown <= 0 {
		return nil
	}
	if v.Published.IsZero() {
		return fmt.Errorf("the registry gives no publish time for %s, so its age cannot be checked against the cooldown of %s: pass --cooldown 0 to take it anyway", v, Words(cooldown))
	}
	age := now.Sub(v.Published)
	if age >= cooldown {
		return nil
	}
	return &TooYoungError{Version: v.String(), Published: v.Published, Age: max(age, 0), Cooldown: cooldown}
}

// Words is d as people write it: "40s", "25m", "3h 5m", "48h", "9d 4h".
func Words(d time.Duration) string {
	d = d.Truncate(time.Second)
	pair := func(a int, unitA string, b int, unitB string) string {
		if b == 0 {
			return fmt.Sprintf("%d%s", a, unitA)
		}
		return fmt.Sprintf("%d%s %d%s", a, unitA, b, unitB)
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 72*time.Hour:
		return pair(int(d/time.Hour), "h", int(d%time.Hour/time.Minute), "m")
	}
	return pair(int(d/(24*time.Hour)), "d", int(d%(24*time.Hour)/time.Hour), "h")
}
