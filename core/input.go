package core

import "fmt"

// BadInput marks an error caused by what the user gave: a command line, a
// systems file or a suite. The command line exits 2 on it, 1 on any other error;
// whichever package finds the mistake says so by wrapping it.
type BadInput struct{ Err error }

func (e BadInput) Error() string { return e.Err.Error() }
func (e BadInput) Unwrap() error { return e.Err }

// BadInputf is a BadInput of fmt.Errorf(format, a...).
func BadInputf(format string, a ...any) error { return BadInput{fmt.Errorf(format, a...)} }
