package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// TestHelp: every command's --help, -h and `help <command>` print the same
// usage, starting with its synopsis and naming each flag's variable; `help`
// and --help list every command.
func TestHelp(t *testing.T) {
	t.Parallel()
	runOut := func(args ...string) (int, string, string) {
		var out, errOut syncBuffer
		code := process{stdout: &out, stderr: &errOut, env: noEnv}.run(context.Background(), args)
		return code, out.String(), errOut.String()
	}
	for _, cmd := range commands() {
		_, want, _ := runOut(cmd.name, "--help")
		if !strings.HasPrefix(want, "Usage: refdata "+cmd.name+" [flags]") || !strings.Contains(want, "Example:\n  refdata "+cmd.name) {
			t.Errorf("refdata %s --help:\n%s", cmd.name, want)
		}
		for _, args := range [][]string{{cmd.name, "-h"}, {"help", cmd.name}} {
			if code, got, errOut := runOut(args...); code != 0 || got != want || errOut != "" {
				t.Errorf("refdata %q: exit %d, stderr %q, and it differs from --help:\n%s", args, code, errOut, got)
			}
		}
	}
	_, serveHelp, _ := runOut("serve", "--help")
	for _, want := range []string{"\nServer:\n", "\nStore:\n", "\nSync:\n", "\nLogging:\n", "\nGlobal:\n",
		"env REFDATA_ADDR", "env REFDATA_DATA", "env REFDATA_SYNC_FROM", "--dry-run\n"} {
		if !strings.Contains(serveHelp, want) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		code, out, _ := runOut(args...)
		for _, cmd := range commands() {
			if code != 0 || !strings.Contains(out, "\n  "+cmd.name+" ") {
				t.Errorf("refdata %q: exit %d, and %s is not listed:\n%s", args, code, cmd.name, out)
			}
		}
	}
	if code, _, errOut := runOut("help", "nonsense"); code != 2 || !strings.Contains(errOut, `no command "nonsense"`) {
		t.Errorf("refdata help nonsense: exit %d, %s", code, errOut)
	}
}

// TestVersion: the version, VCS revision and its modified flag, and the Go
// version, from the build information; version and --version alike.
func TestVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "4850468d"}, {Key: "vcs.modified", Value: "true"}}},
			"refdata v1.2.3\nrevision 4850468d (modified)\ngo1.26.8\n"},
		{debug.BuildInfo{GoVersion: "go1.26.8", Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "4850468d"}, {Key: "vcs.modified", Value: "false"}}},
			"refdata (devel)\nrevision 4850468d\ngo1.26.8\n"},
		{debug.BuildInfo{GoVersion: "go1.26.8"}, "refdata (devel)\nrevision unknown\ngo1.26.8\n"},
	} {
		if got := buildOf(&tc.bi).String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.bi, got, tc.want)
		}
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out syncBuffer
		code := process{stdout: &out, stderr: &out, env: noEnv}.run(context.Background(), args)
		if code != 0 || out.String() != readBuild().String() || !strings.Contains(out.String(), "\nrevision ") {
			t.Errorf("refdata %q: exit %d\n%s", args, code, out.String())
		}
	}
}

