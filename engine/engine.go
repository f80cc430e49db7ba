package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
)

// Query is the one entry point the engine evaluates.
const Query = "data.tollgate.main.result"

// DefaultTimeout is the evaluation deadline when Options.Timeout is zero.
const DefaultTimeout = 2 * time.Second

// MaxDenials caps Decision.Denials, matching the UpgradeGate CRD's MaxItems.
const MaxDenials = 32

// RestrictedBuiltins are built-in functions no policy may call because they reach the network
// or reveal the manager's runtime (environment, configuration). Every non-deterministic
// built-in (ast.Builtin.Nondeterministic: rand.intn, uuid.rfc4122, time.now_ns...) is refused
// too, so that every decision can be replayed from its input document (the clock is
// input.now). A module that calls one fails to compile, with a message that says why.
var RestrictedBuiltins = []string{"http.send", "net.lookup_ip_addr", "opa.runtime"}

// Module is one Rego source file.
type Module struct {
	// Path is relative and slash-separated, like the embedded files ("upgrade/upgrade.rego").
	// A module with the same Path as an embedded file (or an earlier module) replaces it.
	// Files ending in _test.rego are policy tests and are not loaded.
	Path   string
	Source string
}

// Options says what to compile besides the embedded policies.
type Options struct {
	// Policies is the base policy set: every *.rego file except *_test.rego. Nil means the
	// policies embedded in the binary (policies.FS).
	Policies fs.FS
	// Bundles are OPA bundles, merged in order: their modules count as admin modules (after
	// the base set, replacing by path) and their data is merged under data.
	Bundles []*bundle.Bundle
	// Modules are admin modules (ConfigMaps), applied last.
	Modules []Module
	// Data is placed under data.tollgate.config (e.g. {"disabledCodes": [...]}), which is
	// an empty object when neither Data nor a bundle sets it.
	Data map[string]any
	// Timeout is the deadline of one evaluation; zero means DefaultTimeout.
	Timeout time.Duration
}

// Engine is a compiled, prepared policy set. It is immutable and safe for concurrent use; a
// policy change builds a new Engine, so a failed compile keeps the previous one in service.
type Engine struct {
	prepared rego.PreparedEvalQuery
	compiler *ast.Compiler
	store    storage.Store
	timeout  time.Duration
	revision string
	rules    ruleIndex // denial code → the rules that produce it
}

// New parses and compiles the candidate policy set in strict mode, with the restricted
// capabilities, and prepares Query. Any problem is a *CompileError listing all of them.
func New(ctx context.Context, opts Options) (*Engine, error) {
	modules, err := collectModules(opts)
	if err != nil {
		return nil, err
	}
	data, err := collectData(opts)
	if err != nil {
		return nil, err
	}

	compiler, err := compile(modules)
	if err != nil {
		return nil, err
	}

	store := inmem.NewFromObjectWithOpts(data, inmem.OptRoundTripOnWrite(false))
	prepared, err := rego.New(
		rego.Query(Query),
		rego.Compiler(compiler),
		rego.Store(store),
		rego.Capabilities(Capabilities()),
		rego.Strict(true),
		// Built-in errors keep OPA's default semantics (the expression is undefined), as in
		// `opa test`; evaluate refuses an approval that any such error could have changed.
		rego.EnablePrintStatements(true),
	).PrepareForEval(ctx)
	if err != nil {
		return nil, compileError(err)
	}

	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Engine{
		prepared: prepared,
		compiler: compiler,
		store:    store,
		timeout:  timeout,
		revision: revision(modules, data),
		rules:    ruleSources(compiler),
	}, nil
}

// Revision identifies the policy set: 12 hex digits of a sha256 over the sorted module paths
// and sources and the data. Equal sets have equal revisions.
func (e *Engine) Revision() string { return e.revision }

