package resp

import (
	"embed"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
	"go.yaml.in/yaml/v3"

	"github.com/cmpbench/cmpbench/core"
)

// A Profile is what differs between RESP products, as data: the commands that carry
// YCSB's operations, extra commands whose output describes the system, and where the
// product reports its version. Profiles are embedded YAML (profiles/*.yaml); a systems
// file can define its own under `profiles:`.
type Profile struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Commands    struct {
		Read []string `yaml:"read"`
		// Update writes every field of a record (write_all_fields: true) and may
		// replace it; UpdateField writes some fields and must keep the others.
		Update      []string `yaml:"update"`
		UpdateField []string `yaml:"update_field"`
		Insert      []string `yaml:"insert"`
		// How the reply of update and of update_field says that the record was
		// not there: UpdateNil (a nil reply, as LAVIK.HREPLACE gives),
		// UpdateCreated (an integer reply counting the fields the command created,
		// which were all it wrote: HSET, which has created them by then) or
		// UpdateUnchecked (the reply cannot tell: Pika's HMSET answers OK either
		// way; such an UPDATE counts as a success, and the capture says so). A nil
		// reply is not_found in every case. Default: created for HSET, else nil.
		UpdateNotFound      string `yaml:"update_not_found"`
		UpdateFieldNotFound string `yaml:"update_field_not_found"`
	} `yaml:"commands"`
	// Capture lists commands whose replies are kept with the system's capture.
	Capture [][]string `yaml:"capture"`
	// VersionFields are INFO server fields checked before the generic ones.
	VersionFields []string `yaml:"version_fields"`
	// InfoSections are the INFO arguments tried in turn for captures and stats
	// (some servers hide sections from INFO ALL).
	InfoSections []string `yaml:"info_sections"`
	// Count says how to count keys, and whether that is expensive (a disk scan);
	// cmpbench never counts inside a measured window either way.
	Count countSpec `yaml:"count"`
	// Require lists INFO fields the product must report with a given value: Open
	// refuses a server that does not, so that a run is never labelled with a
	// product it did not measure (keydb-flash: INFO memory storage_provider:flash).
	Require []Requirement `yaml:"require"`
	// RESP is the protocol version to force (2 for RESP2-only servers); 0 tries RESP3.
	RESP int `yaml:"resp"`
	// Restricted lists commands the product refuses (managed services); capture and
	// flush skip them instead of failing.
	Restricted []string `yaml:"restricted"`
	// Timeline lists the INFO fields (section.key, as in server_stats.parquet)
	// that the report charts over each long measured phase: memory in use, a
	// storage engine's compactions. Default DefaultTimeline.
	Timeline []string `yaml:"timeline"`
	// DefaultPort and TLS describe how the product is usually reached.
	DefaultPort int  `yaml:"default_port"`
	TLS         bool `yaml:"tls"`
	// Sources are where the profile's facts come from.
	Sources []string `yaml:"sources"`
}

// countSpec is a profile's count: Profile.Count.
type countSpec struct {
	Command   []string `yaml:"command"`
	Expensive bool     `yaml:"expensive"`
	Note      string   `yaml:"note"`
	// Trigger starts the background scan whose result Command reports (Kvrocks
	// DBSIZE SCAN, Pika INFO keyspace 1); Wait says when that result is ready.
	Trigger []string   `yaml:"trigger"`
	Wait    *CountWait `yaml:"wait"`
	// Busy lists texts of the trigger's error replies that mean a scan is
	// already running (Kvrocks: "scanning the db now"): that scan may have
	// started before the last writes, so cmpbench waits for it to end and
	// triggers its own.
	Busy []string `yaml:"busy"`
}

// A Requirement is an INFO field (section.key) and the value the profile's product
// reports there; Why says what another value means.
type Requirement struct {
	Field string `yaml:"field"`
	Value string `yaml:"value"`
	Why   string `yaml:"why"`
}

