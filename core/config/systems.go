package config

import (
	"crypto/x509"
	_ "embed"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cmpbench/cmpbench/core"
	"github.com/cmpbench/cmpbench/core/provision"
	"github.com/cmpbench/cmpbench/core/redact"
)

//go:embed builtin.yaml
var builtinSystems []byte

// BuiltinFile names the built-in definitions in messages and listings.
const BuiltinFile = "built-in"

// DefaultFile is read when --config is not given and the file exists.
const DefaultFile = "cmpbench.yaml"

// Placeholders a provision command may use.
const (
	PortPlaceholder      = "{port}"
	DirPlaceholder       = "{dir}"
	EndpointsPlaceholder = "{endpoints}" // in provision.setup: every node's host:port
	// NodePlaceholder is the node's number (0, 1, ...); {each:TEMPLATE} is TEMPLATE
	// filled in for every node, joined with commas, {each_line:TEMPLATE} with
	// newlines (provision.EachPrefix, EachLinePrefix).
	NodePlaceholder = "{node}"
	// DataGiBPlaceholder is room for the data the suite's phases write to the
	// system, in whole GiB: four times the estimate (plan.Estimate.Bytes, which
	// leaves out the server's own overhead and what closed-loop inserts add), at
	// least 1 — for sizing a storage file (Aerospike's filesize {data_gib}G).
	DataGiBPlaceholder = "{data_gib}"
)

// Defaults for provisioned systems.
const (
	DefaultReadyTimeout = 15 * time.Second
	DefaultStopTimeout  = 20 * time.Second
)

// SystemsFile is the layout of a systems YAML file.
type SystemsFile struct {
	Systems map[string]*System `yaml:"systems"`
	// Profiles define or override adapter profiles (for resp: commands per product);
	// the adapter reads them, so their content is checked when a system opens.
	Profiles map[string]yaml.Node `yaml:"profiles"`
}

// System is one system definition.
type System struct {
	Description string            `yaml:"description"`
	Adapter     string            `yaml:"adapter"`
	Profile     string            `yaml:"profile"`
	Endpoint    string            `yaml:"endpoint"`
	Provision   *Provision        `yaml:"provision"`
	TLS         *core.TLSConfig   `yaml:"tls"`
	Auth        *Auth             `yaml:"auth"`
	Timeout     Duration          `yaml:"timeout"`
	Options     map[string]string `yaml:"options"`
	// TopOptions are the system's other keys: options its adapter lets be
	// written as keys of the system itself (core.Option TopLevel: the resp
	// adapter's cluster and resp, the aerospike adapter's namespace), as
	// systems files did before adapters declared their options. The adapter's
	// declaration decides which it takes (CheckOptions).
	TopOptions map[string]string `yaml:",inline"`
	Cost       *Cost             `yaml:"cost"`
	// Disposable lets cmpbench empty the system before a load; without it a load into
	// a system that holds data is refused.
	Disposable bool `yaml:"disposable"`
	// RestartWait is, for a system cmpbench does not start, how long a load's
	// restart check waits for someone to restart the server (every node): cmpbench
	// notices the restart from the server's uptime, waits until it is ready and
	// validates the data again. Without it the check is skipped for such a system.
	RestartWait Duration `yaml:"restart_wait"`

	// ProfileData is the profile this file defines under the system's profile name.
	ProfileData []byte `yaml:"-"`

	// Name is the key the system is defined under.
	Name string `yaml:"-"`
	// Source is where it was defined: "file:line" or "built-in".
	Source string `yaml:"-"`
	// Raw is the definition as written, ${ENV} references unexpanded: safe to archive.
	Raw map[string]any `yaml:"-"`
	// optionAt is where each option is written ("file:line: system \"x\""), for
	// CheckOptions; at is where the system is.
	optionAt map[string]string
	at       string
	// unusable holds the problems that depend on the environment, raised by Get.
	unusable []error
}

