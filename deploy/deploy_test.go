// Package deploy_test holds the files in deploy/ to what they promise, without
// a container engine or a cluster: compose.yaml loads as Docker Compose loads
// it (compose-go, the spec's schema), every Kubernetes manifest decodes
// strictly into its API type, and both run refdata as the docs say. The
// systemd units are checked by systemd-analyze (check.sh), the image by
// `go run ./image inspect`.
package deploy_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

const placeholderPassword = "placeholder-for-the-test"

func loadCompose(t *testing.T, env ...string) (*types.Project, error) {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{"compose.yaml"},
		cli.WithWorkingDirectory("."), cli.WithEnv(env), cli.WithDiscardEnvFile)
	if err != nil {
		t.Fatal(err)
	}
	return opts.LoadProject(context.Background())
}

func TestCompose(t *testing.T) {
	p, err := loadCompose(t, "POSTGRES_PASSWORD="+placeholderPassword)
	if err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	want := []string{"lb", "postgres", "refdata", "sync"}
	if got := p.ServiceNames(); !slices.Equal(sorted(got), want) {
		t.Fatalf("services %v, want %v", got, want)
	}
	const store = "postgres://refdata@postgres:5432/refdata?sslmode=disable"
	serve := p.Services["refdata"]
	if serve.Deploy == nil || serve.Deploy.Replicas == nil || *serve.Deploy.Replicas != 3 {
		t.Errorf("refdata: want deploy.replicas 3")
	}
	if !slices.Equal(serve.Command, []string{"serve", "--addr", ":8080", "--data", store, "--cache-dir", "/var/cache/refdata"}) {
		t.Errorf("refdata command %q", serve.Command)
	}
	sync := p.Services["sync"]
	if !slices.Equal(sync.Command, []string{"sync", "--every", "5m", "--from", "https://valorant-api.com", "--data", store}) {
		t.Errorf("sync command %q (REFDATA_UPSTREAM unset: the public API)", sync.Command)
	}
	// A replica stages a version in its segment cache: on a volume of its own,
	// not in memory.
	if !slices.ContainsFunc(serve.Volumes, func(v types.ServiceVolumeConfig) bool { return v.Target == "/var/cache/refdata" && v.Source == "" }) {
		t.Errorf("refdata: no volume of its own at --cache-dir /var/cache/refdata (%v)", serve.Volumes)
	}
	if !slices.ContainsFunc(sync.Tmpfs, func(m string) bool { return strings.HasPrefix(m, "/tmp") }) {
		t.Errorf("sync: a read-only root and no writable /tmp (tmpfs %q): the fetch is spooled to $TMPDIR", sync.Tmpfs)
	}
	for _, name := range []string{"refdata", "sync"} {
		s := p.Services[name]
		if !s.ReadOnly || !slices.Equal(s.CapDrop, []string{"ALL"}) || !slices.Contains(s.SecurityOpt, "no-new-privileges:true") {
			t.Errorf("%s: want read_only, cap_drop ALL, no-new-privileges", name)
		}
		// The password reaches refdata as PGPASSWORD, never inside a command line.
		if pw := s.Environment["PGPASSWORD"]; pw == nil || *pw != placeholderPassword {
			t.Errorf("%s: PGPASSWORD is not POSTGRES_PASSWORD", name)
		}
		if dep, ok := s.DependsOn["postgres"]; !ok || dep.Condition != types.ServiceConditionHealthy {
			t.Errorf("%s: want depends_on postgres service_healthy", name)
		}
		if s.Image != "refdata:latest" {
			t.Errorf("%s: image %q (make image loads refdata:latest)", name, s.Image)
		}
	}
	if p.Services["postgres"].HealthCheck == nil {
		t.Errorf("postgres: no healthcheck")
	}
	lb := p.Services["lb"]
	if len(lb.Volumes) != 1 || filepath.Base(lb.Volumes[0].Source) != "haproxy.cfg" {
		t.Fatalf("lb: want haproxy.cfg mounted, have %+v", lb.Volumes)
	}
	cfg, err := os.ReadFile("haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"http-check send meth GET uri /readyz", "http-check expect status 200", "server-template refdata 3 refdata:8080 check"} {
		if !bytes.Contains(cfg, []byte(line)) {
			t.Errorf("haproxy.cfg lacks %q", line)
		}
	}

	p, err = loadCompose(t, "POSTGRES_PASSWORD=x", "REFDATA_UPSTREAM=http://upstream.example:8080")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Services["sync"].Command; !slices.Contains(got, "http://upstream.example:8080") {
		t.Errorf("REFDATA_UPSTREAM not used: %q", got)
	}
	// No password is written down: without one the file does not load.
	if _, err := loadCompose(t); err == nil || !strings.Contains(err.Error(), "POSTGRES_PASSWORD") {
		t.Errorf("compose.yaml loads without POSTGRES_PASSWORD (err %v)", err)
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// decode reads one Kubernetes manifest strictly: an unknown or misspelt field
// is an error, as kubectl's server-side validation makes it.
func decode(t *testing.T, name string, into any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("kubernetes", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("kubernetes/%s: %v", name, err)
	}
}

func TestKubernetes(t *testing.T) {
	var kust struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
		Images     []struct {
			Name, NewName, NewTag, Digest string
		} `json:"images"`
	}
	decode(t, "kustomization.yaml", &kust)
	// The pods pull only an image they lack: a moving tag would leave each
	// node on whichever image it pulled first.
	if len(kust.Images) != 1 || kust.Images[0].Name != "refdata" || kust.Images[0].Digest == "" && (kust.Images[0].NewTag == "" || kust.Images[0].NewTag == "latest") {
		t.Errorf("kustomization images %+v: want refdata by a version tag or a digest, never latest", kust.Images)
	}
	files, _ := filepath.Glob("kubernetes/*.yaml")
	var listed []string
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" && b != "secret.example.yaml" {
			listed = append(listed, b)
		}
	}
	if !slices.Equal(sorted(kust.Resources), listed) {
		t.Errorf("kustomization resources %v, want every manifest but the example Secret: %v", kust.Resources, listed)
	}

	var d appsv1.Deployment
	decode(t, "deployment.yaml", &d)
	if d.Kind != "Deployment" || d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("deployment: want a Deployment of 3 replicas")
	}
	labels := d.Spec.Template.Labels
	if !matches(d.Spec.Selector.MatchLabels, labels) {
		t.Errorf("deployment: selector does not match its pods")
	}
	pod := d.Spec.Template.Spec
	checkPod(t, "deployment", pod)
	c := pod.Containers[0]
	if got := append(slices.Clone(c.Command), c.Args...); !slices.Equal(got, []string{"/refdata", "serve", "--addr", ":8080"}) {
		t.Errorf("deployment: runs %q", got)
	}
	probe := func(p *corev1.Probe, path string) {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != path || p.HTTPGet.Port != intstr.FromString("http") {
			t.Errorf("deployment: want a probe of %s on port http, have %+v", path, p)
		}
	}
	probe(c.ReadinessProbe, "/readyz")
	probe(c.LivenessProbe, "/healthz")
	probe(c.StartupProbe, "/healthz")
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("deployment: want cpu and memory requests and a memory limit")
	}
	checkMemLimit(t, "deployment", c)
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("deployment: want port http 8080")
	}

	var svc corev1.Service
	decode(t, "service.yaml", &svc)
	if svc.Kind != "Service" || !matches(svc.Spec.Selector, labels) || svc.Spec.Ports[0].TargetPort != intstr.FromString("http") {
		t.Errorf("service: does not select the Deployment's pods on port http")
	}

	var pdb policyv1.PodDisruptionBudget
	decode(t, "poddisruptionbudget.yaml", &pdb)
	if pdb.Kind != "PodDisruptionBudget" || !matches(pdb.Spec.Selector.MatchLabels, labels) || pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() < 2 {
		t.Errorf("pdb: want minAvailable ≥ 2 of the Deployment's pods")
	}

	var cj batchv1.CronJob
	decode(t, "cronjob-sync.yaml", &cj)
	if cj.Kind != "CronJob" || cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("cronjob: want a CronJob that never runs two syncs at once")
	}
	jp := cj.Spec.JobTemplate.Spec.Template.Spec
	checkPod(t, "cronjob", jp)
	jc := jp.Containers[0]
	checkMemLimit(t, "cronjob", jc)
	if got := append(slices.Clone(jc.Command), jc.Args...); len(got) < 3 || !slices.Equal(got[:3], []string{"/refdata", "sync", "--once"}) || !slices.Contains(got, "--from") {
		t.Errorf("cronjob: runs %q", got)
	}
	if !slices.ContainsFunc(jc.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/tmp" && !m.ReadOnly }) ||
		!slices.ContainsFunc(jp.Volumes, func(v corev1.Volume) bool { return v.EmptyDir != nil }) {
		t.Errorf("cronjob: a read-only root and no writable /tmp: the fetch is spooled to $TMPDIR")
	}

	var secret corev1.Secret
	decode(t, "secret.example.yaml", &secret)
	url := secret.StringData["url"]
	if secret.Kind != "Secret" || secret.Name != "refdata-database" || !strings.HasPrefix(url, "postgres://") || !strings.Contains(url, "REPLACE-ME") {
		t.Errorf("secret.example.yaml: want refdata-database with a postgres:// url whose password is REPLACE-ME, have %q", url)
	}
}

