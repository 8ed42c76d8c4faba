package core

import (
	"fmt"
	"sort"
	"sync"
)

var registry = struct {
	sync.Mutex
	sealed   bool
	adapters map[string]func() Adapter
}{adapters: map[string]func() Adapter{}}

// RegisterAdapter makes a built-in adapter available by name. It is called from init
// functions (see adapters/all) and panics on a duplicate name or after the registry
// has been read.
func RegisterAdapter(name string, factory func() Adapter) {
	registry.Lock()
	defer registry.Unlock()
	if registry.sealed {
		panic(fmt.Sprintf("core: RegisterAdapter(%q) after the registry was read", name))
	}
	if _, dup := registry.adapters[name]; dup {
		panic(fmt.Sprintf("core: adapter %q registered twice", name))
	}
	registry.adapters[name] = factory
}

// BuiltinAdapter returns a new instance of a registered adapter.
func BuiltinAdapter(name string) (Adapter, bool) {
	registry.Lock()
	defer registry.Unlock()
	registry.sealed = true
	f, ok := registry.adapters[name]
	if !ok {
		return nil, false
	}
	return f(), true
}

// BuiltinAdapters lists the registered adapter names, sorted.
func BuiltinAdapters() []string {
	registry.Lock()
	defer registry.Unlock()
	registry.sealed = true
	names := make([]string, 0, len(registry.adapters))
	for n := range registry.adapters {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Exampler is implemented by built-in adapters that can show the shortest systems-file
// entry reaching a server of theirs on this machine: cmpbench answers a system name
// that is not defined but names the adapter or one of its built-in profiles with it.
type Exampler interface {
	// Example returns the entry's lines, unindented, in the order to write them:
	// adapter, profile (when given), endpoint on the loopback address at the product's
	// usual port, and every key Open requires. An empty profile means the adapter's
	// default.
	Example(profile string) []string
}

// ProfileLister is implemented by built-in adapters whose product differences
// are profiles: `cmpbench systems --profiles` lists each one's built-in
// profiles as it says them.
type ProfileLister interface {
	// ProfileTable is the adapter's built-in profiles as a table: the heads of
	// its columns, then a row a profile, its name first, sorted by name.
	ProfileTable() (head []string, rows [][]string, err error)
}

// A ProfileSchema lets cmpbench check a built-in adapter's profiles (adapter-specific
// settings a systems file names or defines under profiles:) when it reads the file,
// with file:line, before anything runs.
type ProfileSchema struct {
	New     func() any                     // a value to decode a profile into
	Check   func(name string, v any) error // what decoding cannot tell
	Builtin func() []string                // the profiles the adapter has built in
}

var schemas = struct {
	sync.Mutex
	m map[string]ProfileSchema
}{m: map[string]ProfileSchema{}}

// RegisterProfileSchema declares how an adapter's profiles are checked; called from
// the adapter's init.
func RegisterProfileSchema(adapter string, s ProfileSchema) {
	schemas.Lock()
	defer schemas.Unlock()
	schemas.m[adapter] = s
}

// ProfileSchemaOf returns a built-in adapter's profile schema.
func ProfileSchemaOf(adapter string) (ProfileSchema, bool) {
	schemas.Lock()
	defer schemas.Unlock()
	s, ok := schemas.m[adapter]
	return s, ok
}