// Provision starts a local server for the system.
type Provision struct {
	// Command is the server's command line; {port} and {dir} are filled in.
	Command      []string `yaml:"command"`
	CPUs         string   `yaml:"cpus"` // taskset CPU list, e.g. "0" or "2-3"
	ReadyTimeout Duration `yaml:"ready_timeout"`
	StopTimeout  Duration `yaml:"stop_timeout"`
	// ReadyPerMillion and StopPerMillion are added to the ready and stop timeouts
	// per million records the server holds (what the last load wrote): a server
	// whose start or stop grows with its data, such as Aerospike Community
	// Edition's cold start, which scans the device before it opens its port.
	ReadyPerMillion Duration `yaml:"ready_per_million"`
	StopPerMillion  Duration `yaml:"stop_per_million"`
	// Nodes starts that many servers, each with its own port and directory (a
	// cluster); Setup then runs once, with {endpoints} standing for all of them,
	// e.g. [redis-cli, --cluster, create, "{endpoints}", --cluster-yes].
	Nodes int      `yaml:"nodes"`
	Setup []string `yaml:"setup"`
	// Files are written into each node's directory before it starts (name:
	// content), with the same placeholders as command and {port:NAME} for more free
	// ports: for a server that reads its port from a configuration file.
	// Command and files may use {node}, the node's number, and {each:TEMPLATE},
	// TEMPLATE filled in for every node (its {node}, {port}, {port:NAME}, {dir})
	// and joined with commas: how the members of a cluster name each other.
	Files map[string]string `yaml:"files"`
	// Dirs are created in each node's directory before it starts (relative
	// paths): what its configuration names and the server will not create itself,
	// e.g. Aerospike's [work/smd, udf]. The command stays the server's own, never
	// a shell that prepares them, so that its binary and version are what the
	// archive records.
	Dirs []string `yaml:"dirs"`
	// Logs are files in a node's directory that the server logs to (as its
	// configuration names them), besides its standard output and error: a start
	// that fails quotes them, and the archive keeps their end.
	Logs []string `yaml:"logs"`
	// Install says how to get the server when its binary is not on PATH; the
	// run then stops before anything starts and says so.
	Install string `yaml:"install"`
	// PortOffsets are distances from {port} at which the server also listens,
	// fixed in its code (Pika: 2000 and 10001): {port} is chosen so that those
	// ports are free too.
	PortOffsets []int `yaml:"port_offsets"`
}

// Auth credentials; the password must be a ${ENV_VAR} reference.
type Auth struct {
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	// AccessKey is a managed service's key (Azure Managed Redis), sent as the password
	// of the default user; it excludes username and password.
	AccessKey string `yaml:"access_key"`
}

// Cost of a system, for cost-per-throughput tables.
type Cost struct {
	USDPerMonth float64 `yaml:"usd_per_month"`
}

// givenOptions are the options the system sets, from options: and the
// top-level keys.
func (s *System) givenOptions() map[string]string {
	return s.SystemConfig().Options
}

// CheckOptions checks the system's options against those its adapter declares,
// each problem with the file:line of the option: an unknown name (naming the
// known ones), a bad value, a required option missing, and an option written at
// the top level that the adapter does not take there.
func (s *System) CheckOptions(declared []core.Option) []error {
	byName := map[string]core.Option{}
	for _, o := range declared {
		byName[o.Name] = o
	}
	var errs []error
	for _, p := range core.CheckOptions(s.Adapter, declared, s.givenOptions()) {
		if _, top := s.TopOptions[p.Name]; top && byName[p.Name].Name == "" {
			continue // an unknown key, said below
		}
		where := s.at
		if a, ok := s.optionAt[p.Name]; ok {
			where = a
		}
		errs = append(errs, fmt.Errorf("%s: %w", where, p.Err))
	}
	for _, k := range slices.Sorted(maps.Keys(s.TopOptions)) {
		switch o, ok := byName[k]; {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: unknown key %q (known: %s)", s.optionAt[k], k, strings.Join(systemKeys(declared), ", ")))
		case !o.TopLevel:
			errs = append(errs, fmt.Errorf("%s: %s is an option of adapter %s: write it under options: {%s: ...}", s.optionAt[k], k, s.Adapter, k))
		}
	}
	return errs
}

// systemKeys are the keys a system of an adapter that declares these options
// takes: cmpbench's own and the adapter's top-level options.
func systemKeys(declared []core.Option) []string {
	fields, _ := yamlFields(reflect.TypeFor[System]())
	keys := slices.Collect(maps.Keys(fields))
	for _, o := range declared {
		if o.TopLevel {
			keys = append(keys, o.Name)
		}
	}
	slices.Sort(keys)
	return keys
}

// adapterOption finds the option an adapter's problem names, as the SDK README
// asks adapters to write them: "option NAME: ..." or "unknown option \"NAME\"".
var adapterOption = regexp.MustCompile(`^(?:option ([A-Za-z0-9_.-]+):|unknown option "([^"]+)")`)