// TestDryRun: --dry-run checks the flags, the environment and the arguments
// as a real run would, and then says what it would do and does nothing: no
// store created, nothing listened on or fetched. A usage error is exit 2 all
// the same, and prints nothing on stdout.
func TestDryRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want int
		says string
	}{
		{[]string{"serve"}, nil, 0, "dry run: refdata serve would serve the embedded sample data on 127.0.0.1:8080\n"},
		{[]string{"serve", "--data", missing, "--addr", ":1", "--watch", missing, "--sync", "http://127.0.0.1:1"}, nil, 0,
			"would serve the store directory " + missing + " (not there yet) on :1, syncing from http://127.0.0.1:1 every 5m0s, importing the snapshots dropped into " + missing},
		{[]string{"serve", "--store", "postgres://refdata@127.0.0.1:1/none", "--sample-until-imported"}, nil, 0,
			"would serve the PostgreSQL store postgres://refdata@127.0.0.1:1/none on 127.0.0.1:8080, with the embedded sample data until its first version"},
		{[]string{"import", "--data", missing, missing}, nil, 0, "would import " + missing + " into the store directory " + missing + " (not there yet), keeping 10 versions"},
		{[]string{"sync", "--from", "http://127.0.0.1:1", "--data", missing, "--every", "5m", "--metrics-addr", ":9100"}, nil, 0,
			"would sync http://127.0.0.1:1 into the store directory " + missing + " (not there yet), every 5m0s, with its metrics on :9100"},
		{[]string{"sync", "--from", "http://127.0.0.1:1", "--data", dir}, nil, 0, "would sync http://127.0.0.1:1 into the store directory " + dir + ", once"},
		{[]string{"activate", "--data", missing, "0123456789ABCDEF"}, nil, 0, "would make 0123456789ABCDEF the active version of"},
		{[]string{"version"}, nil, 0, "would print this build's version"},
		{[]string{"help", "serve"}, nil, 0, "would print its usage"},
		{[]string{"serve"}, map[string]string{"REFDATA_ADDR": ":8080", "REFDATA_DATA": missing, "REFDATA_INIT": "true"}, 0, "on :8080, creating it when missing (--init)"},
		{[]string{"sync", "--from", "https://valorant-api.com", "--data", missing, "--media", "--media-host", "cdn.example", "--media-host", "[2001:db8::1]:8443,cdn2.example"}, nil, 0, ""},
		{[]string{"serve", "--data", dir, "--sync", "https://valorant-api.com", "--media", "--media-host", "cdn.example"}, nil, 0, ""},
		{[]string{"sync", "--from", "https://valorant-api.com", "--data", missing, "--media"}, map[string]string{"REFDATA_MEDIA_HOST": "a.example, b.example:8443"}, 0, ""},

		{[]string{"serve", "--addr", "nonsense"}, nil, 2, `--addr "nonsense"`},
		{[]string{"serve", "--pprof", "6060"}, nil, 2, `--pprof "6060"`},
		{[]string{"serve", "--max-waiters", "0"}, nil, 2, "--max-waiters 0: give at least 1"},
		{[]string{"serve"}, map[string]string{"REFDATA_MAX_WAITERS": "-5"}, 2, "--max-waiters -5"},
		{[]string{"serve", "--poll", "soon"}, nil, 2, `invalid value "soon" for flag -poll`},
		{[]string{"serve", "--poll", "0s"}, nil, 2, "--poll and --sync-every must be positive"},
		{[]string{"serve", "--log-level", "loud"}, nil, 2, `--log-level "loud"`},
		{[]string{"serve", "--init"}, nil, 2, "--init and --sample-until-imported need a version store"},
		{[]string{"serve", "--sync", "http://127.0.0.1:1"}, nil, 2, "--sync, --init and --sample-until-imported need a version store"},
		{[]string{"serve", "--data", dir, "--sync", "https://example.org", "--language-all", "sometimes"}, nil, 2, `--language-all "sometimes"`},
		{[]string{"serve", "snapshot"}, nil, 2, "takes no arguments"},
		{[]string{"serve"}, map[string]string{"REFDATA_POLL": "abc"}, 2, `REFDATA_POLL="abc"`},
		{[]string{"serve"}, map[string]string{"REFDATA_ADDR": "nonsense"}, 2, `--addr "nonsense"`},
		{[]string{"import", "--data", missing}, nil, 2, "wants SNAPSHOT"},
		{[]string{"import", "--data", missing, "--retain", "0", missing}, nil, 2, "--retain 0"},
		{[]string{"sync", "--data", missing}, nil, 2, `--from: upstream "": want an http or https URL`},
		{[]string{"sync", "--from", "ftp://example.org", "--data", missing}, nil, 2, `--from: upstream "ftp://example.org"`},
		{[]string{"sync", "--from", "http://127.0.0.1:1", "--once", "--every", "5m"}, nil, 2, "--once and --every exclude each other"},
		{[]string{"activate", "--data", missing, "../etc"}, nil, 2, "not a manifest ID"},
		{[]string{"sync", "--from", "https://valorant-api.com", "--data", missing, "--media-host", "cdn.example"}, nil, 2, "--media-host names hosts --media fetches from: add --media"},
		{[]string{"sync", "--from", "https://valorant-api.com", "--data", missing, "--media", "--media-host", "https://cdn.example"}, nil, 2, `--media-host: media host "https://cdn.example": want a host name`},
		{[]string{"serve", "--data", dir, "--sync", "https://valorant-api.com", "--media", "--media-host", "user@cdn.example"}, nil, 2, `media host "user@cdn.example"`},
		{[]string{"sync", "--from", "https://valorant-api.com", "--data", missing, "--media"}, map[string]string{"REFDATA_MEDIA_HOST": "cdn.example/x"}, 2, `media host "cdn.example/x"`},
		{[]string{"version", "extra"}, nil, 2, "takes no arguments"},
		{[]string{"sync", "--from", "http://127.0.0.1:1", "--metrics-addr", ":9100"}, nil, 2, "--metrics-addr serves while sync --every runs"},
		{[]string{"sync", "--from", "http://127.0.0.1:1", "--every", "5m", "--metrics-addr", "9100"}, nil, 2, `--metrics-addr "9100"`},
		// Another scheme is a mistake, never a directory of that name.
		{[]string{"import", "--store", "mysql://x@y/z", missing}, nil, 2, `store "mysql://x@y/z": mysql:// is not a store refdata knows`},
		{[]string{"serve", "--data", "mysql://x@y/z"}, nil, 2, "mysql:// is not a store refdata knows"},
		{[]string{"sync", "--from", "http://127.0.0.1:1", "--store", "redis://cache"}, nil, 2, "redis:// is not a store refdata knows"},
		{[]string{"activate", "--store", "file:///var/lib/refdata", "0123456789ABCDEF"}, nil, 2, "file:// is not a store refdata knows"},
	} {
		var out, errOut syncBuffer
		env := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
		p := process{stdout: &out, stderr: &errOut, env: env}
		code := p.run(context.Background(), append(tc.args, "--dry-run"))
		if tc.want == 0 { // and anywhere among the arguments
			code = max(code, p.run(context.Background(), append([]string{tc.args[0], "--dry-run"}, tc.args[1:]...)))
		}
		said := &errOut
		if tc.want == 0 {
			said = &out
		}
		if code != tc.want || tc.want != 0 && out.String() != "" || !strings.Contains(said.String(), tc.says) {
			t.Errorf("refdata %q --dry-run (env %v): exit %d, want %d saying %q; stdout %q, stderr:\n%s",
				tc.args, tc.env, code, tc.want, tc.says, out.String(), errOut.String())
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("a dry run created %s", missing)
	}
}

// TestListFlag: a repeatable flag takes each use and comma-separated values;
// its variable is a comma-separated list the command line replaces.
func TestListFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  string
		argv []string
		want string
	}{
		{"", []string{"--media-host", "a.example", "--media-host", "b.example:8443,c.example"}, "a.example,b.example:8443,c.example"},
		{"a.example, b.example", nil, "a.example,b.example"},
		{"a.example,b.example", []string{"--media-host", "c.example", "--media-host", "d.example"}, "c.example,d.example"},
		{"", []string{"--media-host", " , "}, ""},
	} {
		var l listFlag
		c := &cli{process: process{env: func(k string) (string, bool) { return tc.env, k == "REFDATA_MEDIA_HOST" }},
			fs: flag.NewFlagSet("test", flag.ContinueOnError), argv: tc.argv, heading: map[string]string{}}
		c.fs.Var(&l, "media-host", "")
		if _, err := c.parse(0); err != nil || l.String() != tc.want {
			t.Errorf("env %q, argv %q: %q (%v), want %q", tc.env, tc.argv, l.String(), err, tc.want)
		}
	}
}
