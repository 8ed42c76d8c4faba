// Package config reads cmpbench's YAML files strictly: unknown keys, wrong types and
// bad values are errors that name file:line, all reported at once. Secrets come only
// from ${ENV} references.
package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Errors is every problem found in one file, each naming file:line.
type Errors []error

func (e Errors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "\n")
}

// Parse reads YAML text into a node tree; a syntax error names file:line.
func Parse(file string, data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if doc.Kind == 0 {
		return nil, fmt.Errorf("%s: empty file", file)
	}
	return &doc, nil
}

// DecodeStrict decodes node into v, reporting unknown keys and type errors with
// file:line. Top-level keys named in also are the caller's to decode: neither
// unknown nor decoded into v.
func DecodeStrict(file string, node *yaml.Node, v any, also ...string) []error {
	errs := unknownKeys(file, node, reflect.TypeOf(v), also...)
	if err := node.Decode(v); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			for _, m := range te.Errors {
				errs = append(errs, atLine(file, typeMessage(node, m)))
			}
		} else {
			errs = append(errs, fmt.Errorf("%s: %v", file, err))
		}
	}
	return errs
}

var lineMsg = regexp.MustCompile(`^line (\d+): (.*)$`)

// yaml's own words for a value of the wrong type.
var unmarshalMsg = regexp.MustCompile("^line (\\d+): cannot unmarshal !!\\w+ `(.*)` into (\\S+)$")

// typeMessage rewrites yaml's "line N: cannot unmarshal !!str `sure` into bool"
// as "line N: poisson: \"sure\" is not true or false": the key, and what it takes.
func typeMessage(node *yaml.Node, msg string) string {
	m := unmarshalMsg.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	line, _ := strconv.Atoi(m[1])
	want := "of type " + m[3]
	switch t := strings.TrimPrefix(m[3], "*"); {
	case t == "bool":
		want = "true or false"
	case strings.HasPrefix(t, "float"):
		want = "a number"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		want = "a whole number"
	case t == "string":
		want = "text"
	case strings.HasPrefix(t, "[]"):
		want = "a list"
	case strings.HasPrefix(t, "map["):
		want = "a mapping"
	}
	if key := keyAt(node, line, m[2]); key != "" {
		return fmt.Sprintf("line %d: %s: %q is not %s", line, key, m[2], want)
	}
	return fmt.Sprintf("line %d: %q is not %s", line, m[2], want)
}

// keyAt finds the key whose value is the scalar value at line, below node.
func keyAt(n *yaml.Node, line int, value string) string {
	if n == nil {
		return ""
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			v := n.Content[i+1]
			if v.Kind == yaml.ScalarNode && v.Line == line && v.Value == value {
				return n.Content[i].Value
			}
		}
	}
	for _, c := range n.Content {
		if k := keyAt(c, line, value); k != "" {
			return k
		}
	}
	return ""
}

// atLine turns yaml's "line N: msg" into "file:N: msg".
func atLine(file, msg string) error {
	if m := lineMsg.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: %s", file, m[1], m[2])
	}
	return fmt.Errorf("%s: %s", file, msg)
}

var (
	unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
	nodeType        = reflect.TypeOf(yaml.Node{})
)

