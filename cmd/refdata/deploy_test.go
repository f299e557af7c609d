package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestDeployCommandLines: every `refdata <command> …` line in deploy/ (the
// systemd units, compose.yaml, the Kubernetes manifests, scripts,
// Dockerfiles) is one refdata takes: each runs with --dry-run, with the
// REFDATA_* variables its file sets, and must exit 0. A deploy/ in which no
// such line is found fails: the check would hold nothing.
func TestDeployCommandLines(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "deploy")
	if _, err := os.Stat(root); os.IsNotExist(err) {
		t.Skip("no deploy/ directory")
	}
	found := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !deployFile(d.Name()) {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines, env, err := commandLines(d.Name(), string(b))
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		for _, argv := range lines {
			found++
			var out syncBuffer
			proc := process{stdout: &out, stderr: &out, env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
			if code := proc.run(context.Background(), append([]string{argv[0], "--dry-run"}, argv[1:]...)); code != 0 {
				t.Errorf("%s: refdata %q (env %v) --dry-run: exit %d\n%s", p, argv, env, code, out.String())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatalf("%s holds no `refdata <command>` line in a *.service, *.yaml, *.yml, *.sh or Dockerfile", root)
	}
}

// deployFile reports whether a file's name is one of the kinds that start
// refdata.
func deployFile(name string) bool {
	switch path.Ext(name) {
	case ".service", ".yaml", ".yml", ".sh":
		return true
	}
	return strings.HasPrefix(name, "Dockerfile") || strings.HasSuffix(name, ".Dockerfile") || name == "Containerfile"
}

// commandLines finds the refdata command lines in a file (each the
// arguments after the binary: the command first), and the REFDATA_*
// variables the file sets. Variable references are replaced by their
// default, the file's value, or a plausible one.
func commandLines(name, text string) ([][]string, map[string]string, error) {
	env := map[string]string{}
	var lines [][]string
	switch {
	case strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml"):
		dec := yaml.NewDecoder(strings.NewReader(text))
		for {
			var doc yaml.Node
			if err := dec.Decode(&doc); err != nil {
				if err.Error() == "EOF" {
					break
				}
				return nil, nil, err
			}
			yamlEnv(&doc, env)
			lines = append(lines, yamlLines(&doc)...)
		}
	case strings.HasSuffix(name, ".service"):
		for _, l := range logicalLines(text) {
			key, value, _ := strings.Cut(l, "=")
			switch {
			case key == "Environment":
				for _, kv := range shellWords(value) {
					if k, v, ok := strings.Cut(kv, "="); ok {
						env[k] = v
					}
				}
			case strings.HasPrefix(key, "Exec"):
				lines = append(lines, shellLines(strings.TrimLeft(value, "-@:+!"), env)...)
			}
		}
	case strings.HasSuffix(name, ".sh"):
		lines = shellLines(text, env)
	default: // a Dockerfile: ENV, and exec or shell forms of RUN, CMD, ENTRYPOINT
		var entrypoint, cmd []string
		for _, l := range logicalLines(text) {
			instr, rest, _ := strings.Cut(l, " ")
			rest = strings.TrimSpace(rest)
			var exec []string
			isExec := json.Unmarshal([]byte(rest), &exec) == nil
			switch strings.ToUpper(instr) {
			case "ENV":
				if k, v, ok := strings.Cut(rest, "="); ok {
					env[k] = strings.Trim(v, `"`)
				} else if k, v, ok := strings.Cut(rest, " "); ok {
					env[k] = strings.TrimSpace(v)
				}
			case "ENTRYPOINT":
				entrypoint = exec
			case "CMD":
				cmd = exec
				if !isExec {
					lines = append(lines, shellLines(rest, env)...)
				}
			case "RUN":
				lines = append(lines, shellLines(rest, env)...)
			}
		}
		if argv := refdataArgs(append(entrypoint, cmd...), entrypoint == nil); argv != nil {
			lines = append(lines, argv)
		}
	}
	for _, argv := range lines {
		for i := range argv {
			argv[i] = substitute(argv[i], env)
		}
	}
	for k, v := range env {
		env[k] = substitute(v, env)
		if !strings.HasPrefix(k, "REFDATA_") || env[k] == "" {
			delete(env, k)
		}
	}
	return lines, env, nil
}

// yamlLines finds refdata in a YAML document: a container's command and args
// (Kubernetes), a service's entrypoint and command (Compose), in list or
// shell form, any other list that runs it (a health check), and shell
// scripts in strings.
func yamlLines(n *yaml.Node) [][]string {
	var lines [][]string
	if n.Kind == yaml.MappingNode {
		var argv []string
		var run, explicit bool
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			if k != "entrypoint" && k != "command" && k != "args" {
				lines = append(lines, yamlLines(v)...)
				continue
			}
			run = true
			explicit = explicit || k == "entrypoint" || k == "command" && n.Content[i+1].Kind == yaml.SequenceNode && len(v.Content) > 0 && isRefdata(v.Content[0].Value)
			if v.Kind == yaml.ScalarNode {
				argv = append(argv, shellWords(v.Value)...)
			}
			for _, e := range v.Content {
				argv = append(argv, e.Value)
			}
		}
		if run {
			if a := refdataArgs(argv, !explicit); a != nil {
				lines = append(lines, a)
			} else {
				for _, s := range argv {
					lines = append(lines, shellLines(s, nil)...) // sh -c "…"
				}
			}
		}
		return lines
	}
	if n.Kind == yaml.SequenceNode && len(n.Content) > 1 {
		var argv []string
		for _, e := range n.Content {
			argv = append(argv, e.Value)
		}
		switch argv[0] { // a Compose health check's test
		case "CMD":
			argv = argv[1:]
		case "CMD-SHELL":
			return shellLines(argv[1], nil)
		}
		if a := refdataArgs(argv, false); a != nil {
			return [][]string{a}
		}
	}
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "\n") {
		return shellLines(n.Value, nil)
	}
	for _, c := range n.Content {
		lines = append(lines, yamlLines(c)...)
	}
	return lines
}

// yamlEnv collects the variables a YAML document sets: Kubernetes env lists
// (a value from elsewhere gets a plausible one), Compose environment maps
// and lists.
func yamlEnv(n *yaml.Node, env map[string]string) {
	for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		switch {
		case k == "env" && v.Kind == yaml.SequenceNode:
			for _, e := range v.Content {
				var ev struct {
					Name, Value string
					ValueFrom   any `yaml:"valueFrom"`
				}
				if e.Decode(&ev) == nil && ev.Name != "" {
					env[ev.Name] = ev.Value
					if ev.ValueFrom != nil {
						env[ev.Name] = plausible(ev.Name)
					}
				}
			}
		case k == "environment" && v.Kind == yaml.MappingNode:
			for j := 0; j+1 < len(v.Content); j += 2 {
				env[v.Content[j].Value] = v.Content[j+1].Value
			}
		case k == "environment" && v.Kind == yaml.SequenceNode:
			for _, e := range v.Content {
				if k, v, ok := strings.Cut(e.Value, "="); ok {
					env[k] = v
				}
			}
		}
	}
	for _, c := range n.Content {
		yamlEnv(c, env)
	}
}

