package core

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// OptionType is the kind of value an adapter option takes.
type OptionType string

// Option types.
const (
	OptionString   OptionType = "string"
	OptionInt      OptionType = "int"
	OptionBool     OptionType = "bool"
	OptionFloat    OptionType = "float"
	OptionDuration OptionType = "duration"
)

// Option declares one adapter-specific setting of a system, given in the systems
// file as `options: {name: value}`. An adapter declares every option it reads
// (Info.Options), so that cmpbench checks a systems file against them before
// anything runs: an unknown name, a value of the wrong type or not among Values,
// and a required option missing are exit 2 with file:line.
type Option struct {
	Name     string
	Type     OptionType
	Default  string // as written in the file; "" for none
	Doc      string
	Required bool
	// Values lists the values allowed, when only some are.
	Values []string
	// TopLevel options may also be written as a key of the system itself (resp's
	// `cluster: true`, aerospike's `namespace: test`), as systems files did before
	// options were declared.
	TopLevel bool
}

// Check says what is wrong with value for the option, or nil.
func (o Option) Check(value string) error {
	var err error
	switch o.Type {
	case OptionInt:
		_, err = strconv.ParseInt(value, 10, 64)
	case OptionBool:
		if value != "true" && value != "false" {
			err = strconv.ErrSyntax
		}
	case OptionFloat:
		_, err = strconv.ParseFloat(value, 64)
	case OptionDuration:
		_, err = time.ParseDuration(value)
	case OptionString, "":
	default:
		return fmt.Errorf("option %s has unknown type %q", o.Name, o.Type)
	}
	if err != nil {
		return fmt.Errorf("%s %q is not %s", o.Name, value, article(o.Type))
	}
	if len(o.Values) > 0 && !slices.Contains(o.Values, value) {
		return fmt.Errorf("%s %q is not one of %s", o.Name, value, strings.Join(o.Values, ", "))
	}
	return nil
}

func article(t OptionType) string {
	switch t {
	case OptionInt:
		return "an integer"
	case OptionBool:
		return "true or false"
	case OptionFloat:
		return "a number"
	case OptionDuration:
		return "a duration such as 500ms or 2s"
	}
	return "a " + string(t)
}

// Describe is the option as `cmpbench adapters` lists it.
func (o Option) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s", o.Name, o.Type)
	if len(o.Values) > 0 {
		fmt.Fprintf(&b, ": %s", strings.Join(o.Values, "|"))
	}
	if o.Default != "" {
		fmt.Fprintf(&b, ", default %s", o.Default)
	}
	if o.Required {
		b.WriteString(", required")
	}
	b.WriteString(")")
	if o.Doc != "" {
		b.WriteString(": " + o.Doc)
	}
	return b.String()
}

// OptionProblem is one problem with a system's options: Name is the option it is
// about ("" for none in particular).
type OptionProblem struct {
	Name string
	Err  error
}

// CheckOptions checks the options given to a system against those its adapter
// declares, in name order: every unknown name (naming the known ones), every bad
// value, every required option missing.
func CheckOptions(adapter string, declared []Option, given map[string]string) []OptionProblem {
	var out []OptionProblem
	byName := map[string]Option{}
	var known []string
	for _, o := range declared {
		byName[o.Name] = o
		known = append(known, o.Name)
	}
	slices.Sort(known)
	names := make([]string, 0, len(given))
	for n := range given {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		o, ok := byName[n]
		if !ok {
			list := "it declares none"
			if len(known) > 0 {
				list = "its options: " + strings.Join(known, ", ")
			}
			out = append(out, OptionProblem{n, fmt.Errorf("%s is not an option of adapter %s (%s)", n, adapter, list)})
			continue
		}
		if err := o.Check(given[n]); err != nil {
			out = append(out, OptionProblem{n, err})
		}
	}
	for _, o := range declared {
		if _, ok := given[o.Name]; o.Required && !ok {
			out = append(out, OptionProblem{"", fmt.Errorf("option %s is required by adapter %s: %s", o.Name, adapter, o.Doc)})
		}
	}
	return out
}

// WithOptionDefaults returns the options given, with every declared option that
// has a default and is not given set to it: what an adapter's Open receives.
func WithOptionDefaults(declared []Option, given map[string]string) map[string]string {
	out := make(map[string]string, len(given)+len(declared))
	for k, v := range given {
		out[k] = v
	}
	for _, o := range declared {
		if _, ok := out[o.Name]; !ok && o.Default != "" {
			out[o.Name] = o.Default
		}
	}
	return out
}

// SystemValidator is implemented by adapters that check a system's whole
// configuration beyond its declared options — combinations, files, profiles —
// without connecting to it. cmpbench calls it for `cmpbench systems`, --dry-run
// and before a run starts.
type SystemValidator interface {
	ValidateSystem(sys SystemConfig) error
}
