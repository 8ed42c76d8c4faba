package redact

import (
	"bytes"
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

func TestLeaksFromFindsSecretsAcrossChunks(t *testing.T) {
	r := New("s3cret-value")
	for _, at := range []int{0, 1<<20 - 5, 1<<20 - 1, 1 << 20, 3<<20 - 7} {
		data := bytes.Repeat([]byte{'x'}, 3<<20+100)
		copy(data[at:], "s3cret-value")
		leak, err := r.LeaksFrom(bytes.NewReader(data))
		if err != nil || !leak {
			t.Fatalf("secret at byte %d: leak %v, %v", at, leak, err)
		}
	}
	leak, err := r.LeaksFrom(bytes.NewReader(bytes.Repeat([]byte("s3cret-valu"), 300_000)))
	if err != nil || leak {
		t.Fatalf("no secret: leak %v, %v", leak, err)
	}
}
