// Command fields lists every field of the Kubernetes API types that kube-scheduler's mirrored
// plugins read, for the k8s.io/kubernetes version this program is built against (the module file
// of e2e/kube it is built with: go.mod, go.v1.35.mod, ...), by static analysis of upstream's Go
// source. One line per field, sorted:
//
//	<group>/<version> <Type>.<jsonName> <plugins>
//
// e.g. "core/v1 PodSpec.overhead NodeResourcesBalancedAllocation,NodeResourcesFit,snapshot".
// Group is core (k8s.io/api/core/v1), storage (k8s.io/api/storage/v1), apps (k8s.io/api/apps/v1),
// resource (k8s.io/api/resource/v1) or meta (k8s.io/apimachinery/pkg/apis/meta/v1); Type is the
// struct that declares the field (a promoted field is reported on the embedded struct:
// ObjectMeta.labels, not Pod.labels); jsonName is the field's JSON name (its Go name if it has no
// json tag; embedded fields the JSON inlines are not fields of their own). Plugins are the
// registered names (names.*) whose roots reach the read, and "snapshot" for the NodeInfo/PodInfo
// and snapshot roots.
//
//	cd e2e/kube && GOWORK=off go run -modfile=go.v1.35.mod ./fields [--debug]
//
// # Which k8s.io/kubernetes is analysed
//
// The program imports k8s.io/kubernetes (the names package), so its build information records
// the k8s.io/kubernetes version of the module file it was built with; it analyses that version by
// running go/packages (go list) in the e2e/kube module with the module file (go.mod or
// go.v*.mod) that pins that version, -mod=readonly, CGO_ENABLED=0, GOWORK=off.
//
// # Roots
//
// Per plugin (pkg/scheduler/framework/plugins/...): the plugin type's PreFilter, Filter, PreScore,
// Score, PreFilterExtensions and ScoreExtensions methods, the AddPod/RemovePod/NormalizeScore
// methods of the concrete types PreFilterExtensions and ScoreExtensions return (the plugin
// itself, or nothing when they return nil), and the plugin's constructor (New, NewFit,
// NewBalancedAllocation, NewCSI). Filter plugins: NodeUnschedulable, NodeName, TaintToleration,
// NodeAffinity, NodePorts, NodeResourcesFit, VolumeRestrictions, NodeVolumeLimits (CSI),
// VolumeBinding, VolumeZone, PodTopologySpread, InterPodAffinity; score plugins:
// NodeResourcesFit (its LeastAllocated, MostAllocated and RequestedToCapacityRatio scorers),
// NodeResourcesBalancedAllocation, ImageLocality, InterPodAffinity, NodeAffinity,
// TaintToleration, PodTopologySpread. A plugin's methods are taken wherever they exist, so
// VolumeBinding's (feature-gated) PreScore/Score count too.
// "snapshot": pkg/scheduler/framework's NewNodeInfo, (*NodeInfo).AddPod, AddPodInfo, RemovePod,
// SetNode, NewPodInfo, (*PodInfo).Update, (*PodInfo).CalculateResource (looked up in
// k8s.io/kube-scheduler/framework when absent there), and pkg/scheduler/backend/cache's
// NewSnapshot and (*cacheImpl).UpdateSnapshot.
//
// # Reachability
//
// The packages are type-checked from source and converted to SSA (golang.org/x/tools/go/ssa,
// generics instantiated). Function bodies are kept only in the k8s.io modules, but k8s.io/klog
// and k8s.io/client-go, and only in files not marked "Code generated ... DO NOT EDIT.": in the
// standard library, third-party modules, klog, client-go (clientsets, informers, listers, the
// stores and caches of tools/cache, which read object metadata for keys, label selection and
// resource versions, and would call every event handler of the program if entered) and generated
// code (deepcopy, conversion, defaults, protobuf marshalling and String), every function body is
// replaced by panic(0) before type checking. Those functions are leaves: nothing is read in them
// and nothing is reached through them, but for the two rules about values below.
//
// The reachable set of a root group is the closure, from its roots, of these edges out of a
// function F (a custom class-hierarchy analysis, more precise than go/callgraph/cha, which
// assumes every function of a matching signature is called through every function value):
//   - every function F refers to: the static callees, and the functions and closures F uses as
//     values, assumed called (sort.Slice's less function, a parallelizer's work function, the
//     event handlers a constructor registers, the scorer a constructor stores in a field);
//   - interface method calls in F, resolved class-hierarchy style: each concrete type declared
//     in a package with bodies (T and *T, non-generic) that implements the interface contributes
//     its method (e.g. fwk.NodeInfo's methods resolve to pkg/scheduler/framework.NodeInfo's,
//     csi-translation-lib's InTreePlugin to every in-tree translator); never followed: methods
//     named Error, String, GoString, Format, DeepCopy*, Marshal*, Unmarshal*, ProtoMessage,
//     Reset, Size, Descriptor, XXX_* (formatting, copying, encoding);
//   - a conversion in F of a concrete value to a non-empty interface of a bodiless package
//     (sort.Interface, heap.Interface, ...) reaches the type's methods of that interface, which
//     the bodiless callee would call;
//   - a package-level variable F uses reaches the functions and function literals of its
//     initializer (noderesources' nodeResourceStrategyTypeMap of scorers).
//
// Excluded, with everything reachable only through them (by name, in pkg/scheduler/...):
// EventsToRegister, queueing hints (isSchedulableAfter*), SignPod and the batching hooks
// (GetNodeHint, StoreScheduleResults), Reserve, Unreserve, Permit, PreBind, PreBindPreFlight,
// Bind, PostBind and PostFilter.
//
// # Reads
//
// A read is an ssa.FieldAddr or ssa.Field selecting a field of a struct declared in one of the
// API packages above, in a reachable function with a body. The hand-written helpers of the API
// packages count ((*Toleration).ToleratesTaint, (*Taint).MatchTaint, LabelSelectorAsSelector,
// IsControlledBy: without them Toleration.key, LabelSelector.matchLabels and the like would be
// missed); their generated code has no body. A FieldAddr whose only uses are stores to it,
// directly or through further FieldAddrs (x.Spec.NodeName = ...), is a write and is ignored; any
// other use, taking the address included, is a read. The selections in synthetic wrappers (a
// promoted method called through an interface or as a value, e.g. (*Pod).GetName selecting
// Pod.metadata) are not counted: the promoted method itself is. Whole-struct copies and
// comparisons, reflection and reads in bodiless code are not seen.
//
// The result over-approximates: class-hierarchy dispatch, function values assumed called,
// constructors' informers and event handlers, feature-gated code counted as always on. It misses
// reads behind function values made outside the reachable code (e.g. by the framework) and
// called from it, and in methods of function-local types called through interfaces.
//
// With --debug, standard error gets, for every field, one (shortest) call path per plugin from a
// root to a function that reads the field.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/types/typeutil"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
)

