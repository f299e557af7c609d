// Command refdata serves game reference data over HTTP and imports new versions.
// main only parses flags and wires packages together.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	// The Mozilla roots, used only where the system has none (the container
	// image is the binary alone): a sync over HTTPS needs them.
	_ "golang.org/x/crypto/x509roots/fallback"

	"github.com/refdata/refdata/representation"
)

// defaultGOGC applies when GOGC is not set: a server's heap is mostly the
// served version's bodies, live until the next swap, so the default 100 %
// would let garbage grow to their size; 25 % keeps RSS under twice the
// rendered bytes with every target memoized (BENCHMARKS.md).
const defaultGOGC = 25

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGOGC)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// process is what a command takes from the process beyond its arguments.
type process struct {
	stdout, stderr io.Writer
	// env looks up a variable (nil: os.LookupEnv).
	env func(string) (string, bool)
	// ready, when set, receives serve's bound address (tests listen on :0).
	ready chan<- string
	// sample is how the embedded sample's store is made (tests make a
	// lighter one, of their own).
	sample sampleOptions
}

// command is one of refdata's commands: its synopsis, purpose and example,
// and run, which registers its flags on c, parses and runs it.
type command struct {
	name, args, purpose, example string
	run                          func(ctx context.Context, c *cli) error
}

func commands() []command {
	return []command{
		{"serve", "", "Serve the API from a version store (--data), or the embedded sample data without one.",
			"refdata serve --data /var/lib/refdata --addr :8080", serve},
		{"import", "SNAPSHOT", "Validate a snapshot (a directory or an export .tar.gz) and publish it as the active version.",
			"refdata import --data /var/lib/refdata ./snapshot", importCmd},
		{"sync", "", "Fetch an upstream's version in 18 locales and import it, once or --every interval.",
			"refdata sync --from https://valorant-api.com --data /var/lib/refdata --every 5m --contact mailto:ops@example.org", syncCmd},
		{"activate", "MANIFEST_ID", "Make a retained version (16 hex digits, from /v1/versions) the active one: roll back or forward.",
			"refdata activate --data /var/lib/refdata 376A04CC95974716", activateCmd},
		{"version", "", "Print the module version, VCS revision and Go version of this binary.", "refdata version", versionCmd},
		{"help", "[COMMAND]", "Print a command's usage, or list the commands.", "refdata help serve", helpCmd},
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return process{stdout: stdout, stderr: stderr, sample: sampleOptions{effort: representation.Best}}.run(ctx, args)
}

// run runs the command args name: 0 when it succeeds, 2 for a usage error
// (nothing was done), 1 for any other error.
func (p process) run(ctx context.Context, args []string) int {
	switch {
	case len(args) == 0:
		p.list(p.stderr)
		return 2
	case args[0] == "-h" || args[0] == "--help":
		args = []string{"help"}
	case args[0] == "--version":
		args = []string{"version"}
	}
	for _, cmd := range commands() {
		if cmd.name != args[0] {
			continue
		}
		c := &cli{process: p, fs: flag.NewFlagSet(cmd.name, flag.ContinueOnError),
			name: cmd.name, args: cmd.args, purpose: cmd.purpose, usage: cmd.example, argv: args[1:], heading: map[string]string{}}
		c.fs.SetOutput(io.Discard)
		err := cmd.run(ctx, c)
		var usage usageError
		switch {
		case err == nil, errors.Is(err, flag.ErrHelp):
			return 0
		case errors.As(err, &usage):
			fmt.Fprintf(p.stderr, "refdata %s: %v\nRun 'refdata help %s' for its flags.\n", cmd.name, err, cmd.name)
			return 2
		default:
			fmt.Fprintf(p.stderr, "refdata %s: %v\n", cmd.name, err)
			return 1
		}
	}
	fmt.Fprintf(p.stderr, "refdata: unknown command %q\n", args[0])
	p.list(p.stderr)
	return 2
}

// list prints the commands.
func (p process) list(w io.Writer) {
	fmt.Fprint(w, "Usage: refdata <command> [flags] [arguments]\n\nServe a game's reference data over HTTP, and import its versions.\n\nCommands:\n")
	for _, cmd := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", cmd.name, cmd.purpose)
	}
	fmt.Fprint(w, "\nRun 'refdata help <command>' or 'refdata <command> --help' for its flags; every flag\nis also an environment variable, REFDATA_<FLAG>. Global: --dry-run, --version.\n")
}

func helpCmd(ctx context.Context, c *cli) error {
	args, err := c.parse(-1)
	if err != nil {
		return err
	}
	if c.dryRun {
		c.would("print its usage")
		return nil
	}
	switch len(args) {
	case 0:
		c.list(c.stdout)
		return nil
	case 1:
		for _, cmd := range commands() {
			if cmd.name == args[0] {
				c.process.run(ctx, []string{cmd.name, "--help"})
				return nil
			}
		}
		return usagef("no command %q", args[0])
	}
	return usagef("wants at most one COMMAND")
}

func versionCmd(_ context.Context, c *cli) error {
	if _, err := c.parse(0); err != nil {
		return err
	}
	if c.dryRun {
		c.would("print this build's version")
		return nil
	}
	fmt.Fprint(c.stdout, readBuild())
	return nil
}

func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if isTerminal(w) {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// logLevel registers --log-level and returns the level it names.
func logLevel(c *cli) func() (slog.Level, error) {
	s := c.fs.String("log-level", "info", "debug, info, warn or error; at debug every request is logged, at info 4xx and 5xx")
	return func() (slog.Level, error) {
		var l slog.Level
		if err := l.UnmarshalText([]byte(*s)); err != nil {
			return l, usagef("--log-level %q: want debug, info, warn or error", *s)
		}
		return l, nil
	}
}

// isTerminal reports whether w is a terminal (progress rewrites one line).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
