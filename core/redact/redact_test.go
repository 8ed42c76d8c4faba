package redact

import (
	"errors"
	"testing"
)

func TestRedactor(t *testing.T) {
	r := New("hunter22", "", "hunter22-long")
	if got := r.String("a hunter22-long b hunter22"); got != "a [redacted] b [redacted]" {
		t.Fatalf("%q", got)
	}
	if !r.Leaks([]byte("x hunter22 y")) || r.Leaks([]byte("nothing")) {
		t.Fatal("Leaks")
	}
	if err := r.Error(errors.New("auth hunter22 failed")); err.Error() != "auth [redacted] failed" {
		t.Fatal(err)
	}
	var none *Redactor
	if none.String("x") != "x" || none.Leaks([]byte("x")) {
		t.Fatal("nil redactor")
	}
}