const (
	modulePath    = "github.com/kube-extender/e2e/kube"
	kubernetesMod = "k8s.io/kubernetes"
	pluginsPkg    = "k8s.io/kubernetes/pkg/scheduler/framework/plugins/"
	frameworkPkg  = "k8s.io/kubernetes/pkg/scheduler/framework"
	fwkPkg        = "k8s.io/kube-scheduler/framework"
	cachePkg      = "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	snapshotGroup = "snapshot"
)

// The API packages whose struct fields are reported, by the group/version they are reported as.
var reported = map[string]string{
	"k8s.io/api/core/v1":                   "core/v1",
	"k8s.io/api/storage/v1":                "storage/v1",
	"k8s.io/api/apps/v1":                   "apps/v1",
	"k8s.io/api/resource/v1":               "resource/v1",
	"k8s.io/apimachinery/pkg/apis/meta/v1": "meta/v1",
}

// A plugin: its registered name, package (under plugins/), type and constructor.
type plugin struct {
	name, pkg, typ, ctor string
}

var plugins = []plugin{
	{names.NodeUnschedulable, "nodeunschedulable", "NodeUnschedulable", "New"},
	{names.NodeName, "nodename", "NodeName", "New"},
	{names.TaintToleration, "tainttoleration", "TaintToleration", "New"},
	{names.NodeAffinity, "nodeaffinity", "NodeAffinity", "New"},
	{names.NodePorts, "nodeports", "NodePorts", "New"},
	{names.NodeResourcesFit, "noderesources", "Fit", "NewFit"},
	{names.NodeResourcesBalancedAllocation, "noderesources", "BalancedAllocation", "NewBalancedAllocation"},
	{names.VolumeRestrictions, "volumerestrictions", "VolumeRestrictions", "New"},
	{names.NodeVolumeLimits, "nodevolumelimits", "CSILimits", "NewCSI"},
	{names.VolumeBinding, "volumebinding", "VolumeBinding", "New"},
	{names.VolumeZone, "volumezone", "VolumeZone", "New"},
	{names.PodTopologySpread, "podtopologyspread", "PodTopologySpread", "New"},
	{names.InterPodAffinity, "interpodaffinity", "InterPodAffinity", "New"},
	{names.ImageLocality, "imagelocality", "ImageLocality", "New"},
}