// AdapterProblems places what an adapter's own check of the system found
// (core.SystemValidator): every line of err is a problem (a joined error is one a
// line, also as text across the plugin boundary), reported at the line of the
// option it names, or else at the system's. A problem with an option that
// CheckOptions reports against declared is left out: each is said once.
func (s *System) AdapterProblems(err error, declared []core.Option) []error {
	if err == nil {
		return nil
	}
	reported := map[string]bool{}
	for _, p := range core.CheckOptions(s.Adapter, declared, s.givenOptions()) {
		reported[p.Name] = true
	}
	var errs []error
	for _, line := range strings.Split(err.Error(), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		where := s.at
		if m := adapterOption.FindStringSubmatch(line); m != nil {
			name := m[1] + m[2]
			if reported[name] {
				continue
			}
			if a, ok := s.optionAt[name]; ok {
				where = a
			}
		}
		errs = append(errs, fmt.Errorf("%s: %s", where, line))
	}
	return errs
}

// ProvisionSpec is how the system's servers are started: its provision block,
// with the ready and stop timeouts given (a run's grow with the data: see
// ReadyPerMillion) and the room {data_gib} gives for its data. The one place a
// definition becomes a provision.Spec.
func (s *System) ProvisionSpec(ready, stop time.Duration, dataGiB int64) provision.Spec {
	p := s.Provision
	return provision.Spec{Name: s.Name, Command: p.Command, CPUs: p.CPUs, StopTimeout: stop, ReadyTimeout: ready,
		Nodes: p.Nodes, Setup: p.Setup, Files: p.Files, Dirs: p.Dirs, Logs: p.Logs, PortOffsets: p.PortOffsets,
		Vars: map[string]string{DataGiBPlaceholder: strconv.FormatInt(dataGiB, 10)}}
}

// Provisioned reports whether cmpbench starts the system itself.
func (s *System) Provisioned() bool { return s.Provision != nil }

// Endpoints are the addresses the systems file gives for the system: its
// endpoint, or none for a system cmpbench starts (whose servers' addresses are
// known once they run: provision.Server.Endpoints).
func (s *System) Endpoints() []string {
	if s.Endpoint == "" {
		return nil
	}
	return []string{s.Endpoint}
}

// SystemConfig is what the adapter needs to reach the system whose nodes listen
// at nodes (host:port, in order): its Endpoint is the first, its Nodes all of them.
func (s *System) SystemConfig(nodes ...string) core.SystemConfig {
	c := core.SystemConfig{
		Name: s.Name, Adapter: s.Adapter, Profile: s.Profile, ProfileData: s.ProfileData,
		Timeout: time.Duration(s.Timeout), Options: map[string]string{},
	}
	if len(nodes) > 0 {
		c.Endpoint, c.Nodes = nodes[0], slices.Clone(nodes)
	}
	maps.Copy(c.Options, s.TopOptions)
	maps.Copy(c.Options, s.Options)
	if t := s.TLS; t != nil {
		c.TLS = *t
	}
	if a := s.Auth; a != nil {
		c.Auth = core.AuthConfig{Username: a.Username, Password: a.Password}
		if a.AccessKey != "" {
			c.Auth = core.AuthConfig{Password: a.AccessKey}
		}
	}
	return c
}

// Systems is every system definition available to a run.
type Systems struct {
	byName map[string]*System
	// Secrets are the values of secret ${ENV} references, for redaction.
	Secrets []string
}

// Redactor masks the secrets of every system: anything printed or written that
// may hold a system's command line, error or configuration goes through it.
func (s *Systems) Redactor() *redact.Redactor { return redact.New(s.Secrets...) }

