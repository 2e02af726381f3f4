// Command assemble writes a one-layer OCI image as an OCI image-layout archive (a tar of
// oci-layout, index.json and blobs/sha256/...), without Docker, reproducibly: the same inputs give
// the same bytes, so the same manifest digest. image/build.sh drives it; see that script for the
// three images built with it.
//
// The layer holds exactly the files, directories and symlinks named on the command line (and their
// parent directories), sorted by name, with the modification time 0 (1970-01-01), numeric owners
// and no user or group names. The config's and the history's "created" are that same instant. The
// layer is gzip-compressed by go-containerregistry (compress/gzip, no name and no time in its
// header), so the digests depend on the inputs, on this module's pinned versions (go.sum) and on
// the Go toolchain's compress/flate, nothing else. The archive around the layout is written the
// same way (sorted, time 0, owner 0:0, modes 0755 and 0644).
//
// The index names the image twice, as buildkit's OCI exporter does: io.containerd.image.name (the
// full reference, which `ctr images import` registers the image under) and
// org.opencontainers.image.ref.name (the tag alone, which skopeo's oci-archive:FILE:TAG selects by).
//
// It prints the manifest digest (sha256:...) on standard output.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// epoch is every timestamp the image and its archive carry.
var epoch = time.Unix(0, 0).UTC()

// list is a repeatable string flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "assemble: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fl := flag.NewFlagSet("assemble", flag.ContinueOnError)
	var files, dirs, symlinks, env, expose list
	out := fl.String("out", "", "the OCI image-layout archive to write (written to OUT.partial, then renamed)")
	ref := fl.String("name", "", "the image's reference, REPOSITORY:TAG (docker.io/library/ is added as Docker does)")
	binary := fl.String("binary", "", "the image's program (its ELF machine gives the architecture; its interpreter and libraries must be in the layer)")
	fl.Var(&files, "file", "DST:MODE:SRC, a regular file at DST (absolute) with octal MODE and SRC's content (symlinks followed); repeatable")
	fl.Var(&dirs, "dir", "DST:MODE:UID:GID, a directory; repeatable (parents of other entries are 0755 0:0)")
	fl.Var(&symlinks, "symlink", "DST:TARGET, a symbolic link; repeatable")
	fl.Var(&env, "env", "KEY=VALUE of the config's Env; repeatable")
	fl.Var(&expose, "expose", "PORT[/PROTO] of the config's ExposedPorts (tcp when no PROTO); repeatable")
	user := fl.String("user", "", "the config's User")
	workdir := fl.String("workdir", "", "the config's WorkingDir")
	entrypoint := fl.String("entrypoint", "", `the config's Entrypoint, a JSON array of strings`)
	cmd := fl.String("cmd", "", `the config's Cmd, a JSON array of strings`)
	createdBy := fl.String("created-by", "image/build.sh", "the layer's history entry")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fl.Args())
	}
	if *out == "" || *ref == "" || *binary == "" {
		return errors.New("-out, -name and -binary are required")
	}
	fullName, tag, err := normalize(*ref)
	if err != nil {
		return err
	}

	entries := map[string]*entry{}
	for _, f := range files {
		if err := addFile(entries, f); err != nil {
			return err
		}
	}
	for _, d := range dirs {
		if err := addDir(entries, d); err != nil {
			return err
		}
	}
	for _, s := range symlinks {
		if err := addSymlink(entries, s); err != nil {
			return err
		}
	}
	addParents(entries)
	arch, err := checkBinary(*binary, entries)
	if err != nil {
		return err
	}

	layerTar, err := layerArchive(entries)
	if err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.DefaultCompression), tarball.WithCompressedCaching)
	if err != nil {
		return fmt.Errorf("layer: %w", err)
	}

	cfg := v1.Config{User: *user, WorkingDir: *workdir, Env: env}
	if cfg.Entrypoint, err = jsonStrings("entrypoint", *entrypoint); err != nil {
		return err
	}
	if cfg.Cmd, err = jsonStrings("cmd", *cmd); err != nil {
		return err
	}
	if len(expose) > 0 {
		cfg.ExposedPorts = map[string]struct{}{}
		for _, p := range expose {
			port, err := exposedPort(p)
			if err != nil {
				return err
			}
			cfg.ExposedPorts[port] = struct{}{}
		}
	}

	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: arch,
		OS:           "linux",
		Created:      v1.Time{Time: epoch},
		Config:       cfg,
		RootFS:       v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: epoch}, CreatedBy: *createdBy},
	})
	if err != nil {
		return fmt.Errorf("appending the layer: %w", err)
	}
	digest, err := img.Digest()
	if err != nil {
		return fmt.Errorf("manifest digest: %w", err)
	}

	dir, err := os.MkdirTemp(filepath.Dir(*out), ".assemble-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("OCI layout: %w", err)
	}
	if err := p.WriteImage(img); err != nil {
		return fmt.Errorf("OCI layout: %w", err)
	}
	manifestSize, err := img.Size()
	if err != nil {
		return err
	}
	// The index's descriptor written here rather than by AppendImage, which also sets artifactType
	// (meant for artifacts, not images) to the config's media type.
	err = p.AppendDescriptor(v1.Descriptor{
		MediaType: types.OCIManifestSchema1,
		Size:      manifestSize,
		Digest:    digest,
		Annotations: map[string]string{
			"io.containerd.image.name":          fullName,
			"org.opencontainers.image.ref.name": tag,
		},
		Platform: &v1.Platform{OS: "linux", Architecture: arch},
	})
	if err != nil {
		return fmt.Errorf("OCI layout: %w", err)
	}
	if err := archive(dir, *out); err != nil {
		return err
	}
	layerSize, err := layer.Size()
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "assemble: %s (%s, %d entries, layer %d bytes uncompressed, %d gzipped) -> %s\n",
		fullName, arch, len(entries), len(layerTar), layerSize, *out)
	fmt.Println(digest.String())
	return nil
}