// checkPod holds a pod to what every refdata pod promises: a non-root user, a
// read-only root file system, no privileges, the store's URL from the Secret.
func checkPod(t *testing.T, what string, pod corev1.PodSpec) {
	t.Helper()
	if len(pod.Containers) != 1 {
		t.Fatalf("%s: want one container", what)
	}
	psc, c := pod.SecurityContext, pod.Containers[0]
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Errorf("%s: want runAsNonRoot and a non-zero runAsUser", what)
	}
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("%s: want readOnlyRootFilesystem, no privilege escalation, every capability dropped", what)
	}
	if c.Image != "refdata" || c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("%s: image %q pulled %s; want refdata, which kustomization.yaml names by version, pulled IfNotPresent", what, c.Image, c.ImagePullPolicy)
	}
	for _, e := range c.Env {
		if e.Name == "REFDATA_STORE" {
			if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "refdata-database" {
				t.Errorf("%s: REFDATA_STORE is not from the Secret refdata-database", what)
			}
			return
		}
	}
	t.Errorf("%s: no REFDATA_STORE", what)
}

// checkMemLimit holds a container's GOMEMLIMIT to about 90 % of its memory
// limit: at the limit itself the kernel kills before the collector has
// tried harder, and the process has memory outside the Go heap.
func checkMemLimit(t *testing.T, what string, c corev1.Container) {
	t.Helper()
	for _, e := range c.Env {
		if e.Name != "GOMEMLIMIT" {
			continue
		}
		limit := c.Resources.Limits.Memory().Value()
		n, unit := int64(0), ""
		if _, err := fmt.Sscanf(e.Value, "%d%s", &n, &unit); err != nil || unit != "MiB" {
			t.Errorf("%s: GOMEMLIMIT %q: want a number of MiB", what, e.Value)
			return
		}
		if share := float64(n<<20) / float64(limit); share < 0.85 || share > 0.95 {
			t.Errorf("%s: GOMEMLIMIT %s is %.0f %% of the memory limit %d, want about 90 %%", what, e.Value, 100*share, limit)
		}
		return
	}
	t.Errorf("%s: no GOMEMLIMIT", what)
}

