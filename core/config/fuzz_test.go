package config

import "testing"

// FuzzSystemsFile feeds arbitrary bytes to the systems-file reader: it may refuse
// them, never panic. Seeds: testdata/fuzz/FuzzSystemsFile.
func FuzzSystemsFile(f *testing.F) {
	f.Add([]byte("systems:\n  a: {adapter: resp, endpoint: \"127.0.0.1:6379\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &Systems{byName: map[string]*System{}}
		if err := s.load("fuzz.yaml", data); err != nil {
			return
		}
		for _, n := range s.Names() {
			if sys, err := s.Get(n); err == nil {
				_ = sys.SystemConfig(sys.Endpoints()...)
			}
		}
	})
}