// A CountWait polls one line of INFO until a triggered key count is ready: when the
// rest of the line matches Ready, or, with Changed, when it differs from what it was
// before the trigger.
type CountWait struct {
	Info    string        `yaml:"info"` // the INFO argument, e.g. keyspace
	Line    string        `yaml:"line"` // the line's prefix, e.g. "# Duration:"
	Ready   string        `yaml:"ready"`
	Changed bool          `yaml:"changed"`
	Timeout time.Duration `yaml:"timeout"` // default DefaultCountWait

	ready *regexp.Regexp
}

// busy reports whether err, the trigger's reply, says that a scan already runs.
func (c *countSpec) busy(err error) bool {
	if _, ok := rueidis.IsRedisErr(err); !ok {
		return false
	}
	return slices.ContainsFunc(c.Busy, func(b string) bool { return strings.Contains(err.Error(), b) })
}

// DefaultTimeline is what a profile charts over a phase unless it says otherwise.
var DefaultTimeline = []string{"memory.used_memory"}

// DefaultCountWait bounds the wait for a triggered key count.
const DefaultCountWait = 10 * time.Minute

// value returns the rest of the watched line in INFO text, trimmed, and whether the
// line is there.
func (w *CountWait) value(info string) (string, bool) {
	for line := range strings.Lines(info) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), w.Line); ok {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}

// done reports whether the count is ready, given the line now and before the trigger.
func (w *CountWait) done(now string, present bool, before string) bool {
	if !present {
		return false
	}
	if w.ready != nil && !w.ready.MatchString(now) {
		return false
	}
	return !w.Changed || now != before
}

//go:embed profiles/*.yaml
var profileFiles embed.FS

// DefaultProfile is used when a system names none.
const DefaultProfile = "redis"

// examplePort is the port of an example endpoint when the profile names none (a
// managed service's is the database's own).
const examplePort = 6379

// Example implements core.Exampler: a server of the profile on this machine at the
// product's usual port, over TLS when the product is usually reached that way.
func (Adapter) Example(profile string) []string {
	lines := []string{"adapter: " + Name}
	port, tls := examplePort, false
	if profile != "" {
		lines = append(lines, "profile: "+profile)
		if p, err := LoadProfile(profile, nil); err == nil {
			if p.DefaultPort > 0 {
				port = p.DefaultPort
			}
			tls = p.TLS
		}
	}
	lines = append(lines, fmt.Sprintf("endpoint: 127.0.0.1:%d", port))
	if tls {
		lines = append(lines, "tls: {enabled: true}")
	}
	return lines
}

// Profiles lists the built-in profile names.
func Profiles() []string {
	return core.YAMLNames(profileFiles, "profiles")
}

// LoadProfile returns the profile a system asks for: data (a profile defined in the
// systems file) when given, else the built-in one of that name.
func LoadProfile(name string, data []byte) (*Profile, error) {
	if name == "" {
		name = DefaultProfile
	}
	where := "systems file"
	if len(data) == 0 {
		b, err := profileFiles.ReadFile("profiles/" + name + ".yaml")
		if err != nil {
			return nil, fmt.Errorf("profile %q is not built in (built in: %s)", name, strings.Join(Profiles(), ", "))
		}
		data, where = b, "built-in profiles/"+name+".yaml"
	}
	var p Profile
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("profile %q (%s): %w", name, where, err)
	}
	if err := p.check(name); err != nil {
		return nil, err
	}
	return &p, nil
}

// ProfileTable implements core.ProfileLister: each built-in profile's default
// port, TLS, protocol, UPDATE command, key count and description.
func (Adapter) ProfileTable() (head []string, rows [][]string, err error) {
	head = []string{"PROFILE", "PORT", "TLS", "RESP", "UPDATE", "KEY COUNT", "DESCRIPTION"}
	for _, n := range Profiles() {
		p, err := LoadProfile(n, nil)
		if err != nil {
			return nil, nil, err
		}
		count := strings.Join(p.Count.Command, " ")
		if len(p.Count.Trigger) > 0 {
			count = strings.Join(p.Count.Trigger, " ") + ", wait, " + count
		}
		if p.Count.Expensive {
			count += " (expensive)"
		}
		proto := "3, falls back to 2"
		if p.RESP == 2 {
			proto = "2"
		}
		port := "per service"
		if p.DefaultPort > 0 {
			port = strconv.Itoa(p.DefaultPort)
		}
		rows = append(rows, []string{n, port, strconv.FormatBool(p.TLS), proto, strings.Join(p.Commands.Update, " "), count, p.Description})
	}
	return head, rows, nil
}