// unknownKeys walks node along type t and reports mapping keys t has no field for;
// keys in also, at the top level, are known too (decoded by the caller).
func unknownKeys(file string, node *yaml.Node, t reflect.Type, also ...string) []error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if node.Kind == yaml.DocumentNode && len(node.Content) > 0 {
		node = node.Content[0]
	}
	if node.Kind == yaml.AliasNode && node.Alias != nil {
		node = node.Alias
	}
	if t == nodeType || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // decoded later, or by its own UnmarshalYAML
	}
	var errs []error
	switch t.Kind() {
	case reflect.Struct:
		if node.Kind != yaml.MappingNode {
			return nil // yaml reports the type error
		}
		fields, open := yamlFields(t)
		names := slices.Collect(maps.Keys(fields))
		names = append(names, also...)
		sort.Strings(names)
		for i := 0; i+1 < len(node.Content); i += 2 {
			k, v := node.Content[i], node.Content[i+1]
			if k.Value == "<<" {
				continue // merge key
			}
			ft, ok := fields[k.Value]
			if !ok && (open || slices.Contains(also, k.Value)) {
				continue // the caller's, or a map inlined in the struct's
			}
			if !ok {
				errs = append(errs, fmt.Errorf("%s:%d: unknown key %q (known: %s)", file, k.Line, k.Value, strings.Join(names, ", ")))
				continue
			}
			errs = append(errs, unknownKeys(file, v, ft)...)
		}
	case reflect.Map:
		if node.Kind == yaml.MappingNode {
			for i := 1; i < len(node.Content); i += 2 {
				errs = append(errs, unknownKeys(file, node.Content[i], t.Elem())...)
			}
		}
	case reflect.Slice:
		if node.Kind == yaml.SequenceNode {
			for _, c := range node.Content {
				errs = append(errs, unknownKeys(file, c, t.Elem())...)
			}
		}
	}
	return errs
}

// yamlFields are the keys a struct type takes, with their types; open is true
// when it inlines a map, which takes any other key (its owner checks them).
func yamlFields(t reflect.Type) (fields map[string]reflect.Type, open bool) {
	fields = map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opts == "inline" && f.Type.Kind() == reflect.Map {
			open = true
		}
		if name == "" || name == "-" {
			continue
		}
		fields[name] = f.Type
	}
	return fields, open
}

var envRef = regexp.MustCompile(`\$\{([^}]*)\}`)
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// PathError is a problem at a dotted key path of a YAML document.
type PathError struct {
	Path string
	Err  error
}

// A Secret is the value of a ${NAME} reference that is a secret, and where it is.
type Secret struct {
	Value, Name, Path string
	Line              int
}

// ExpandEnv replaces ${NAME} in every scalar of node with the variable's value. An
// unset or malformed reference is an error naming file:line, with the key path where
// it occurs. isSecret says, from the dotted key path and the variable name, whether
// the value is a secret; secret values are returned so that they can be redacted
// everywhere.
func ExpandEnv(file string, node *yaml.Node, isSecret func(path, name string) bool) (secrets []Secret, errs []PathError) {
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], strings.TrimPrefix(path+"."+n.Content[i].Value, "."))
			}
		case yaml.ScalarNode:
			if !strings.Contains(n.Value, "${") {
				return
			}
			n.Value = envRef.ReplaceAllStringFunc(n.Value, func(ref string) string {
				name := ref[2 : len(ref)-1]
				if !envName.MatchString(name) {
					errs = append(errs, PathError{path, fmt.Errorf("%s:%d: %s is not a valid ${ENV_VAR} reference", file, n.Line, ref)})
					return ref
				}
				val, ok := os.LookupEnv(name)
				if !ok {
					errs = append(errs, PathError{path, fmt.Errorf("%s:%d: environment variable %s is not set (referenced by %s)", file, n.Line, name, path)})
					return ref
				}
				if isSecret(path, name) {
					secrets = append(secrets, Secret{Value: val, Name: name, Path: path, Line: n.Line})
				}
				return val
			})
		}
	}
	walk(node, "")
	return secrets, errs
}

// Duration is a YAML duration such as "300s" or "5m".
type Duration time.Duration

// UnmarshalYAML implements yaml.Unmarshaler; a bad value is collected with its line.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %q is not a duration (e.g. 5s, 300ms, 10m)", n.Line, n.Value)}}
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration back in its text form.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// LineOf returns the line of the value at a key path below a mapping node (or a
// document whose root is one), or of the deepest key found.
func LineOf(n *yaml.Node, path ...string) int {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	return lineOf(n, path...)
}

func lineOf(n *yaml.Node, path ...string) int {
	if n == nil {
		return 0
	}
	line := n.Line
	for _, key := range path {
		if n.Kind != yaml.MappingNode {
			return line
		}
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				line, n, found = n.Content[i].Line, n.Content[i+1], true
				break
			}
		}
		if !found {
			return line
		}
	}
	return line
}

// mappingValue returns the value node of key in a mapping, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