// The plugin methods that are roots, and the extension methods looked up on the types that
// PreFilterExtensions and ScoreExtensions return.
var (
	pluginMethods    = []string{"PreFilter", "Filter", "PreScore", "Score", "PreFilterExtensions", "ScoreExtensions"}
	extensionMethods = map[string][]string{
		"PreFilterExtensions": {"AddPod", "RemovePod"},
		"ScoreExtensions":     {"NormalizeScore"},
	}
)

// The snapshot roots: a function (recv "") or a method of *recv, in the first package that has it.
type snapshotRoot struct {
	pkgs       []string
	recv, name string
}

var snapshotRoots = []snapshotRoot{
	{[]string{frameworkPkg, fwkPkg}, "", "NewNodeInfo"},
	{[]string{frameworkPkg, fwkPkg}, "NodeInfo", "AddPod"},
	{[]string{frameworkPkg, fwkPkg}, "NodeInfo", "AddPodInfo"},
	{[]string{frameworkPkg, fwkPkg}, "NodeInfo", "RemovePod"},
	{[]string{frameworkPkg, fwkPkg}, "NodeInfo", "SetNode"},
	{[]string{frameworkPkg, fwkPkg}, "", "NewPodInfo"},
	{[]string{frameworkPkg, fwkPkg}, "PodInfo", "Update"},
	{[]string{frameworkPkg, fwkPkg}, "PodInfo", "CalculateResource"},
	{[]string{cachePkg}, "", "NewSnapshot"},
	{[]string{cachePkg}, "cacheImpl", "UpdateSnapshot"},
}

// Functions never entered (by their name, in k8s.io/kubernetes/pkg/scheduler/...).
var excludedNames = map[string]bool{
	"EventsToRegister": true, "SignPod": true, "GetNodeHint": true, "StoreScheduleResults": true,
	"Reserve": true, "Unreserve": true, "Permit": true, "PreBind": true, "PreBindPreFlight": true,
	"Bind": true, "PostBind": true, "PostFilter": true,
}

// Interface methods never resolved (formatting, copying, encoding).
var opaqueMethod = regexp.MustCompile(`^(Error|String|GoString|Format|DeepCopy.*|Marshal.*|` +
	`Unmarshal.*|ProtoMessage|Reset|Size|Descriptor|XXX_.*)$`)