func init() {
	core.RegisterProfileSchema(Name, core.ProfileSchema{
		New:     func() any { return &Profile{} },
		Check:   func(name string, v any) error { return v.(*Profile).check(name) },
		Builtin: Profiles,
	})
}

// check fills in a decoded profile's defaults and reports what is wrong with it.
func (p *Profile) check(name string) error {
	p.setDefaults(name)
	for _, check := range []func(name string) error{
		p.checkUpdateNotFound, p.checkProtocol, p.checkCount, p.checkRequire, p.checkCountWait, p.checkCapture, p.checkTimeline,
	} {
		if err := check(name); err != nil {
			return err
		}
	}
	return nil
}

// setDefaults fills in what the profile leaves out: its name, the commands (HGETALL
// and HSET), INFO's sections, the count command, count.wait's timeout and the
// timeline fields.
func (p *Profile) setDefaults(name string) {
	if p.Name == "" {
		p.Name = name
	}
	def := [...][]string{{"HGETALL"}, {"HSET"}, {"HSET"}, {"HSET"}}
	for i, c := range []*[]string{&p.Commands.Read, &p.Commands.Update, &p.Commands.UpdateField, &p.Commands.Insert} {
		if len(*c) == 0 {
			*c = def[i]
		}
	}
	if len(p.InfoSections) == 0 {
		p.InfoSections = []string{"everything", "all"}
	}
	if len(p.Count.Command) == 0 {
		p.Count.Command = []string{"DBSIZE"}
	}
	if w := p.Count.Wait; w != nil && w.Timeout <= 0 {
		w.Timeout = DefaultCountWait
	}
	if len(p.Timeline) == 0 {
		p.Timeline = DefaultTimeline
	}
}

// checkUpdateNotFound checks how each update command's reply says there was no
// record, and when not said, takes HSET's (created) or else a nil reply.
func (p *Profile) checkUpdateNotFound(name string) error {
	for _, u := range []struct {
		command  []string
		notFound *string
	}{{p.Commands.Update, &p.Commands.UpdateNotFound}, {p.Commands.UpdateField, &p.Commands.UpdateFieldNotFound}} {
		switch *u.notFound {
		case "":
			*u.notFound = UpdateNil
			if len(u.command) == 1 && strings.EqualFold(u.command[0], "HSET") {
				*u.notFound = UpdateCreated
			}
		case UpdateNil, UpdateCreated, UpdateUnchecked:
		default:
			return fmt.Errorf("profile %q: update_not_found and update_field_not_found are %q, %q or %q, not %q", name, UpdateNil, UpdateCreated, UpdateUnchecked, *u.notFound)
		}
	}
	return nil
}

// checkProtocol checks the protocol version and that reads are HGETALL.
func (p *Profile) checkProtocol(name string) error {
	if p.RESP != 0 && p.RESP != 2 && p.RESP != 3 {
		return fmt.Errorf("profile %q: resp must be 2 or 3", name)
	}
	if !strings.EqualFold(strings.Join(p.Commands.Read, " "), "HGETALL") {
		return fmt.Errorf("profile %q: read must be HGETALL (the adapter reads its map reply)", name)
	}
	return nil
}

// checkCount checks that a triggered count says when it is ready, and what its busy
// errors say.
func (p *Profile) checkCount(name string) error {
	if len(p.Count.Trigger) > 0 && p.Count.Wait == nil {
		return fmt.Errorf("profile %q: count.trigger needs count.wait (when is the triggered count ready?)", name)
	}
	if len(p.Count.Busy) > 0 && len(p.Count.Trigger) == 0 {
		return fmt.Errorf("profile %q: count.busy without count.trigger", name)
	}
	for _, b := range p.Count.Busy {
		if strings.TrimSpace(b) == "" {
			return fmt.Errorf("profile %q: an empty count.busy text would match every error", name)
		}
	}
	return nil
}