// LoadSystems reads the built-in definitions, then path on top of them. A missing
// file is an error only when required (the user named it with --config).
func LoadSystems(path string, required bool) (*Systems, error) {
	s := &Systems{byName: map[string]*System{}}
	if err := s.load(BuiltinFile, builtinSystems); err != nil {
		return nil, fmt.Errorf("built-in systems: %w", err)
	}
	if path == "" {
		return s, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && !required {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("systems file: %w", err)
	}
	if err := s.load(path, data); err != nil {
		return nil, err
	}
	return s, nil
}

// LoadSystemsData reads the built-in definitions, then a systems file's text
// (named file in messages) on top of them.
func LoadSystemsData(file string, data []byte) (*Systems, error) {
	s, err := LoadSystems("", false)
	if err != nil {
		return nil, err
	}
	if err := s.load(file, data); err != nil {
		return nil, err
	}
	return s, nil
}

// systemsLoad is one systems file being read: the file as written and as
// decoded, and the problems found so far.
type systemsLoad struct {
	file string
	doc  *yaml.Node
	f    SystemsFile
	// nodes is the systems: mapping (nil when there is none).
	nodes *yaml.Node
	// raw is each system as written, ${ENV} references unexpanded (what the
	// archive keeps); rawAuth its secret fields as written, by field.
	raw     map[string]map[string]any
	rawAuth map[string]map[string]string
	// deferred are the problems that depend on the environment, by system.
	deferred map[string][]error
	// checked are the adapter/profile pairs checked.
	checked map[string]bool
	errs    []error
}

// load reads a systems file's text (named file in messages) on top of the
// definitions so far, reporting every problem at once.
func (s *Systems) load(file string, data []byte) error {
	doc, err := Parse(file, data)
	if err != nil {
		return err
	}
	l := &systemsLoad{file: file, doc: doc, raw: rawSystems(doc), rawAuth: rawAuth(doc), checked: map[string]bool{}}
	secrets := l.expandEnv()
	l.decode()
	for _, name := range slices.Sorted(maps.Keys(l.f.Systems)) {
		if sys := l.system(name); sys != nil {
			s.byName[name] = sys
		}
	}
	for _, sec := range secrets {
		s.Secrets = append(s.Secrets, sec.Value)
	}
	if len(l.errs) > 0 {
		return Errors(l.errs)
	}
	return nil
}

// rawSystems is each system of doc as written, before expansion: what the
// archive keeps.
func rawSystems(doc *yaml.Node) map[string]map[string]any {
	var raw struct {
		Systems map[string]map[string]any `yaml:"systems"`
	}
	_ = doc.Decode(&raw)
	return raw.Systems
}

// rawAuth is the secret fields of each system of doc as written, to check that
// they are ${ENV} references.
func rawAuth(doc *yaml.Node) map[string]map[string]string {
	rawAuth := map[string]map[string]string{}
	if sn := mappingValue(doc, "systems"); sn != nil {
		for i := 0; i+1 < len(sn.Content); i += 2 {
			auth := mappingValue(sn.Content[i+1], "auth")
			for _, f := range []string{"password", "access_key"} {
				if v := mappingValue(auth, f); v != nil {
					if rawAuth[sn.Content[i].Value] == nil {
						rawAuth[sn.Content[i].Value] = map[string]string{}
					}
					rawAuth[sn.Content[i].Value][f] = v.Value
				}
			}
		}
	}
	return rawAuth
}

// expandEnv expands the file's ${ENV} references and returns the secrets among
// them, keeping each problem with the system it belongs to.
func (l *systemsLoad) expandEnv() []Secret {
	// Problems that depend on the environment (an unset variable, a missing
	// certificate file) belong to their system and are raised only when it is used,
	// so that a file can hold systems for several machines.
	secrets, envErrs := ExpandEnv(l.file, l.doc, isSecret)
	// A secret cmpbench could not tell from what it writes itself would be
	// redacted out of numbers, hashes and names, corrupting the archive: such a
	// secret is refused where the reference is, before anything runs.
	for _, sec := range secrets {
		if why := weakSecret(sec.Value); why != "" {
			envErrs = append(envErrs, PathError{sec.Path, fmt.Errorf("%s:%d: ${%s} is a secret (%s), but its value %s, so it cannot be kept out of the archive without corrupting it: use a real secret, or a variable whose name does not say PASS, SECRET, TOKEN, KEY or CRED for a value that is not one",
				l.file, sec.Line, sec.Name, secretWhy(sec.Path), why)})
		}
	}
	l.deferred = map[string][]error{}
	for _, e := range envErrs {
		parts := strings.SplitN(e.Path, ".", 3)
		if len(parts) >= 2 && parts[0] == "systems" {
			l.deferred[parts[1]] = append(l.deferred[parts[1]], e.Err)
		} else {
			l.errs = append(l.errs, e.Err)
		}
	}
	return secrets
}

// decode decodes the expanded file strictly and finds its systems: mapping.
func (l *systemsLoad) decode() {
	l.errs = append(l.errs, DecodeStrict(l.file, l.doc, &l.f)...)
	l.nodes = mappingValue(l.doc, "systems")
	if l.nodes == nil {
		l.errs = append(l.errs, fmt.Errorf("%s: no \"systems:\" mapping", l.file))
	}
}

// system completes and checks the system defined under name, or returns nil
// when its definition is empty.
func (l *systemsLoad) system(name string) *System {
	file := l.file
	sys := l.f.Systems[name]
	if sys == nil {
		l.errs = append(l.errs, fmt.Errorf("%s:%d: system %q is empty", file, lineOf(l.nodes, name), name))
		return nil
	}
	node := mappingValue(l.nodes, name)
	sys.Name = name
	sys.Source = file
	if file != BuiltinFile {
		sys.Source = fmt.Sprintf("%s:%d", file, lineOf(l.nodes, name))
	}
	sys.Raw = l.raw[name]
	verrs, envDependent := sys.validate(file, node, lineOf(l.nodes, name), l.rawAuth[name])
	l.errs = append(l.errs, verrs...)
	sys.unusable = append(l.deferred[name], envDependent...)
	if pn, ok := l.f.Profiles[sys.Profile]; ok && sys.Profile != "" {
		b, err := yaml.Marshal(&pn)
		if err != nil {
			l.errs = append(l.errs, fmt.Errorf("%s: profile %q: %v", file, sys.Profile, err))
		}
		sys.ProfileData = b
	}
	l.errs = append(l.errs, checkProfile(file, sys, l.f.Profiles, node, l.checked)...)
	if a, ok := core.BuiltinAdapter(sys.Adapter); ok {
		// A third-party plugin's options are checked when it is found
		// (cmd/cmpbench): declaring them takes running it.
		l.errs = append(l.errs, sys.CheckOptions(a.Info().Options)...)
	}
	return sys
}

// checkProfile checks the profile a system names against its adapter's schema, when
// the adapter is built in and has one: an unknown profile, an unknown key or a bad
// value is found with file:line when the file is read, not when the system opens.
func checkProfile(file string, sys *System, defined map[string]yaml.Node, node *yaml.Node, checked map[string]bool) []error {
	schema, ok := core.ProfileSchemaOf(sys.Adapter)
	if !ok || sys.Profile == "" {
		return nil
	}
	pn, ok := defined[sys.Profile]
	if !ok {
		if builtin := schema.Builtin(); !slices.Contains(builtin, sys.Profile) {
			return []error{fmt.Errorf("%s:%d: system %q: profile %q is neither built in (%s) nor defined under the profiles: section",
				file, lineOf(node, "profile"), sys.Name, sys.Profile, strings.Join(builtin, ", "))}
		}
		return nil
	}
	key := sys.Adapter + "/" + sys.Profile
	if checked[key] {
		return nil
	}
	checked[key] = true
	v := schema.New()
	if errs := DecodeStrict(file, &pn, v); len(errs) > 0 {
		return errs
	}
	if err := schema.Check(sys.Profile, v); err != nil {
		return []error{fmt.Errorf("%s:%d: %v", file, pn.Line, err)}
	}
	return nil
}

// isSecret marks the values of password fields, and of variables whose names say
// they hold credentials, as secrets.
func isSecret(path, name string) bool {
	if strings.HasSuffix(path, ".password") || strings.HasSuffix(path, ".access_key") {
		return true
	}
	n := strings.ToUpper(name)
	for _, w := range []string{"PASS", "SECRET", "TOKEN", "KEY", "CRED"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

var (
	cpuList      = regexp.MustCompile(`^\d+(-\d+)?(,\d+(-\d+)?)*$`)
	placeholder  = regexp.MustCompile(`\{[a-z_]+(:[^{}\s]*)?\}`)
	namedPort    = regexp.MustCompile(`^\{port:[a-z0-9_-]+\}$`)
	onlyEnvRef   = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*\}$`)
	systemName   = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	minSecretLen = 8
)

// systemCheck is one system's definition being checked: where it is written,
// and the problems found so far.
type systemCheck struct {
	s       *System
	file    string
	node    *yaml.Node
	keyLine int
	// errs are the definition's problems; envDependent those that depend on
	// the environment, raised only when the system is used.
	errs, envDependent []error
}

// validate reports every problem with one system, with file:line.
func (s *System) validate(file string, node *yaml.Node, keyLine int, rawSecrets map[string]string) (errs, envDependent []error) {
	c := &systemCheck{s: s, file: file, node: node, keyLine: keyLine}
	c.recordPlaces()
	c.checkNameAndAdapter()
	c.checkEndpointOrProvision()
	c.checkRestartWait()
	if p := s.Provision; p != nil {
		c.checkProvision(p)
	}
	if t := s.TLS; t != nil {
		c.checkTLS(t)
	}
	if a := s.Auth; a != nil {
		c.checkAuth(a, rawSecrets)
	}
	c.checkTLSVersion()
	c.checkTimeoutAndCost()
	return c.errs, c.envDependent
}

// at is "file:line: system \"name\"", the line that of the key at path in the
// system's definition, or of the system's own key.
func (c *systemCheck) at(path ...string) string {
	line := c.keyLine
	if len(path) > 0 {
		line = lineOf(c.node, path...)
	}
	return fmt.Sprintf("%s:%d: system %q", c.file, line, c.s.Name)
}

// problem records a problem with the definition.
func (c *systemCheck) problem(format string, a ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, a...))
}

// recordPlaces notes where the system and each of its options are written, and
// which options are keys of the system itself, for CheckOptions.
func (c *systemCheck) recordPlaces() {
	s := c.s
	s.at = c.at()
	s.optionAt = map[string]string{}
	for k := range s.Options {
		s.optionAt[k] = c.at("options", k)
	}
	for k := range s.TopOptions {
		s.optionAt[k] = c.at(k)
	}
}

// checkNameAndAdapter checks the system's name and that it names an adapter.
func (c *systemCheck) checkNameAndAdapter() {
	if !systemName.MatchString(c.s.Name) {
		c.problem("%s: name must be lower-case letters, digits, '.', '_' or '-'", c.at())
	}
	if c.s.Adapter == "" {
		c.problem("%s: adapter is required (e.g. adapter: resp)", c.at())
	}
}

// checkEndpointOrProvision checks that the system has either an endpoint or a
// provision block, and the endpoint; an endpoint set from the environment is
// this machine's problem.
func (c *systemCheck) checkEndpointOrProvision() {
	s := c.s
	switch {
	case s.Endpoint == "" && s.Provision == nil:
		c.problem("%s: needs either endpoint (host:port) or provision (a command to start it)", c.at())
	case s.Endpoint != "" && s.Provision != nil:
		c.problem("%s: has both endpoint and provision; a provisioned system listens on a port cmpbench picks", c.at("endpoint"))
	case s.Endpoint != "":
		raw, _ := s.Raw["endpoint"].(string)
		if err := checkEndpoint(s.Endpoint); err != nil {
			err := fmt.Errorf("%s: endpoint %q %v", c.at("endpoint"), s.Endpoint, err)
			switch {
			case strings.Contains(s.Endpoint, "${"): // an unset variable, reported already
			case strings.Contains(raw, "${"): // set from the environment: this machine's problem
				c.envDependent = append(c.envDependent, err)
			default:
				c.errs = append(c.errs, err)
			}
		}
	}
}

// checkRestartWait checks restart_wait: a positive duration, on a system with
// an endpoint.
func (c *systemCheck) checkRestartWait() {
	if s := c.s; s.RestartWait != 0 && (s.Provision != nil || s.RestartWait < 0) {
		c.problem("%s: restart_wait is how long to wait for someone to restart a system cmpbench does not start: a positive duration, on a system with an endpoint", c.at("restart_wait"))
	}
}

// checkProvision checks the provision block: the command and what goes into
// each node's directory, then the timeouts, nodes, setup and CPUs.
func (c *systemCheck) checkProvision(p *Provision) {
	if len(p.Command) == 0 || p.Command[0] == "" {
		c.problem("%s: provision.command is empty", c.at("provision", "command"))
	} else {
		c.checkCommandAndFiles(p)
		c.checkDirsOffsetsLogs(p)
		c.checkForeground(p)
	}
	c.checkProvisionSettings(p)
}

// checkCommandAndFiles checks that the command (or a file) has {port}, the
// placeholders of the command and the files, and the files' names.
func (c *systemCheck) checkCommandAndFiles(p *Provision) {
	hasPort := func(a string) bool { return strings.Contains(a, PortPlaceholder) }
	if !slices.ContainsFunc(p.Command, hasPort) && !slices.ContainsFunc(slices.Collect(maps.Values(p.Files)), hasPort) {
		c.problem("%s: provision.command (or one of provision.files) must contain {port}, where the server listens", c.at("provision", "command"))
	}
	for _, a := range p.Command {
		c.checkPlaceholders("provision.command", []string{"provision", "command"}, a)
	}
	for _, name := range slices.Sorted(maps.Keys(p.Files)) {
		if name != filepath.Base(name) || name == "." || name == ".." || name == "server.log" {
			c.problem("%s: provision.files: %q must be a plain file name (written into the server's directory)", c.at("provision", "files"), name)
		}
		c.checkPlaceholders("provision.files."+name, []string{"provision", "files", name}, p.Files[name])
	}
}

// checkPlaceholders checks that text (what is written at path, named where in
// messages) has only known placeholders, and balanced braces.
func (c *systemCheck) checkPlaceholders(where string, path []string, text string) {
	for _, ph := range placeholder.FindAllString(text, -1) {
		if ph != PortPlaceholder && ph != DirPlaceholder && ph != NodePlaceholder && ph != DataGiBPlaceholder && !namedPort.MatchString(ph) {
			c.problem("%s: %s has unknown placeholder %s (known: {port}, {port:NAME}, {dir}, {node}, {data_gib}, {each:...}, {each_line:...})", c.at(path...), where, ph)
		}
	}
	if strings.Count(text, "{") != strings.Count(text, "}") {
		c.problem("%s: %s has unbalanced braces: each { of a placeholder needs its }", c.at(path...), where)
	}
}

// checkDirsOffsetsLogs checks the directories and logs (relative paths inside
// the server's directory) and the port offsets.
func (c *systemCheck) checkDirsOffsetsLogs(p *Provision) {
	for _, d := range p.Dirs {
		if !filepath.IsLocal(d) {
			c.problem("%s: provision.dirs: %q must be a relative path inside the server's directory", c.at("provision", "dirs"), d)
		}
	}
	for _, off := range p.PortOffsets {
		if off == 0 || off < -65534 || off > 65534 {
			c.problem("%s: provision.port_offsets: %d is not a distance from one port to another", c.at("provision", "port_offsets"), off)
		}
	}
	for _, l := range p.Logs {
		if !filepath.IsLocal(l) || l == "server.log" {
			c.problem("%s: provision.logs: %q must be a relative path inside the server's directory (its output goes to server.log already)", c.at("provision", "logs"), l)
		}
	}
}

// checkProvisionSettings checks the provision block's timeouts, nodes, setup
// and CPU list.
func (c *systemCheck) checkProvisionSettings(p *Provision) {
	for _, d := range []struct {
		key string
		v   Duration
	}{{"ready_timeout", p.ReadyTimeout}, {"stop_timeout", p.StopTimeout}, {"ready_per_million", p.ReadyPerMillion}, {"stop_per_million", p.StopPerMillion}} {
		if d.v < 0 {
			c.problem("%s: provision.%s must not be negative", c.at("provision", d.key), d.key)
		}
	}
	if p.Nodes < 0 || p.Nodes > 64 {
		c.problem("%s: provision.nodes must be between 1 and 64", c.at("provision", "nodes"))
	}
	if len(p.Setup) > 0 && !slices.ContainsFunc(p.Setup, func(a string) bool { return strings.Contains(a, EndpointsPlaceholder) }) {
		c.problem("%s: provision.setup should name the servers with {endpoints}", c.at("provision", "setup"))
	}
	if p.CPUs != "" && !cpuList.MatchString(p.CPUs) {
		c.problem("%s: provision.cpus %q is not a CPU list such as 0, 2-3 or 0,2", c.at("provision", "cpus"), p.CPUs)
	}
}

// checkTLS checks that TLS settings come with tls.enabled, that a certificate
// comes with its key, and the PEM files (this machine's problem).
func (c *systemCheck) checkTLS(t *core.TLSConfig) {
	if !t.Enabled && (t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" || t.ServerName != "" || t.InsecureSkipVerify) {
		c.problem("%s: tls settings are given but tls.enabled is not true; cmpbench never falls back to plaintext silently", c.at("tls"))
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		c.problem("%s: tls.cert_file and tls.key_file go together", c.at("tls"))
	}
	for _, f := range []struct{ key, path string }{{"ca_file", t.CAFile}, {"cert_file", t.CertFile}, {"key_file", t.KeyFile}} {
		if f.path == "" {
			continue
		}
		if err := checkPEM(f.key, f.path); err != nil {
			c.envDependent = append(c.envDependent, fmt.Errorf("%s: tls.%s: %v", c.at("tls", f.key), f.key, err))
		}
	}
}

// checkAuth checks that secrets are ${ENV} references (rawSecrets are the
// fields as written) and not common words, and which fields go together.
func (c *systemCheck) checkAuth(a *Auth, rawSecrets map[string]string) {
	for _, f := range []struct{ key, value string }{{"password", a.Password}, {"access_key", a.AccessKey}} {
		raw := rawSecrets[f.key]
		switch {
		case raw != "" && !onlyEnvRef.MatchString(raw):
			c.problem("%s: auth.%s must be a ${ENV_VAR} reference; secrets never go in the file", c.at("auth", f.key), f.key)
		case f.value != "" && weakSecret(f.value) != "":
			// Refused where the reference is expanded (load).
		case f.value != "" && commonWord(f.value):
			c.problem("%s: auth.%s is a common word (%q) that cmpbench's own output holds, so it cannot be kept out of the archive; use a real secret", c.at("auth", f.key), f.key, strings.ToLower(f.value))
		}
	}
	if a.AccessKey != "" && (a.Username != "" || a.Password != "") {
		c.problem("%s: auth.access_key is used alone; give either it or username/password", c.at("auth", "access_key"))
	}
	if a.Username != "" && a.Password == "" {
		c.problem("%s: auth.username needs auth.password", c.at("auth", "username"))
	}
}

// checkTLSVersion checks tls.min_version.
func (c *systemCheck) checkTLSVersion() {
	if t := c.s.TLS; t != nil && t.MinVersion != "" && t.MinVersion != "1.2" && t.MinVersion != "1.3" {
		c.problem("%s: tls.min_version %q is not 1.2 or 1.3", c.at("tls", "min_version"), t.MinVersion)
	}
}

// checkTimeoutAndCost checks the timeout and the cost.
func (c *systemCheck) checkTimeoutAndCost() {
	if c.s.Timeout < 0 {
		c.problem("%s: timeout must not be negative", c.at("timeout"))
	}
	if cost := c.s.Cost; cost != nil && cost.USDPerMonth <= 0 {
		c.problem("%s: cost.usd_per_month must be positive", c.at("cost", "usd_per_month"))
	}
}

// checkEndpoint checks host:port, the port a number a socket can have.
func checkEndpoint(ep string) error {
	host, port, err := net.SplitHostPort(ep)
	if err != nil || port == "" {
		return errors.New("is not host:port")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("has port %q: a port is a number from 1 to 65535", port)
	}
	if host == "" {
		return errors.New("has no host")
	}
	return nil
}

// checkPEM checks that a TLS file exists and holds what its key says: certificates
// for ca_file and cert_file, a private key for key_file.
func checkPEM(key, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	want := "CERTIFICATE"
	if key == "key_file" {
		want = "PRIVATE KEY"
	}
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if strings.HasSuffix(b.Type, want) {
			if want == "CERTIFICATE" {
				if _, err := x509.ParseCertificate(b.Bytes); err != nil {
					return fmt.Errorf("%s: a certificate that does not parse: %v", path, err)
				}
			}
			return nil
		}
	}
	return fmt.Errorf("%s holds no PEM %s", path, strings.ToLower(want))
}

// commonWords are words cmpbench writes itself (product and adapter names, field
// names) or that no one should use as a password: a secret equal to one of them
// would be found in every archive, redacted or not.
var commonWords = []string{
	"redis", "valkey", "aerospike", "garnet", "dragonfly", "kvrocks", "keydb", "tendis", "lavik", "eloqkv",
	"cmpbench", "memtier", "ycsb", "bench", "benchmark", "resp", "default", "admin", "root", "user", "test",
	"password", "passw0rd", "secret", "changeme", "letmein", "qwerty", "123456", "12345678", "foobared",
}

func commonWord(v string) bool {
	return slices.Contains(commonWords, strings.ToLower(v))
}

// weakSecret says why a secret's value cannot be redacted safely from what
// cmpbench writes, or "": a number (the archive is full of numbers: a password
// 2000 used to turn every 2000 in it into [redacted]), or a value so short that
// it occurs by chance in hashes, ids and words.
func weakSecret(v string) string {
	if len(v) < minSecretLen {
		return fmt.Sprintf("is shorter than %d characters", minSecretLen)
	}
	if strings.Trim(v, "0123456789.,+-_ eE") == "" {
		return "is a number"
	}
	return ""
}

// secretWhy says why a reference at path is a secret.
func secretWhy(path string) string {
	if strings.HasSuffix(path, ".password") || strings.HasSuffix(path, ".access_key") {
		return path[strings.LastIndex(path, ".")+1:]
	}
	return "by its name"
}

// Get returns a system by name.
func (s *Systems) Get(name string) (*System, error) {
	if sys, ok := s.byName[name]; ok {
		if errs := append(slices.Clone(sys.unusable), sys.missingBinaries()...); len(errs) > 0 {
			return nil, Errors(errs)
		}
		return sys, nil
	}
	return nil, fmt.Errorf("system %q is not defined (defined: %s)", name, strings.Join(s.Names(), ", "))
}

// Lookup returns a system's definition even when the environment does not allow
// using it, and those problems; for listings.
func (s *Systems) Lookup(name string) (*System, []error) {
	sys := s.byName[name]
	if sys == nil {
		return nil, []error{fmt.Errorf("system %q is not defined", name)}
	}
	return sys, append(slices.Clone(sys.unusable), sys.missingBinaries()...)
}

// missingBinaries reports the programs a system cmpbench starts needs and this
// machine does not have on PATH (the server, its setup command), saying how to
// get the server when the definition says (provision.install).
func (s *System) missingBinaries() []error {
	p := s.Provision
	if p == nil {
		return nil
	}
	var errs []error
	for i, cmd := range [][]string{p.Command, p.Setup} {
		if len(cmd) == 0 || cmd[0] == "" {
			continue
		}
		if _, err := exec.LookPath(cmd[0]); err != nil {
			how := ""
			if i == 0 && p.Install != "" {
				how = ": " + p.Install
			}
			key := [...]string{"provision.command", "provision.setup"}[i]
			errs = append(errs, fmt.Errorf("%s: %s %s is not on PATH, so cmpbench cannot start it%s", s.at, key, cmd[0], how))
		}
	}
	return errs
}

// Names lists the defined systems, sorted.
func (s *Systems) Names() []string {
	names := make([]string, 0, len(s.byName))
	for n := range s.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