// Modules returns the paths of the compiled modules, sorted.
func (e *Engine) Modules() []string {
	paths := make([]string, 0, len(e.compiler.Modules))
	for p := range e.compiler.Modules {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// collectModules gathers base, bundle and admin modules, later ones replacing earlier ones of
// the same path, and parses each (Rego v1, annotations on).
func collectModules(opts Options) (map[string]string, error) {
	base := opts.Policies
	if base == nil {
		base = embeddedPolicies
	}
	if base == nil {
		return nil, &CompileError{Items: []CompileErrorItem{{Message: "no base policy set: Options.Policies is nil and none is embedded"}}}
	}
	sources := map[string]string{}
	var items []CompileErrorItem
	add := func(p, src string) {
		clean, ok := modulePath(p)
		if !ok {
			items = append(items, CompileErrorItem{File: p, Message: "module path must be relative, slash-separated and end in .rego"})
			return
		}
		if strings.HasSuffix(clean, "_test.rego") {
			return
		}
		sources[clean] = src
	}
	err := fs.WalkDir(base, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".rego") {
			return err
		}
		b, err := fs.ReadFile(base, p)
		if err != nil {
			return err
		}
		add(p, string(b))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read base policies: %w", err)
	}
	for _, b := range opts.Bundles {
		for _, m := range b.Modules {
			p := m.Path
			if m.RelativePath != "" {
				p = m.RelativePath
			}
			add(strings.TrimPrefix(p, "/"), string(m.Raw))
		}
	}
	for _, m := range opts.Modules {
		add(m.Path, m.Source)
	}
	if len(items) > 0 {
		return nil, &CompileError{Items: items}
	}
	return sources, nil
}

func modulePath(p string) (string, bool) {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, `\`) || !strings.HasSuffix(p, ".rego") {
		return "", false
	}
	clean := path.Clean(p)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", false
	}
	return clean, true
}

// collectData merges the bundles' data and puts Options.Data under tollgate.config.
func collectData(opts Options) (map[string]any, error) {
	data := map[string]any{}
	for _, b := range opts.Bundles {
		if err := mergeInto(data, b.Data, ""); err != nil {
			return nil, &CompileError{Items: []CompileErrorItem{{File: b.Manifest.Revision, Message: "bundle data: " + err.Error()}}}
		}
	}
	cfg := map[string]any{}
	if opts.Data != nil {
		// Round-trip through JSON so YAML-decoded or typed values become plain JSON data.
		b, err := json.Marshal(opts.Data)
		if err != nil {
			return nil, &CompileError{Items: []CompileErrorItem{{Message: "data is not JSON: " + err.Error()}}}
		}
		if err := json.Unmarshal(b, &cfg); err != nil {
			return nil, &CompileError{Items: []CompileErrorItem{{Message: "data is not JSON: " + err.Error()}}}
		}
	}
	// data.tollgate.config always exists, so policies may read it without guarding.
	if err := mergeInto(data, map[string]any{"tollgate": map[string]any{"config": cfg}}, ""); err != nil {
		return nil, &CompileError{Items: []CompileErrorItem{{Message: "data: " + err.Error()}}}
	}
	return data, nil
}

func mergeInto(dst, src map[string]any, at string) error {
	for k, v := range src {
		sub, isMap := v.(map[string]any)
		cur, exists := dst[k]
		if !exists {
			dst[k] = v
			continue
		}
		curMap, curIsMap := cur.(map[string]any)
		if !isMap || !curIsMap {
			return fmt.Errorf("conflicting values at %s/%s", at, k)
		}
		if err := mergeInto(curMap, sub, at+"/"+k); err != nil {
			return err
		}
	}
	return nil
}

// Capabilities are OPA's built-ins less those Tollgate refuses (refusedBuiltins): what the
// manager compiles policies with, and what `tollgate policy test` tests them with.
func Capabilities() *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	caps.Builtins = slices.DeleteFunc(caps.Builtins, func(b *ast.Builtin) bool {
		_, refused := refusedBuiltins[b.Name]
		return refused
	})
	return caps
}

// compile parses and compiles the modules, and checks what the contract forbids although OPA
// compiles it (checkContract). Every problem found is reported, OPA's first.
func compile(sources map[string]string) (*ast.Compiler, error) {
	var items []CompileErrorItem
	parsed := make(map[string]*ast.Module, len(sources))
	popts := ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true}
	for _, p := range slices.Sorted(maps.Keys(sources)) {
		m, err := ast.ParseModuleWithOpts(p, sources[p], popts)
		if err != nil {
			items = append(items, astErrorItems(err)...)
			continue
		}
		parsed[p] = m
	}
	if len(items) > 0 {
		return nil, &CompileError{Items: items}
	}
	contract := checkContract(parsed)
	compiler := ast.NewCompiler().
		WithStrict(true).
		WithCapabilities(Capabilities()).
		WithEnablePrintStatements(true).
		WithDefaultRegoVersion(ast.RegoV1)
	if compiler.Compile(parsed); compiler.Failed() {
		items = astErrorItems(compiler.Errors)
	}
	if items = append(items, contract...); len(items) > 0 {
		return nil, &CompileError{Items: items}
	}
	return compiler, nil
}

func compileError(err error) error {
	return &CompileError{Items: astErrorItems(err)}
}

func astErrorItems(err error) []CompileErrorItem {
	var errs ast.Errors
	var one *ast.Error
	switch {
	case errors.As(err, &errs):
	case errors.As(err, &one):
		errs = ast.Errors{one}
	default:
		return []CompileErrorItem{{Message: err.Error()}}
	}
	items := make([]CompileErrorItem, 0, len(errs))
	for _, e := range errs {
		it := CompileErrorItem{Message: refusedMessage(e.Message)}
		if e.Location != nil {
			it.File, it.Row, it.Col = e.Location.File, e.Location.Row, e.Location.Col
		}
		items = append(items, it)
	}
	return items
}

func revision(sources map[string]string, data map[string]any) string {
	h := sha256.New()
	for _, p := range slices.Sorted(maps.Keys(sources)) {
		fmt.Fprintf(h, "%d:%s\x00%d:%s\x00", len(p), p, len(sources[p]), sources[p])
	}
	b, _ := json.Marshal(data) // map keys are sorted by encoding/json
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))[:12]
}
