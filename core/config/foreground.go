package config

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

// A server cmpbench starts must stay the process it started: one that
// daemonizes forks, detaches and exits, and cmpbench can then neither watch
// it (its loss would go unseen) nor stop it (it would outlive the run).
// Whatever slips past these checks is found when it runs (core/provision).
var (
	// daemonizeFlag is a daemonize flag as a command-line argument: --daemonize
	// yes (Redis, Valkey, KeyDB: the value is the next argument), --daemonize or
	// --daemonize=true (Dragonfly).
	daemonizeFlag = regexp.MustCompile(`(?i)^--?daemonize(?:=(.*))?$`)
	// daemonizeInScript is the same inside a script (sh -c '...').
	daemonizeInScript = regexp.MustCompile(`(?i)(?:^|\s)(--?daemonize)(?:=(\S*)|\s+([^-\s]\S*))?`)
	// daemonizeLine is a configuration file's line that turns it on: Redis's and
	// Kvrocks' "daemonize yes", Pika's "daemonize : yes".
	daemonizeLine = regexp.MustCompile(`(?im)^[ \t]*daemonize[ \t]*[:= \t][ \t]*(yes|true|on|1)[ \t]*$`)
)

// turnsOn reports whether a flag's value turns it on: a flag without one is on.
func turnsOn(value string) bool {
	return !slices.Contains([]string{"no", "false", "off", "0"}, strings.ToLower(value))
}

// daemonizes returns the daemonize setting a command line turns on, "" for none.
func daemonizes(command []string) string {
	for i, a := range command {
		if m := daemonizeFlag.FindStringSubmatch(a); m != nil {
			value, said := m[1], a
			if !strings.Contains(a, "=") && i+1 < len(command) && !strings.HasPrefix(command[i+1], "-") {
				value, said = command[i+1], a+" "+command[i+1]
			}
			if turnsOn(value) {
				return said
			}
			continue
		}
		for _, m := range daemonizeInScript.FindAllStringSubmatch(a, -1) {
			if turnsOn(m[2] + m[3]) {
				return strings.TrimSpace(m[0])
			}
		}
	}
	return ""
}

// checkForeground refuses a provision block whose command line or files make
// the server daemonize.
func (c *systemCheck) checkForeground(p *Provision) {
	const why = "a server cmpbench starts must stay in the foreground: one that daemonizes detaches from the process cmpbench started, " +
		"which can then neither watch it nor stop it (it would outlive the run)"
	if d := daemonizes(p.Command); d != "" {
		c.problem("%s: provision.command has %s: %s; remove it", c.at("provision", "command"), d, why)
	}
	for _, name := range slices.Sorted(maps.Keys(p.Files)) {
		if m := daemonizeLine.FindStringIndex(p.Files[name]); m != nil {
			line := strings.Count(p.Files[name][:m[0]], "\n") + 1
			c.problem("%s: provision.files.%s says %q at its line %d: %s; say daemonize no", c.at("provision", "files", name), name,
				strings.TrimSpace(p.Files[name][m[0]:m[1]]), line, why)
		}
	}
}