func usage() {
	fmt.Fprint(os.Stderr, `Usage: go run -modfile=<go.mod|go.v1.NN.mod> ./fields [--debug]   (in e2e/kube, GOWORK=off)

Lists the fields of the Kubernetes API types (core/v1, storage/v1, apps/v1, resource/v1, meta/v1)
that kube-scheduler's mirrored Filter and Score plugins and its NodeInfo/PodInfo snapshot read,
found by static analysis (go/packages + go/ssa, class-hierarchy call resolution) of the
k8s.io/kubernetes version the module file pins. One line per field, sorted:

  <group>/<version> <Type>.<jsonName> <plugin>,<plugin>,...

Flags:
  --debug   print to standard error, for every field, one (shortest) call path per plugin from
            a root to a function that reads the field
  --help    this text

The top comment of e2e/kube/fields/main.go describes the roots, how reachability is computed and
what is excluded.
`)
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "fields: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	debugFlag := flag.Bool("debug", false, "print a call path per plugin to every field on standard error")
	flag.Usage = usage
	flag.Parse()
	if flag.NArg() > 0 {
		usage()
		os.Exit(2)
	}

	version, modDir, modFile := locate()
	pkgs, fset := load(modDir, modFile)
	a := newAnalyzer(pkgs, fset)

	var groups []group
	for _, p := range plugins {
		groups = append(groups, group{p.name, a.pluginRoots(p)})
	}
	groups = append(groups, group{snapshotGroup, a.snapshotRoots()})

	type hit struct {
		pos  token.Pos
		path []*ssa.Function // with --debug
	}
	byField := map[fieldKey]map[string]*hit{}
	for _, g := range groups {
		parent := a.reach(g.roots)
		if *debugFlag {
			var rs []string
			for _, r := range g.roots {
				rs = append(rs, r.String())
			}
			fmt.Fprintf(os.Stderr, "fields: %s: %d functions reachable from %s\n", g.name, len(parent), strings.Join(rs, ", "))
		}
		for fn := range parent {
			for _, r := range a.facts(fn).reads {
				m := byField[r.key]
				if m == nil {
					m = map[string]*hit{}
					byField[r.key] = m
				}
				h := m[g.name]
				if h == nil {
					h = &hit{pos: r.pos}
					if *debugFlag {
						h.path = pathTo(parent, fn)
					}
					m[g.name] = h
				} else if *debugFlag {
					// The shortest path, then the first position: the same on every run.
					n := pathLen(parent, fn)
					if n < len(h.path) || n == len(h.path) &&
						a.fset.Position(r.pos).String() < a.fset.Position(h.pos).String() {
						h.pos, h.path = r.pos, pathTo(parent, fn)
					}
				}
			}
		}
	}

	keys := make([]fieldKey, 0, len(byField))
	for k := range byField {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for _, k := range keys {
		var ps []string
		for p := range byField[k] {
			ps = append(ps, p)
		}
		sort.Strings(ps)
		fmt.Fprintf(out, "%s %s\n", k, strings.Join(ps, ","))
		if *debugFlag {
			out.Flush()
			fmt.Fprintf(os.Stderr, "%s:\n", k)
			for _, p := range ps {
				h := byField[k][p]
				var steps []string
				for _, fn := range h.path {
					steps = append(steps, fn.String())
				}
				fmt.Fprintf(os.Stderr, "  %s: %s at %s\n", p, strings.Join(steps, " -> "), a.fset.Position(h.pos))
			}
		}
	}
	if *debugFlag {
		fmt.Fprintf(os.Stderr, "fields: k8s.io/kubernetes %s (%s): %d fields\n", version, filepath.Base(modFile), len(keys))
	}
}

// locate finds the k8s.io/kubernetes version this program was built against, the e2e/kube module
// directory and the module file in it that pins that version.
func locate() (version, modDir, modFile string) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		fatalf("no build information in the binary; build it with `go build` or `go run` in e2e/kube")
	}
	for _, d := range info.Deps {
		if d.Path == kubernetesMod {
			version = d.Version
			if d.Replace != nil {
				version = d.Replace.Version
			}
		}
	}
	if version == "" {
		fatalf("the binary's build information names no %s version", kubernetesMod)
	}

	// The module directory: this source file's (go run and go build without -trimpath), else
	// the module of the working directory.
	var dirs []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dirs = append(dirs, filepath.Dir(filepath.Dir(file)))
	}
	if out, err := exec.Command("go", "env", "GOMOD").Output(); err == nil {
		if gomod := strings.TrimSpace(string(out)); gomod != "" && gomod != os.DevNull {
			dirs = append(dirs, filepath.Dir(gomod))
		}
	}
	requireLine := regexp.MustCompile(`(?m)^(?:require)?\s*` + regexp.QuoteMeta(kubernetesMod) + `\s+(v\S+)`)
	moduleLine := regexp.MustCompile(`(?m)^module\s+(\S+)`)
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "go.v*.mod"))
		files = append([]string{filepath.Join(dir, "go.mod")}, files...)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			if m := moduleLine.FindSubmatch(data); m == nil || string(m[1]) != modulePath {
				break
			}
			if m := requireLine.FindSubmatch(data); m != nil && string(m[1]) == version {
				return version, dir, f
			}
		}
	}
	fatalf("found no module file of %s pinning %s %s (looked in %s); run in e2e/kube",
		modulePath, kubernetesMod, version, strings.Join(dirs, ", "))
	return
}

// inScope reports whether a package keeps its function bodies: the k8s.io modules but klog and
// client-go.
func inScope(path string) bool {
	return strings.HasPrefix(path, "k8s.io/") && !strings.HasPrefix(path, "k8s.io/klog/") &&
		path != "k8s.io/client-go" && !strings.HasPrefix(path, "k8s.io/client-go/")
}

// fileInScope is inScope by a file's path in the module cache (or a replacement directory).
func fileInScope(filename string) bool {
	f := filepath.ToSlash(filename)
	return strings.Contains(f, "/k8s.io/") && !strings.Contains(f, "/k8s.io/klog/") &&
		!strings.Contains(f, "/k8s.io/client-go@") && !strings.Contains(f, "/k8s.io/client-go/")
}

