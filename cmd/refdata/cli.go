package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
)

// cli is the one helper every command parses with: the standard flag
// package, each flag in a named group and defaulting from an environment
// variable (REFDATA_<FLAG>, or envNames'), flags anywhere among the
// arguments, --help and --dry-run, and the usage in one style.
type cli struct {
	process
	fs                         *flag.FlagSet
	name, args, purpose, usage string // usage: an example
	argv                       []string
	headings                   []string          // the groups, in order
	heading                    map[string]string // flag name → its group
	dryRun                     bool
}

// envNames are the variables not named REFDATA_<FLAG>. --dry-run has none: a
// variable left set would turn every run into a check that succeeds.
var envNames = map[string]string{"sync": "REFDATA_SYNC_FROM", "from": "REFDATA_SYNC_FROM", "dry-run": ""}

func envName(flagName string) string {
	if v, ok := envNames[flagName]; ok {
		return v
	}
	return "REFDATA_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// usageError is a mistake in the command line or environment: exit status 2.
type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// section files the flags registered since the last section under its
// heading, and starts the group name.
func (c *cli) section(name string) {
	c.fs.VisitAll(func(f *flag.Flag) {
		if _, ok := c.heading[f.Name]; !ok && len(c.headings) > 0 {
			c.heading[f.Name] = c.headings[len(c.headings)-1]
		}
	})
	c.headings = append(c.headings, name)
}

// parse reads the environment, then the command line (flags before, after
// or between the arguments; everything after "--" is an argument), and
// returns the arguments, of which the command takes want (-1: any number). --help prints the
// usage to stdout and returns flag.ErrHelp.
func (c *cli) parse(want int) ([]string, error) {
	c.section("Global")
	c.fs.BoolVar(&c.dryRun, "dry-run", false, "check the flags, environment and arguments as a real run would, then exit without reading data, listening or touching the network")
	c.section("")
	var err error
	c.fs.VisitAll(func(f *flag.Flag) {
		if name := envName(f.Name); name == "" || err != nil {
			return
		} else if v, ok := c.lookupEnv(name); ok && v != "" {
			if serr := f.Value.Set(v); serr != nil {
				err = usagef("%s=%q: %v", envName(f.Name), v, serr)
			}
			if l, ok := f.Value.(*listFlag); ok {
				l.fromEnv = true
			}
		}
	})
	if err != nil {
		return nil, err
	}
	rest, tail := c.argv, []string(nil)
	if i := slices.Index(rest, "--"); i >= 0 {
		rest, tail = rest[:i], rest[i+1:]
	}
	var args []string
	for {
		if err := c.fs.Parse(rest); errors.Is(err, flag.ErrHelp) {
			c.printUsage(c.stdout)
			return nil, err
		} else if err != nil {
			return nil, usageError{err}
		}
		if rest = c.fs.Args(); len(rest) == 0 {
			break
		}
		args, rest = append(args, rest[0]), rest[1:]
	}
	args = append(args, tail...)
	switch {
	case want < 0 || len(args) == want:
		return args, nil
	case want == 0:
		return nil, usagef("takes no arguments, got %q", args)
	default:
		return nil, usagef("wants %s, got %s", c.args, plural(len(args), "argument"))
	}
}

func (c *cli) lookupEnv(name string) (string, bool) {
	if c.env != nil {
		return c.env(name)
	}
	return os.LookupEnv(name)
}

// printUsage writes the command's help: synopsis, purpose, flags by group
// with their defaults and variables, an example.
func (c *cli) printUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage: refdata %s [flags]", c.name)
	if c.args != "" {
		fmt.Fprintf(w, " %s", c.args)
	}
	fmt.Fprintf(w, "\n\n%s\n", c.purpose)
	for _, h := range c.headings[:len(c.headings)-1] {
		fmt.Fprintf(w, "\n%s:\n", h)
		c.fs.VisitAll(func(f *flag.Flag) {
			if c.heading[f.Name] != h {
				return
			}
			typ, text := flag.UnquoteUsage(f)
			var notes []string
			if !slices.Contains([]string{"", "false", "0", "0s"}, f.DefValue) {
				notes = append(notes, "default "+f.DefValue)
			}
			if env := envName(f.Name); env != "" {
				notes = append(notes, "env "+env)
			}
			if len(notes) > 0 {
				text += " (" + strings.Join(notes, "; ") + ")"
			}
			fmt.Fprintf(w, "  %s\n        %s\n", strings.TrimSpace("--"+f.Name+" "+typ), text)
		})
	}
	fmt.Fprintf(w, "  -h, --help\n        print this help\n\nExample:\n  %s\n", c.usage)
}

// listFlag is a repeatable flag: each use adds its value, or its
// comma-separated values. Its environment variable is a comma-separated list,
// which the flag's uses on the command line replace rather than extend (a flag
// on the command line wins).
type listFlag struct {
	values  []string
	fromEnv bool // values are the variable's: the first use replaces them
}

func (l *listFlag) String() string { return strings.Join(l.values, ",") }

func (l *listFlag) Set(s string) error {
	if l.fromEnv {
		l.values, l.fromEnv = nil, false
	}
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			l.values = append(l.values, v)
		}
	}
	return nil
}

// would says what a dry run would have done, on stdout.
func (c *cli) would(format string, a ...any) {
	fmt.Fprintf(c.stdout, "dry run: refdata %s would "+format+"\n", append([]any{c.name}, a...)...)
}

// checkAddr holds an address flag to host:port with a numeric port.
func checkAddr(flagName, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = strconv.ParseUint(port, 10, 16)
	}
	if err != nil {
		return usagef("--%s %q: want host:port with a numeric port, e.g. 127.0.0.1:8080 or :8080", flagName, addr)
	}
	return nil
}

// plural is "1 request", "2 requests".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
