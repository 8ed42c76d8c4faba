// Package redact removes secrets from text before it is written, printed or
// returned as an error. Secrets are the values of ${ENV} references that a
// configuration marks as secret.
package redact

import (
	"errors"
	"io"
	"slices"
	"strings"
)

// Mask replaces each secret.
const Mask = "[redacted]"

// Redactor knows the secrets of one run. The zero value redacts nothing.
type Redactor struct {
	secrets []string
}

// New returns a Redactor for the given secrets; empty ones are ignored.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add registers more secrets.
func (r *Redactor) Add(secrets ...string) {
	for _, s := range secrets {
		if s != "" && !slices.Contains(r.secrets, s) {
			r.secrets = append(r.secrets, s)
		}
	}
	// Longest first, so that a secret containing another is masked whole.
	slices.SortFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
}

// String masks every secret in s.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, Mask)
	}
	return s
}

// Strings masks every secret in each element, returning a new slice.
func (r *Redactor) Strings(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = r.String(s)
	}
	return out
}

// Error masks every secret in an error's text; nil stays nil.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	if msg := r.String(err.Error()); msg != err.Error() {
		return errors.New(msg)
	}
	return err
}

// Leaks reports whether b contains any secret.
// LeaksFrom reports whether what r reads contains a secret, reading it a chunk at
// a time so that a file of any size is checked with bounded memory.
func (r *Redactor) LeaksFrom(rd io.Reader) (bool, error) {
	if r == nil || len(r.secrets) == 0 {
		return false, nil
	}
	longest := 0
	for _, sec := range r.secrets {
		longest = max(longest, len(sec))
	}
	// Each chunk starts with the end of the previous one, so that a secret split
	// across two reads is still found.
	buf := make([]byte, max(1<<20, 4*longest))
	keep := 0
	for {
		n, err := io.ReadFull(rd, buf[keep:])
		if r.Leaks(buf[:keep+n]) {
			return true, nil
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		keep = min(longest-1, keep+n)
		copy(buf, buf[len(buf)-keep:])
	}
}

func (r *Redactor) Leaks(b []byte) bool {
	if r == nil {
		return false
	}
	for _, sec := range r.secrets {
		if strings.Contains(string(b), sec) {
			return true
		}
	}
	return false
}