// load type-checks the plugin, framework and cache packages and their dependencies from source;
// function bodies are dropped outside the analysed modules and in generated files.
func load(modDir, modFile string) ([]*packages.Package, *token.FileSet) {
	fset := token.NewFileSet()
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps |
			packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedModule,
		Dir:        modDir,
		Fset:       fset,
		BuildFlags: []string{"-modfile=" + modFile, "-mod=readonly"},
		Env:        append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0"),
		ParseFile: func(fset *token.FileSet, filename string, src []byte) (*ast.File, error) {
			keep := fileInScope(filename)
			mode := parser.SkipObjectResolution
			if keep {
				mode |= parser.ParseComments // for ast.IsGenerated
			}
			f, err := parser.ParseFile(fset, filename, src, mode)
			if f != nil && (!keep || ast.IsGenerated(f)) {
				for _, d := range f.Decls {
					if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
						fd.Body = panicBody(fd.Body)
					}
				}
			}
			return f, err
		},
	}
	patterns := []string{frameworkPkg, cachePkg}
	seen := map[string]bool{}
	for _, p := range plugins {
		if !seen[p.pkg] {
			seen[p.pkg] = true
			patterns = append(patterns, pluginsPkg+p.pkg)
		}
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		fatalf("loading %s with %s: %v", strings.Join(patterns, " "), modFile, err)
	}
	// Errors: any listing or parsing error, and type errors but those that dropping function
	// bodies causes (imports only the bodies used).
	var errs []string
	seenErr := map[string]bool{}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			if e.Kind == packages.TypeError && unusedError.MatchString(e.Msg) || seenErr[e.Error()] {
				continue
			}
			seenErr[e.Error()] = true
			errs = append(errs, e.Error())
		}
	})
	if len(errs) > 0 {
		if len(errs) > 20 {
			errs = append(errs[:20], fmt.Sprintf("... and %d more", len(errs)-20))
		}
		fatalf("loading the scheduler packages with %s failed:\n  %s", modFile, strings.Join(errs, "\n  "))
	}
	return pkgs, fset
}

// panicBody replaces a dropped function body: `{ panic(0) }` type-checks whatever the function
// returns (go/types wants a body for generic functions and init), and reads and calls nothing.
func panicBody(b *ast.BlockStmt) *ast.BlockStmt {
	call := &ast.CallExpr{
		Fun:    &ast.Ident{NamePos: b.Lbrace, Name: "panic"},
		Lparen: b.Lbrace,
		Args:   []ast.Expr{&ast.BasicLit{ValuePos: b.Lbrace, Kind: token.INT, Value: "0"}},
		Rparen: b.Lbrace,
	}
	return &ast.BlockStmt{Lbrace: b.Lbrace, List: []ast.Stmt{&ast.ExprStmt{X: call}}, Rbrace: b.Rbrace}
}

// The type errors dropping function bodies causes.
var unusedError = regexp.MustCompile(`(imported( as \S+)?|declared) and not used`)

type group struct {
	name  string
	roots []*ssa.Function
}

type fieldKey struct {
	gv, typ, field string
}

func (k fieldKey) String() string { return k.gv + " " + k.typ + "." + k.field }

type read struct {
	key fieldKey
	pos token.Pos
}

// What a function reads and which functions it reaches directly.
type facts struct {
	reads []read
	succ  []*ssa.Function
}

type analyzer struct {
	fset     *token.FileSet
	prog     *ssa.Program
	byTypes  map[*types.Package]*packages.Package
	facts_   map[*ssa.Function]*facts
	byMethod map[string][]types.Type // concrete k8s.io types by the names of their methods
	invokes  typeutil.Map            // interface type -> map[method id][]*ssa.Function
	inits    map[*ssa.Package]map[*ssa.Global][]*ssa.Function
}

func newAnalyzer(pkgs []*packages.Package, fset *token.FileSet) *analyzer {
	prog := ssa.NewProgram(fset, ssa.InstantiateGenerics)
	a := &analyzer{
		fset:     fset,
		prog:     prog,
		byTypes:  map[*types.Package]*packages.Package{},
		facts_:   map[*ssa.Function]*facts{},
		byMethod: map[string][]types.Type{},
		inits:    map[*ssa.Package]map[*ssa.Global][]*ssa.Function{},
	}
	var all []*packages.Package
	packages.Visit(pkgs, nil, func(p *packages.Package) { all = append(all, p) })
	created := map[*types.Package]bool{}
	for _, p := range all {
		if p.Types == nil || created[p.Types] {
			continue
		}
		created[p.Types] = true
		a.byTypes[p.Types] = p
		if inScope(p.PkgPath) {
			prog.CreatePackage(p.Types, p.Syntax, p.TypesInfo, true)
		} else {
			prog.CreatePackage(p.Types, nil, nil, true)
		}
	}
	// Packages known only as imports of export data (none expected when loading from source).
	for _, p := range all {
		if p.Types == nil {
			continue
		}
		for _, imp := range p.Types.Imports() {
			if !created[imp] {
				created[imp] = true
				prog.CreatePackage(imp, nil, nil, true)
			}
		}
	}
	prog.Build()

	// The concrete types interface calls may reach: named non-generic types of the analysed
	// packages, and pointers to them.
	for _, sp := range prog.AllPackages() {
		if !inScope(sp.Pkg.Path()) {
			continue
		}
		for _, m := range sp.Members {
			t, ok := m.(*ssa.Type)
			if !ok {
				continue
			}
			named, ok := types.Unalias(t.Type()).(*types.Named)
			if !ok || named.TypeParams().Len() > 0 || types.IsInterface(named) {
				continue
			}
			for _, T := range []types.Type{named, types.NewPointer(named)} {
				mset := prog.MethodSets.MethodSet(T)
				for i := 0; i < mset.Len(); i++ {
					name := mset.At(i).Obj().Name()
					a.byMethod[name] = append(a.byMethod[name], T)
				}
			}
		}
	}
	return a
}