// normalize gives the reference as containerd's CRI plugin looks images up (docker.io/library/
// added as Docker does), and its tag. A tag is required: an image imported without one is not found
// by a pod's `image:`.
func normalize(ref string) (string, string, error) {
	t, err := name.NewTag(ref)
	if err != nil {
		return "", "", fmt.Errorf("-name %q: %w (REPOSITORY:TAG wanted)", ref, err)
	}
	if !strings.Contains(ref[strings.LastIndex(ref, "/")+1:], ":") {
		return "", "", fmt.Errorf("-name %q: no tag (REPOSITORY:TAG wanted)", ref)
	}
	registry := t.Context().RegistryStr()
	if registry == name.DefaultRegistry {
		registry = "docker.io"
	}
	return registry + "/" + t.Context().RepositoryStr() + ":" + t.TagStr(), t.TagStr(), nil
}

type entry struct {
	typ      byte
	mode     int64
	uid, gid int
	src      string // regular files: where the content is read from
	target   string // symlinks
}

// clean checks an absolute path and gives it without its leading slash (as tar names are).
func clean(p string) (string, error) {
	if !strings.HasPrefix(p, "/") || path.Clean(p) != p || p == "/" {
		return "", fmt.Errorf("%q: an absolute, clean path other than / wanted", p)
	}
	return p[1:], nil
}

func octal(s, what string) (int64, error) {
	m, err := strconv.ParseInt(s, 8, 64)
	if err != nil || m < 0 || m > 0o7777 {
		return 0, fmt.Errorf("%s: mode %q is not an octal mode", what, s)
	}
	return m, nil
}

func put(entries map[string]*entry, dst string, e *entry) error {
	if _, dup := entries[dst]; dup {
		return fmt.Errorf("/%s is named twice", dst)
	}
	entries[dst] = e
	return nil
}

func addFile(entries map[string]*entry, spec string) error {
	parts := strings.SplitN(spec, ":", 3)
	if len(parts) != 3 || parts[2] == "" {
		return fmt.Errorf("-file %q: DST:MODE:SRC wanted", spec)
	}
	dst, err := clean(parts[0])
	if err != nil {
		return fmt.Errorf("-file: %w", err)
	}
	mode, err := octal(parts[1], "-file "+spec)
	if err != nil {
		return err
	}
	st, err := os.Stat(parts[2])
	if err != nil {
		return fmt.Errorf("-file %s: %w", spec, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("-file %s: %s is not a regular file", spec, parts[2])
	}
	return put(entries, dst, &entry{typ: tar.TypeReg, mode: mode, src: parts[2]})
}

func addDir(entries map[string]*entry, spec string) error {
	parts := strings.Split(spec, ":")
	if len(parts) != 4 {
		return fmt.Errorf("-dir %q: DST:MODE:UID:GID wanted", spec)
	}
	dst, err := clean(parts[0])
	if err != nil {
		return fmt.Errorf("-dir: %w", err)
	}
	mode, err := octal(parts[1], "-dir "+spec)
	if err != nil {
		return err
	}
	uid, err1 := strconv.Atoi(parts[2])
	gid, err2 := strconv.Atoi(parts[3])
	if err1 != nil || err2 != nil || uid < 0 || gid < 0 {
		return fmt.Errorf("-dir %q: numeric UID and GID wanted", spec)
	}
	return put(entries, dst, &entry{typ: tar.TypeDir, mode: mode, uid: uid, gid: gid})
}

func addSymlink(entries map[string]*entry, spec string) error {
	dstPath, target, ok := strings.Cut(spec, ":")
	if !ok || target == "" {
		return fmt.Errorf("-symlink %q: DST:TARGET wanted", spec)
	}
	dst, err := clean(dstPath)
	if err != nil {
		return fmt.Errorf("-symlink: %w", err)
	}
	return put(entries, dst, &entry{typ: tar.TypeSymlink, mode: 0o777, target: target})
}

// addParents adds every missing parent directory, 0755 and owned by 0:0.
func addParents(entries map[string]*entry) {
	for p := range entries {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if _, ok := entries[d]; !ok {
				entries[d] = &entry{typ: tar.TypeDir, mode: 0o755}
			}
		}
	}
}

