package runner

import "time"

// SetLongCallNotice makes waitFor speak after first and every next; it returns
// what undoes it.
func SetLongCallNotice(first, next time.Duration) func() {
	f, n := longCallNotice, longCallEvery
	longCallNotice, longCallEvery = first, next
	return func() { longCallNotice, longCallEvery = f, n }
}