// refdataArgs is what follows refdata's binary in argv, nil when argv does
// not run refdata; implied says the binary may be implied (an image's
// entrypoint), argv then starting with a command.
func refdataArgs(argv []string, implied bool) []string {
	switch {
	case len(argv) > 1 && isRefdata(argv[0]):
		return argv[1:]
	case implied && len(argv) > 0 && slices.ContainsFunc(commands(), func(c command) bool { return c.name == argv[0] }):
		return argv
	}
	return nil
}

func isRefdata(word string) bool { return path.Base(word) == "refdata" }

// shellLines finds the simple commands that run refdata in shell text, past
// assignments (recorded in env when given) and exec.
func shellLines(text string, env map[string]string) [][]string {
	var lines [][]string
	for _, l := range logicalLines(text) {
		words := shellWords(l)
		for len(words) > 0 {
			end := slices.IndexFunc(words, func(w string) bool { return slices.Contains([]string{"&&", "||", ";", "|", "&"}, w) })
			if end < 0 {
				end = len(words)
			}
			cmd := words[:end]
			for len(cmd) > 0 && (assignment.MatchString(cmd[0]) || slices.Contains([]string{"exec", "export", "env", "nohup"}, cmd[0])) {
				if k, v, ok := strings.Cut(cmd[0], "="); ok && env != nil && assignment.MatchString(cmd[0]) {
					env[k] = v
				}
				cmd = cmd[1:]
			}
			if a := refdataArgs(cmd, false); a != nil {
				lines = append(lines, a)
			}
			words = words[min(end+1, len(words)):]
		}
	}
	return lines
}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// logicalLines splits text into lines, joining those a backslash continues
// and dropping comments and blank ones.
func logicalLines(text string) []string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(text, "\\\n", " "), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// shellWords splits a line into words as a shell does for simple quoting:
// single and double quotes, backslash escapes, the operators that end a
// command as words of their own, a comment to the end.
func shellWords(l string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	var quote byte
	flush := func() {
		if inWord {
			words = append(words, w.String())
		}
		w.Reset()
		inWord = false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == '\'':
			w.WriteByte(c)
		case c == '\\' && i+1 < len(l):
			i++
			w.WriteByte(l[i])
			inWord = true
		case quote == '"':
			w.WriteByte(c)
		case c == '"' || c == '\'':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			flush()
			return words
		case strings.IndexByte(";&|", c) >= 0:
			flush()
			op := string(c)
			if i+1 < len(l) && l[i+1] == c && c != ';' {
				op, i = op+op, i+1
			}
			words = append(words, op)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words
}

// reference is ${X}, ${X:-default}, ${X-default}, ${X:?message}, $X or $(X)
// (Kubernetes).
var reference = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?=+])([^}]*))?\}|\$\(([A-Za-z_][A-Za-z0-9_]*)\)|\$([A-Za-z_][A-Za-z0-9_]*)`)

// substitute replaces variable references: a default the reference gives,
// else the file's value, else a plausible one for the name.
func substitute(s string, env map[string]string) string {
	return reference.ReplaceAllStringFunc(s, func(ref string) string {
		m := reference.FindStringSubmatch(ref)
		name := m[1] + m[4] + m[5]
		if strings.Contains(m[2], "-") {
			return m[3]
		}
		if v, ok := env[name]; ok && v != "" && !strings.Contains(v, "$") {
			return v
		}
		return plausible(name)
	})
}

// plausible is a value of the kind a variable's name says.
func plausible(name string) string {
	n := strings.ToUpper(name)
	for _, kv := range [][2]string{
		{"ADDR", "127.0.0.1:8080"}, {"LISTEN", "127.0.0.1:8080"}, {"PORT", "8080"},
		{"STORE", "postgres://refdata@db:5432/refdata"}, {"DATABASE", "postgres://refdata@db:5432/refdata"},
		{"UPSTREAM", "https://valorant-api.com"}, {"FROM", "https://valorant-api.com"}, {"URL", "https://valorant-api.com"},
		{"CONTACT", "mailto:ops@example.org"}, {"LEVEL", "info"},
		{"EVERY", "5m"}, {"POLL", "1s"}, {"TIMEOUT", "1m"}, {"INTERVAL", "5m"},
		{"RETAIN", "10"}, {"DATA", "/var/lib/refdata"}, {"DIR", "/var/lib/refdata"}, {"INBOX", "/var/lib/refdata-inbox"},
	} {
		if strings.Contains(n, kv[0]) {
			return kv[1]
		}
	}
	return "placeholder"
}

// TestCommandLinesFound: the forms deploy/ may write refdata's command lines
// in are each found, with their variables.
func TestCommandLinesFound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		want       [][]string
		env        map[string]string
	}{
		{"refdata.service", "[Service]\nEnvironment=\"REFDATA_LOG_LEVEL=warn\" OTHER=1\nUser=refdata\n# ExecStart=/usr/bin/refdata nonsense\nExecStart=-/usr/local/bin/refdata serve \\\n  --addr ${LISTEN} --data /var/lib/refdata\nExecStartPre=/bin/mkdir -p /var/lib/refdata\n",
			[][]string{{"serve", "--addr", "127.0.0.1:8080", "--data", "/var/lib/refdata"}}, map[string]string{"REFDATA_LOG_LEVEL": "warn"}},
		{"compose.yaml", "services:\n  sync:\n    image: refdata:latest\n    command: [\"sync\", \"--from\", \"${UP:-https://example.org}\"]\n    environment:\n      REFDATA_CONTACT: ${C:-mailto:a@b}\n      PGPASSWORD: ${P:?set it}\n  web:\n    entrypoint: [\"/refdata\"]\n    command: serve --addr :8080\n    healthcheck:\n      test: [\"CMD\", \"/refdata\", \"version\"]\n  db:\n    image: postgres\n    command: [\"postgres\", \"-c\", \"fsync=off\"]\n",
			[][]string{{"sync", "--from", "https://example.org"}, {"version"}, {"serve", "--addr", ":8080"}}, map[string]string{"REFDATA_CONTACT": "mailto:a@b"}},
		{"deployment.yaml", "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n        - name: refdata\n          command: [\"/refdata\"]\n          args:\n            - serve\n            - --addr=:$(PORT)\n          env:\n            - name: REFDATA_STORE\n              valueFrom: {secretKeyRef: {name: db, key: url}}\n            - name: PORT\n              value: \"9090\"\n---\nkind: Job\nspec:\n  containers:\n    - command: [\"sh\", \"-c\", \"refdata import --data /d /snap && echo done\"]\n",
			[][]string{{"serve", "--addr=:9090"}, {"import", "--data", "/d", "/snap"}}, map[string]string{"REFDATA_STORE": "postgres://refdata@db:5432/refdata"}},
		{"run.sh", "#!/bin/sh\nset -e\nREFDATA_RETAIN=5 refdata import --data \"$DATA\" ./snap\nbin=$(realpath bin/refdata)\nexec /usr/bin/refdata serve --data '/srv/x y' # comment\ngo build -o bin/refdata ./cmd/refdata\n",
			[][]string{{"import", "--data", "/var/lib/refdata", "./snap"}, {"serve", "--data", "/srv/x y"}}, map[string]string{"REFDATA_RETAIN": "5"}},
		{"Dockerfile", "FROM scratch\nENV REFDATA_ADDR=:8080\nCOPY refdata /refdata\nENTRYPOINT [\"/refdata\"]\nCMD [\"serve\", \"--data\", \"/data\"]\n",
			[][]string{{"serve", "--data", "/data"}}, map[string]string{"REFDATA_ADDR": ":8080"}},
		{"Dockerfile.alpine", "FROM alpine\nRUN refdata version\nCMD refdata serve --addr :8080\n",
			[][]string{{"version"}, {"serve", "--addr", ":8080"}}, map[string]string{}},
	} {
		lines, env, err := commandLines(tc.name, tc.text)
		if err != nil || fmt.Sprint(lines) != fmt.Sprint(tc.want) || fmt.Sprint(env) != fmt.Sprint(tc.env) {
			t.Errorf("%s: %q, env %v (%v); want %q, env %v", tc.name, lines, env, err, tc.want, tc.env)
		}
	}
}