// TestSystemd: the units promise what docs/operations.md says: the server
// answers with the sample data until the first sync publishes (so the
// quick start's curl of /readyz succeeds), every unit that runs refdata has
// a memory bound with GOMEMLIMIT about 90 % of it and reports its failure
// through refdata-failure@. systemd-analyze verifies them (check.sh).
func TestSystemd(t *testing.T) {
	units := map[string]string{}
	for _, name := range []string{"refdata.service", "refdata-sync.service", "refdata-failure@.service"} {
		b, err := os.ReadFile(filepath.Join("systemd", name))
		if err != nil {
			t.Fatal(err)
		}
		units[name] = string(b)
	}
	if !strings.Contains(units["refdata.service"], "\nExecStart=/usr/local/bin/refdata serve ") || !strings.Contains(units["refdata.service"], " --sample-until-imported") {
		t.Errorf("refdata.service does not serve the sample data until the first import")
	}
	ops, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ops), "Until the first sync publishes, the server answers with the embedded sample data") {
		t.Errorf("docs/operations.md no longer says what refdata.service does until the first sync")
	}
	for _, name := range []string{"refdata.service", "refdata-sync.service"} {
		u := units[name]
		for _, line := range []string{"MemoryMax=2G", "Environment=GOMEMLIMIT=1843MiB", "OnFailure=refdata-failure@%n.service"} {
			if !strings.Contains(u, "\n"+line+"\n") {
				t.Errorf("%s lacks %s", name, line)
			}
		}
	}
	if !strings.Contains(units["refdata-failure@.service"], "--unit=%i") {
		t.Errorf("refdata-failure@.service does not name the failed unit")
	}
}

func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
