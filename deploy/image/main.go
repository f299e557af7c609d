// Command image writes refdata's container image as a tarball without a
// container engine, and inspects one. The image is the static binary and
// nothing else: one layer holding /refdata (root-owned, not writable by the
// process), run as the numeric user 65532:65532 (there is no user database to
// name one in). The tarball is what `docker save` writes, so `docker load`,
// `podman load`, `crane push` and `kind load image-archive` take it.
//
//	go run ./image build -binary BIN -tag refdata:latest -o refdata-image.tar
//	go run ./image inspect refdata-image.tar
//
// Both check the binary: a static ELF executable built with CGO_ENABLED=0 and
// -trimpath, its commit recorded in its build info.
package main

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	binPath = "refdata"     // the one file in the layer
	user    = "65532:65532" // the "nonroot" id of distroless images, so volumes prepared for those fit
	port    = "8080/tcp"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: image build -binary BIN -tag REF -o OUT.tar | image inspect OUT.tar")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "build":
		fs := flag.NewFlagSet("build", flag.ExitOnError)
		bin := fs.String("binary", "", "the refdata binary (linux, static)")
		tag := fs.String("tag", "refdata:latest", "the image's name in the tarball")
		out := fs.String("o", "refdata-image.tar", "the tarball to write")
		_ = fs.Parse(os.Args[2:])
		err = build(*bin, *tag, *out)
	case "inspect":
		if len(os.Args) != 3 {
			err = errors.New("usage: image inspect OUT.tar")
			break
		}
		err = inspect(os.Args[2], os.Stdout)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func build(bin, tag, out string) error {
	exe, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	info, err := checkBinary(exe)
	if err != nil {
		return fmt.Errorf("%s: %w", bin, err)
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return err
	}
	// The commit's time stands for every timestamp, so one commit gives one
	// image digest wherever it is built.
	when := info.commitTime
	var layerTar bytes.Buffer
	tw := tar.NewWriter(&layerTar)
	if err := tw.WriteHeader(&tar.Header{Name: binPath, Mode: 0o555, Size: int64(len(exe)),
		Typeflag: tar.TypeReg, ModTime: when, Format: tar.FormatPAX}); err != nil {
		return err
	}
	if _, err := tw.Write(exe); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar.Bytes())), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return err
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: when}, CreatedBy: "deploy/image: the refdata binary", Comment: info.revision,
	}})
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", info.arch
	cfg.Created = v1.Time{Time: when}
	cfg.Config = v1.Config{
		User:       user,
		Entrypoint: []string{"/" + binPath},
		Cmd:        []string{"serve"},
		// In a container the listener must face the network; refdata's own
		// default is the loopback.
		Env:          []string{"REFDATA_ADDR=:8080"},
		ExposedPorts: map[string]struct{}{port: {}},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "refdata",
			"org.opencontainers.image.revision": info.revision,
			"org.opencontainers.image.created":  when.Format(time.RFC3339),
		},
	}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return err
	}
	if err := tarball.WriteToFile(out, ref, img); err != nil {
		return err
	}
	return inspect(out, os.Stdout)
}

// inspect reads a tarball back and fails unless it is the image build writes:
// one layer with only the binary, a non-root numeric user, the binary as the
// entrypoint.
func inspect(path string, w io.Writer) error {
	img, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	var problems []string
	uid, gid, ok := strings.Cut(cfg.Config.User, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		problems = append(problems, fmt.Sprintf("user %q is not a numeric non-root uid", cfg.Config.User))
	}
	if g, err := strconv.Atoi(gid); !ok || err != nil || g == 0 {
		problems = append(problems, fmt.Sprintf("user %q has no numeric non-root gid", cfg.Config.User))
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{"/" + binPath}) {
		problems = append(problems, fmt.Sprintf("entrypoint %q, want [/%s]", cfg.Config.Entrypoint, binPath))
	}
	if cfg.OS != "linux" {
		problems = append(problems, "os "+cfg.OS)
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	if len(layers) != 1 {
		return fmt.Errorf("%s: %d layers, want 1", path, len(layers))
	}
	files, exe, err := layerFiles(layers[0])
	if err != nil {
		return err
	}
	if !slices.Equal(files, []string{binPath + " -r-xr-xr-x 0:0"}) {
		problems = append(problems, fmt.Sprintf("layer holds %q, want only %s (0555, owned by 0:0)", files, binPath))
	}
	info, err := checkBinary(exe)
	if err != nil {
		problems = append(problems, err.Error())
	} else if info.arch != cfg.Architecture {
		problems = append(problems, fmt.Sprintf("binary for %s in an image for %s", info.arch, cfg.Architecture))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s:\n  %s", path, strings.Join(problems, "\n  "))
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	size, err := layers[0].Size()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %s, %s/%s, user %s, entrypoint %q, one layer (%d bytes compressed): %s %d bytes, static, commit %s%s\n",
		path, digest, cfg.OS, cfg.Architecture, cfg.Config.User, cfg.Config.Entrypoint, size, binPath, len(exe), info.revision, info.dirty)
	return nil
}

// layerFiles lists a layer's entries as "name mode uid:gid" and returns the
// binary's bytes.
func layerFiles(l v1.Layer) ([]string, []byte, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return nil, nil, err
	}
	defer rc.Close()
	var files []string
	var exe []byte
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, exe, nil
		}
		if err != nil {
			return nil, nil, err
		}
		files = append(files, fmt.Sprintf("%s %s %d:%d", h.Name, h.FileInfo().Mode(), h.Uid, h.Gid))
		if h.Name == binPath {
			if exe, err = io.ReadAll(tr); err != nil {
				return nil, nil, err
			}
		}
	}
}

type binaryInfo struct {
	arch, revision, dirty string
	commitTime            time.Time
}

// checkBinary holds the binary to what the image promises: a static Linux
// executable (no interpreter, no shared libraries) built without cgo, with
// -trimpath, from a known commit.
func checkBinary(exe []byte) (binaryInfo, error) {
	var info binaryInfo
	f, err := elf.NewFile(bytes.NewReader(exe))
	if err != nil {
		return info, fmt.Errorf("not an ELF executable: %w", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			return info, errors.New("dynamically linked")
		}
	}
	bi, err := buildinfo.Read(bytes.NewReader(exe))
	if err != nil {
		return info, fmt.Errorf("no Go build info: %w", err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	info.arch = settings["GOARCH"]
	info.revision = settings["vcs.revision"]
	if settings["vcs.modified"] == "true" {
		info.dirty = " (with uncommitted changes)"
	}
	info.commitTime, _ = time.Parse(time.RFC3339, settings["vcs.time"])
	switch {
	case settings["GOOS"] != "linux":
		return info, fmt.Errorf("built for GOOS %q", settings["GOOS"])
	case settings["CGO_ENABLED"] != "0":
		return info, errors.New("built with cgo: set CGO_ENABLED=0")
	case settings["-trimpath"] != "true":
		return info, errors.New("built without -trimpath")
	case info.revision == "" || info.commitTime.IsZero():
		return info, errors.New("no commit in its build info: build with -buildvcs=true inside the git clone")
	}
	return info, nil
}