func (a *analyzer) pkg(path string) *ssa.Package {
	for _, sp := range a.prog.AllPackages() {
		if sp.Pkg.Path() == path {
			return sp
		}
	}
	return nil
}

// method finds the method name of *T (T a named type of pkg), or nil.
func (a *analyzer) method(pkg *ssa.Package, typ, name string) *ssa.Function {
	t, ok := pkg.Members[typ].(*ssa.Type)
	if !ok {
		return nil
	}
	return a.methodOf(types.NewPointer(t.Type()), pkg.Pkg, name)
}

func (a *analyzer) methodOf(T types.Type, pkg *types.Package, name string) *ssa.Function {
	sel := a.prog.MethodSets.MethodSet(T).Lookup(pkg, name)
	if sel == nil {
		return nil
	}
	return a.prog.MethodValue(sel)
}

func (a *analyzer) pluginRoots(p plugin) []*ssa.Function {
	path := pluginsPkg + p.pkg
	sp := a.pkg(path)
	if sp == nil {
		fatalf("package %s (plugin %s) was not loaded", path, p.name)
	}
	var roots []*ssa.Function
	if f, ok := sp.Members[p.ctor].(*ssa.Function); ok {
		roots = append(roots, f)
	} else {
		fatalf("plugin %s: %s.%s not found", p.name, path, p.ctor)
	}
	if _, ok := sp.Members[p.typ].(*ssa.Type); !ok {
		fatalf("plugin %s: type %s.%s not found", p.name, path, p.typ)
	}
	for _, m := range pluginMethods {
		f := a.method(sp, p.typ, m)
		if f == nil {
			continue
		}
		roots = append(roots, f)
		// The concrete types the extension getter returns, and their extension methods.
		for _, T := range returnedTypes(f) {
			for _, em := range extensionMethods[m] {
				if g := a.methodOf(T, sp.Pkg, em); g != nil {
					roots = append(roots, g)
				}
			}
		}
	}
	return roots
}

// returnedTypes lists the concrete types a function returns converted to an interface.
func returnedTypes(f *ssa.Function) []types.Type {
	var ts []types.Type
	for _, b := range f.Blocks {
		for _, instr := range b.Instrs {
			if r, ok := instr.(*ssa.Return); ok {
				for _, v := range r.Results {
					if mi, ok := v.(*ssa.MakeInterface); ok {
						ts = append(ts, mi.X.Type())
					}
				}
			}
		}
	}
	return ts
}

func (a *analyzer) snapshotRoots() []*ssa.Function {
	var roots []*ssa.Function
	for _, r := range snapshotRoots {
		var f *ssa.Function
		for _, path := range r.pkgs {
			sp := a.pkg(path)
			if sp == nil {
				continue
			}
			if r.recv == "" {
				f, _ = sp.Members[r.name].(*ssa.Function)
			} else {
				f = a.method(sp, r.recv, r.name)
			}
			if f != nil {
				break
			}
		}
		if f == nil {
			name := r.name
			if r.recv != "" {
				name = "(*" + r.recv + ")." + r.name
			}
			fatalf("snapshot root %s not found in %s", name, strings.Join(r.pkgs, " or "))
		}
		roots = append(roots, f)
	}
	return roots
}

// reach returns the functions reachable from roots, each with the function it was first reached
// from (nil for a root), breadth first.
func (a *analyzer) reach(roots []*ssa.Function) map[*ssa.Function]*ssa.Function {
	parent := map[*ssa.Function]*ssa.Function{}
	var queue []*ssa.Function
	for _, r := range roots {
		if _, ok := parent[r]; !ok {
			parent[r] = nil
			queue = append(queue, r)
		}
	}
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		for _, g := range a.facts(fn).succ {
			if _, ok := parent[g]; ok || a.excluded(g) {
				continue
			}
			parent[g] = fn
			queue = append(queue, g)
		}
	}
	return parent
}

