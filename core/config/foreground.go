package config

import (
	"maps"
	"path/filepath"
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
	// Kvrocks' "daemonize yes", Pika's "daemonize : yes", Tendis' "daemon on"
	// (its stock tendisplus.conf; tendisplus also forks when the file does not
	// say daemon no, which the file must then say).
	daemonizeLine = regexp.MustCompile(`(?im)^[ \t]*(daemon(?:ize)?)[ \t]*[:= \t][ \t]*(yes|true|on|1)[ \t]*$`)
	// foregroundLine are the lines a server that daemonizes unless told not to
	// needs in the configuration file its command names: tendisplus forks by
	// default (server_params.h: daemon = true).
	foregroundLine = map[string]*regexp.Regexp{
		"tendisplus": regexp.MustCompile(`(?im)^[ \t]*daemon[ \t]+(no|off|false|0)[ \t]*$`),
	}
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
		if m := daemonizeLine.FindStringSubmatchIndex(p.Files[name]); m != nil {
			line := strings.Count(p.Files[name][:m[0]], "\n") + 1
			c.problem("%s: provision.files.%s says %q at its line %d: %s; say %s no", c.at("provision", "files", name), name,
				strings.TrimSpace(p.Files[name][m[0]:m[1]]), line, why, p.Files[name][m[2]:m[3]])
			continue
		}
		if len(p.Command) == 0 || !namesFile(p.Command[1:], name) {
			continue
		}
		bin := filepath.Base(p.Command[0])
		if re := foregroundLine[bin]; re != nil && !re.MatchString(p.Files[name]) {
			c.problem("%s: provision.files.%s does not say daemon no, and %s forks into the background unless its configuration file does: %s; add the line daemon no",
				c.at("provision", "files", name), name, bin, why)
		}
	}
}

// namesFile reports whether a command's arguments name a file of the server's
// directory: the file's name, or a path ending in it ({dir}/tendisplus.conf).
func namesFile(args []string, name string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return a == name || strings.HasSuffix(a, "/"+name) })
}