// resolve follows the layer's own symlinks (absolute or relative) to the entry a path names.
func resolve(entries map[string]*entry, p string) (*entry, bool) {
	for hops := 0; hops < 40; hops++ {
		e, ok := entries[strings.TrimPrefix(p, "/")]
		if !ok {
			return nil, false
		}
		if e.typ != tar.TypeSymlink {
			return e, true
		}
		if strings.HasPrefix(e.target, "/") {
			p = e.target
		} else {
			p = path.Join(path.Dir(p), e.target)
		}
	}
	return nil, false
}

// checkBinary reads the program's ELF header: its architecture, and, for a dynamically linked
// program, that its interpreter and every library it needs are in the layer (by name, in one of
// the loader's default directories), so that an image that cannot start is not written.
func checkBinary(binary string, entries map[string]*entry) (string, error) {
	f, err := elf.Open(binary)
	if err != nil {
		return "", fmt.Errorf("-binary %s: not an ELF executable: %w", binary, err)
	}
	defer f.Close()
	var arch string
	switch f.Machine {
	case elf.EM_X86_64:
		arch = "amd64"
	case elf.EM_AARCH64:
		arch = "arm64"
	default:
		return "", fmt.Errorf("-binary %s: ELF machine %v is neither x86-64 nor aarch64", binary, f.Machine)
	}
	for _, prog := range f.Progs {
		if prog.Type != elf.PT_INTERP {
			continue
		}
		raw, err := io.ReadAll(prog.Open())
		if err != nil {
			return "", fmt.Errorf("-binary %s: reading its interpreter: %w", binary, err)
		}
		interp := strings.TrimRight(string(raw), "\x00")
		if e, ok := resolve(entries, interp); !ok || e.typ != tar.TypeReg {
			return "", fmt.Errorf("-binary %s is dynamically linked and its interpreter %s is not in the image", binary, interp)
		}
		libs, err := f.ImportedLibraries()
		if err != nil {
			return "", fmt.Errorf("-binary %s: %w", binary, err)
		}
		for _, lib := range libs {
			if !libraryPresent(entries, lib) {
				return "", fmt.Errorf("-binary %s needs %s, which is in none of the loader's default directories of the image", binary, lib)
			}
		}
	}
	return arch, nil
}

func libraryPresent(entries map[string]*entry, soname string) bool {
	for _, dir := range []string{"/lib", "/usr/lib", "/lib64", "/usr/lib64", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu"} {
		if e, ok := resolve(entries, dir+"/"+soname); ok && e.typ == tar.TypeReg {
			return true
		}
	}
	return false
}

// layerArchive is the layer's uncompressed tar: entries sorted by name (a parent before its
// children), time 0, numeric owners only, USTAR headers (no PAX records, so no access or change
// times).
func layerArchive(entries map[string]*entry) ([]byte, error) {
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		e := entries[n]
		h := &tar.Header{Typeflag: e.typ, Name: n, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: epoch, Format: tar.FormatUSTAR}
		var content []byte
		switch e.typ {
		case tar.TypeDir:
			h.Name += "/"
		case tar.TypeSymlink:
			h.Linkname = e.target
		case tar.TypeReg:
			var err error
			if content, err = os.ReadFile(e.src); err != nil {
				return nil, err
			}
			h.Size = int64(len(content))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer entry /%s: %w", n, err)
		}
		if _, err := tw.Write(content); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// archive writes the layout directory as a tar: sorted, time 0, owner 0:0, 0755 and 0644.
func archive(dir, out string) error {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(names)
	partial := out + ".partial"
	f, err := os.Create(partial)
	if err != nil {
		return err
	}
	defer os.Remove(partial)
	defer f.Close()
	tw := tar.NewWriter(f)
	for _, p := range names {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), ModTime: epoch, Format: tar.FormatUSTAR}
		switch {
		case st.IsDir():
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", 0o755
		case st.Mode().IsRegular():
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, st.Size()
		default:
			return fmt.Errorf("%s: not a file or a directory", p)
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		if h.Typeflag == tar.TypeReg {
			src, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, src)
			src.Close()
			if err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(partial, out)
}

func jsonStrings(flagName, s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var v []string
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, fmt.Errorf("-%s %q: a JSON array of strings wanted: %w", flagName, s, err)
	}
	return v, nil
}

func exposedPort(s string) (string, error) {
	port, proto, hasProto := strings.Cut(s, "/")
	if !hasProto {
		proto = "tcp"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || (proto != "tcp" && proto != "udp" && proto != "sctp") {
		return "", fmt.Errorf("-expose %q: PORT[/tcp|udp|sctp] wanted", s)
	}
	return port + "/" + proto, nil
}