func pathTo(parent map[*ssa.Function]*ssa.Function, fn *ssa.Function) []*ssa.Function {
	var path []*ssa.Function
	for f := fn; f != nil; f = parent[f] {
		path = append([]*ssa.Function{f}, path...)
	}
	return path
}

func pathLen(parent map[*ssa.Function]*ssa.Function, fn *ssa.Function) int {
	n := 0
	for f := fn; f != nil; f = parent[f] {
		n++
	}
	return n
}

// baseName is a function's name without the suffixes of closures, bound methods and wrappers.
func baseName(fn *ssa.Function) string {
	for fn.Parent() != nil {
		fn = fn.Parent()
	}
	name := fn.Name()
	if i := strings.IndexByte(name, '$'); i >= 0 {
		name = name[:i]
	}
	return name
}

func (a *analyzer) excluded(fn *ssa.Function) bool {
	pkg := fn.Pkg
	if pkg == nil && fn.Origin() != nil {
		pkg = fn.Origin().Pkg
	}
	if pkg == nil {
		// Wrappers: judged by the method they wrap.
		if obj, ok := fn.Object().(*types.Func); ok && obj.Pkg() != nil {
			if !strings.HasPrefix(obj.Pkg().Path(), "k8s.io/kubernetes/pkg/scheduler/") {
				return false
			}
			name := obj.Name()
			return excludedNames[name] || strings.HasPrefix(name, "isSchedulableAfter")
		}
		return false
	}
	if !strings.HasPrefix(pkg.Pkg.Path(), "k8s.io/kubernetes/pkg/scheduler/") {
		return false
	}
	name := baseName(fn)
	return excludedNames[name] || strings.HasPrefix(name, "isSchedulableAfter")
}

func (a *analyzer) facts(fn *ssa.Function) *facts {
	if f := a.facts_[fn]; f != nil {
		return f
	}
	f := &facts{}
	a.facts_[fn] = f
	seen := map[*ssa.Function]bool{}
	add := func(g *ssa.Function) {
		if g != nil && !seen[g] {
			seen[g] = true
			f.succ = append(f.succ, g)
		}
	}
	var ops []*ssa.Value
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			switch in := instr.(type) {
			case *ssa.FieldAddr:
				if fn.Synthetic == "" && !writeOnly(in) {
					if k, ok := fieldOf(in.X.Type(), in.Field, true); ok {
						f.reads = append(f.reads, read{k, in.Pos()})
					}
				}
			case *ssa.Field:
				if fn.Synthetic != "" {
					break
				}
				if k, ok := fieldOf(in.X.Type(), in.Field, false); ok {
					f.reads = append(f.reads, read{k, in.Pos()})
				}
			case *ssa.MakeInterface:
				for _, g := range a.conversion(in) {
					add(g)
				}
			}
			if call, ok := instr.(ssa.CallInstruction); ok && call.Common().IsInvoke() {
				for _, g := range a.invoke(call.Common()) {
					add(g)
				}
			}
			ops = instr.Operands(ops[:0])
			for _, op := range ops {
				if op == nil || *op == nil {
					continue
				}
				switch v := (*op).(type) {
				case *ssa.Function:
					add(v)
				case *ssa.Global:
					for _, g := range a.globalInit(v) {
						add(g)
					}
				}
			}
		}
	}
	return f
}

// writeOnly reports whether an address is only stored to, directly or through field addresses.
func writeOnly(v ssa.Value) bool {
	refs := v.Referrers()
	if refs == nil || len(*refs) == 0 {
		return false
	}
	for _, r := range *refs {
		switch r := r.(type) {
		case *ssa.Store:
			if r.Addr != v || r.Val == v {
				return false
			}
		case *ssa.FieldAddr:
			if !writeOnly(r) {
				return false
			}
		case *ssa.DebugRef:
		default:
			return false
		}
	}
	return true
}

// fieldOf names field i of the struct type t (or of the struct *t when ptr).
func fieldOf(t types.Type, i int, ptr bool) (fieldKey, bool) {
	if ptr {
		p, ok := types.Unalias(t).Underlying().(*types.Pointer)
		if !ok {
			return fieldKey{}, false
		}
		t = p.Elem()
	}
	named, ok := types.Unalias(t).(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return fieldKey{}, false
	}
	gv, ok := reported[named.Obj().Pkg().Path()]
	if !ok {
		return fieldKey{}, false
	}
	st, ok := named.Underlying().(*types.Struct)
	if !ok || i >= st.NumFields() {
		return fieldKey{}, false
	}
	field := st.Field(i)
	name, _, _ := strings.Cut(reflect.StructTag(st.Tag(i)).Get("json"), ",")
	switch {
	case name == "-":
		return fieldKey{}, false
	case name == "" && field.Embedded():
		return fieldKey{}, false // inlined into the enclosing object
	case name == "":
		name = field.Name()
	}
	return fieldKey{gv, named.Obj().Name(), name}, true
}