// checkRequire checks that each requirement names an INFO field and a value.
func (p *Profile) checkRequire(name string) error {
	for _, r := range p.Require {
		if section, key, ok := strings.Cut(r.Field, "."); !ok || section == "" || key == "" || r.Value == "" {
			return fmt.Errorf("profile %q: require needs field as section.key (e.g. memory.storage_provider) and value, not %q = %q", name, r.Field, r.Value)
		}
	}
	return nil
}

// checkCountWait checks count.wait, and compiles its ready pattern.
func (p *Profile) checkCountWait(name string) error {
	w := p.Count.Wait
	if w == nil {
		return nil
	}
	if len(p.Count.Trigger) == 0 {
		return fmt.Errorf("profile %q: count.wait without count.trigger", name)
	}
	if w.Line == "" || (w.Ready == "" && !w.Changed) {
		return fmt.Errorf("profile %q: count.wait needs line and ready or changed", name)
	}
	if w.Ready != "" {
		var err error
		if w.ready, err = regexp.Compile(w.Ready); err != nil {
			return fmt.Errorf("profile %q: count.wait.ready: %w", name, err)
		}
	}
	return nil
}

// checkCapture checks that no capture command is empty.
func (p *Profile) checkCapture(name string) error {
	for _, c := range p.Capture {
		if len(c) == 0 {
			return fmt.Errorf("profile %q: an empty capture command", name)
		}
	}
	return nil
}

// checkTimeline checks that each timeline field is an INFO field.
func (p *Profile) checkTimeline(name string) error {
	for _, f := range p.Timeline {
		if section, key, ok := strings.Cut(f, "."); !ok || section == "" || key == "" || strings.ContainsAny(f, ",@ ") {
			return fmt.Errorf("profile %q: timeline field %q is not an INFO field as section.key (e.g. memory.used_memory)", name, f)
		}
	}
	return nil
}

// timeline is the profile's timeline fields that an INFO sample holds, for
// core.StatTimeline; "" when none.
func (p *Profile) timeline(sample map[string]string) string {
	var present []string
	for _, f := range p.Timeline {
		if _, ok := sample[f]; ok {
			present = append(present, f)
		}
	}
	return strings.Join(present, ",")
}

// How an UPDATE's reply says that the record was not there (Profile.Commands).
const (
	UpdateNil       = "nil"
	UpdateCreated   = "created"
	UpdateUnchecked = "unchecked" // it cannot: an UPDATE of a missing record succeeds
)

// updateFoundNothing reports whether n, the integer reply to op (an UPDATE), says
// that there was no record: the command created every field it wrote.
func (p *Profile) updateFoundNothing(op *core.Op, n int64) bool {
	how := p.Commands.UpdateFieldNotFound
	if op.WholeRecord {
		how = p.Commands.UpdateNotFound
	}
	return how == UpdateCreated && n == int64(len(op.Fields))
}

// caveats says what the profile's commands cannot tell, for the capture: an
// UPDATE whose reply does not say whether the record was there.
func (p *Profile) caveats() string {
	var b strings.Builder
	for _, u := range []struct {
		what, key string
		command   []string
		notFound  string
	}{
		{"An UPDATE of every field (write_all_fields)", "update_not_found", p.Commands.Update, p.Commands.UpdateNotFound},
		{"An UPDATE of some fields", "update_field_not_found", p.Commands.UpdateField, p.Commands.UpdateFieldNotFound},
	} {
		if u.notFound == UpdateUnchecked {
			fmt.Fprintf(&b, "%s with %s cannot tell a missing record from an existing one: profile %s declares %s: %s, so such an UPDATE counts as a success and writes the record.\n",
				u.what, strings.Join(u.command, " "), p.Name, u.key, UpdateUnchecked)
		}
	}
	return b.String()
}

// updateCommand is the command an UPDATE is sent with: the profile's update when
// the op writes the whole record, update_field when the record's other fields
// must stay.
func (p *Profile) updateCommand(op *core.Op) []string {
	if op.WholeRecord {
		return p.Commands.Update
	}
	return p.Commands.UpdateField
}