// invoke resolves an interface method call to the methods of the analysed concrete types that
// implement the interface.
func (a *analyzer) invoke(c *ssa.CallCommon) []*ssa.Function {
	m := c.Method
	if opaqueMethod.MatchString(m.Name()) {
		return nil
	}
	it := c.Value.Type()
	iface, ok := it.Underlying().(*types.Interface)
	if !ok {
		return nil
	}
	byID, _ := a.invokes.At(it).(map[string][]*ssa.Function)
	if byID == nil {
		byID = map[string][]*ssa.Function{}
		a.invokes.Set(it, byID)
	}
	if fns, ok := byID[m.Id()]; ok {
		return fns
	}
	var fns []*ssa.Function
	for _, T := range a.byMethod[m.Name()] {
		if !types.Implements(T, iface) {
			continue
		}
		if g := a.methodOf(T, m.Pkg(), m.Name()); g != nil {
			fns = append(fns, g)
		}
	}
	byID[m.Id()] = fns
	return fns
}

// conversion: a concrete value converted to a non-empty interface that is not an analysed
// package's reaches the type's methods of that interface (the bodiless callee would call them).
func (a *analyzer) conversion(mi *ssa.MakeInterface) []*ssa.Function {
	it := types.Unalias(mi.Type())
	if named, ok := it.(*types.Named); ok && named.Obj().Pkg() != nil && inScope(named.Obj().Pkg().Path()) {
		return nil
	}
	iface, ok := it.Underlying().(*types.Interface)
	if !ok || iface.NumMethods() == 0 || types.IsInterface(mi.X.Type()) {
		return nil
	}
	var fns []*ssa.Function
	for i := 0; i < iface.NumMethods(); i++ {
		m := iface.Method(i)
		if opaqueMethod.MatchString(m.Name()) {
			continue
		}
		if g := a.methodOf(mi.X.Type(), m.Pkg(), m.Name()); g != nil {
			fns = append(fns, g)
		}
	}
	return fns
}

// globalInit: the functions and function literals of a package-level variable's initializer.
func (a *analyzer) globalInit(g *ssa.Global) []*ssa.Function {
	sp := g.Pkg
	if sp == nil || !inScope(sp.Pkg.Path()) {
		return nil
	}
	m, ok := a.inits[sp]
	if !ok {
		m = a.packageInits(sp)
		a.inits[sp] = m
	}
	return m[g]
}

func (a *analyzer) packageInits(sp *ssa.Package) map[*ssa.Global][]*ssa.Function {
	m := map[*ssa.Global][]*ssa.Function{}
	p := a.byTypes[sp.Pkg]
	init, _ := sp.Members["init"].(*ssa.Function)
	if p == nil || init == nil {
		return m
	}
	type span struct {
		g          *ssa.Global
		start, end token.Pos
	}
	var spans []span
	for _, file := range p.Syntax {
		for _, d := range file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				if len(vs.Values) == 0 {
					continue
				}
				for _, id := range vs.Names {
					if g, ok := sp.Members[id.Name].(*ssa.Global); ok {
						spans = append(spans, span{g, vs.Pos(), vs.End()})
					}
				}
			}
		}
	}
	if len(spans) == 0 {
		return m
	}
	within := func(pos token.Pos, f func(*ssa.Global)) {
		if !pos.IsValid() {
			return
		}
		for _, s := range spans {
			if s.start <= pos && pos < s.end {
				f(s.g)
			}
		}
	}
	// Function literals, at any depth, by their position.
	var anon func(fn *ssa.Function)
	anon = func(fn *ssa.Function) {
		for _, af := range fn.AnonFuncs {
			within(af.Pos(), func(g *ssa.Global) { m[g] = append(m[g], af) })
			anon(af)
		}
	}
	anon(init)
	// Named functions the initializer refers to, by the position of the referring instruction.
	var ops []*ssa.Value
	for _, b := range init.Blocks {
		for _, instr := range b.Instrs {
			ops = instr.Operands(ops[:0])
			for _, op := range ops {
				if op == nil || *op == nil {
					continue
				}
				if fn, ok := (*op).(*ssa.Function); ok {
					within(instr.Pos(), func(g *ssa.Global) { m[g] = append(m[g], fn) })
				}
			}
		}
	}
	return m
}
