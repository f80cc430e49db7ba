package snapshot

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// MaxFileSize is the most Load reads of one file (or of standard input): a snapshot of a
// large cluster is a few MiB; more is a wrong path.
const MaxFileSize = 64 << 20

// Stdin is the path that names standard input.
const Stdin = "-"

// maxProblems is how many documents' problems one error lists.
const maxProblems = 20

// LoadError is one document that cannot be read as what it claims to be.
type LoadError struct {
	File     string
	Document int    // 1-based index of the document in the file's YAML stream
	Line     int    // 1-based line in the file; 0 when the parser does not say
	Field    string // the field at fault (metadata.name, items[2].kind), or "" for the document
	Err      error
}

func (e *LoadError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: document %d", e.File, e.Document)
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d)", e.Line)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": %s", e.Field)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

func (e *LoadError) Unwrap() error { return e.Err }

// Load reads YAML or JSON files — multi-document streams, `v1 List`s or typed lists, as
// `kubectl get -o yaml` and `tollgate snapshot` print them — and folders of them (the files
// named *.yaml, *.yml or *.json). "-" is standard input. Load is strict: a document that is
// not what it claims (a syntax error, a duplicate key, a value that does not fit its field, a
// kind Tollgate reads misspelled or in a version not served, an object given twice) is an
// error, a *LoadError per document, and no snapshot is returned: a decision on part of the
// input would be a decision on input no one gave.
func Load(paths ...string) (*Snapshot, error) {
	l := &loader{snap: New()}
	for _, root := range paths {
		if err := l.path(root); err != nil {
			return nil, fmt.Errorf("load snapshot %s: %w", root, err)
		}
	}
	if len(l.problems) == 0 {
		return l.snap, nil
	}
	errs := l.problems[:min(len(l.problems), maxProblems)]
	if more := len(l.problems) - len(errs); more > 0 {
		errs = append(slices.Clip(errs), fmt.Errorf("and %d more", more))
	}
	return nil, errors.Join(errs...)
}

type loader struct {
	snap     *Snapshot
	problems []error
}

func (l *loader) path(root string) error {
	if root == Stdin {
		b, err := readCapped("standard input", os.Stdin)
		if err != nil {
			return err
		}
		l.file("standard input", b)
		return nil
	}
	fi, err := os.Stat(root)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return l.readFile(root, pipeFromShell(root)) // a file named on the command line, whatever its extension
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ext := strings.ToLower(filepath.Ext(p))
		if d.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
			return nil
		}
		return l.readFile(p, false)
	})
}

// readFile reads a regular file of at most MaxFileSize; a symbolic link counts as what it
// points to. Anything else — a named pipe, a socket, a device such as /dev/zero, a larger
// file — is refused unopened: opening a named pipe waits for a writer that may never come,
// and a device may never end. pipeOK lets a pipe through: one the shell hands over for
// `<(kubectl get ...)`, whose writer is running already.
func (l *loader) readFile(name string, pipeOK bool) error {
	fi, err := os.Stat(name) // follows a symbolic link: what it points to counts
	if err != nil {
		return err
	}
	if err := readable(name, fi, pipeOK); err != nil {
		return err
	}
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	if fi, err = f.Stat(); err != nil { // what was opened, should the path have changed
		return err
	}
	if err := readable(name, fi, pipeOK); err != nil {
		return err
	}
	b, err := readCapped(name, f)
	if err != nil {
		return err
	}
	l.file(name, b)
	return nil
}

// pipeFromShell says whether name is how a shell passes the output of a command as a file
// (`<(kubectl get ...)`): /dev/fd/N, or /proc/self/fd/N as zsh writes it. Such a pipe is
// open already, so reading it does not wait for a writer; a named pipe made with mkfifo
// would.
func pipeFromShell(name string) bool {
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/"} {
		if n, ok := strings.CutPrefix(name, dir); ok {
			_, err := strconv.ParseUint(n, 10, 31)
			return err == nil
		}
	}
	return false
}

func readable(name string, fi fs.FileInfo, pipeOK bool) error {
	if fi.Mode().Type() == fs.ModeNamedPipe && pipeOK {
		return nil // its size says nothing; readCapped caps what is read
	}
	if !fi.Mode().IsRegular() {
		what := "a special file"
		switch {
		case fi.IsDir():
			what = "a folder" // a link in a folder to a folder: a walk does not follow links
		case fi.Mode()&fs.ModeNamedPipe != 0:
			what = "a named pipe"
		case fi.Mode()&fs.ModeDevice != 0:
			what = "a device"
		case fi.Mode()&fs.ModeSocket != 0:
			what = "a socket"
		}
		return fmt.Errorf("%s is not a regular file but %s: a snapshot is YAML or JSON files, folders of them, or - for standard input", name, what)
	}
	if fi.Size() > MaxFileSize {
		return tooLarge(name)
	}
	return nil
}

func readCapped(name string, r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > MaxFileSize {
		return nil, tooLarge(name)
	}
	return b, nil
}

func tooLarge(name string) error {
	return fmt.Errorf("%s is larger than %d MiB, the most a snapshot file may hold: split it, or check the path", name, MaxFileSize>>20)
}

// file reads the documents of one YAML stream (JSON is YAML too); it stops at a syntax error,
// past which the stream cannot be read.
func (l *loader) file(name string, b []byte) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	conv := &converter{}
	for n := 1; ; n++ {
		var root yaml.Node
		err := dec.Decode(&root)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			l.problems = append(l.problems, syntaxError(name, n, err))
			return
		}
		d := &document{file: name, n: n, root: &root}
		if err := l.document(d, conv); err != nil {
			l.problems = append(l.problems, d.problem(err))
		}
	}
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func syntaxError(file string, doc int, err error) *LoadError {
	le := &LoadError{File: file, Document: doc, Err: err}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		le.Line, _ = strconv.Atoi(m[1])
		le.Err = errors.New(m[2])
	}
	return le
}

// document is one YAML document of a file.
type document struct {
	file string
	n    int
	root *yaml.Node
}

// where names the document, or the item at of a list, for a person.
func (d *document) where(at path) string {
	return fmt.Sprintf("%s document %d (line %d)", d.file, d.n, lineOf(d.root, at))
}

func (d *document) problem(err error) *LoadError {
	le := &LoadError{File: d.file, Document: d.n, Line: deref(d.root).Line, Err: err}
	var fe *fieldError
	if errors.As(err, &fe) {
		le.Field, le.Err = fe.at.String(), fe.err
		le.Line = cmp.Or(fe.line, lineOf(d.root, fe.at))
	}
	return le
}

func (l *loader) document(d *document, conv *converter) error {
	v, err := conv.value(d.root, nil, false)
	if err != nil {
		return err
	}
	switch v := v.(type) {
	case nil:
		return nil // an empty document, or only comments
	case map[string]any:
		items, err := unpack(v)
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := l.object(d, it.obj, it.at); err != nil {
				return within(it.at, err)
			}
		}
		return nil
	default:
		return fmt.Errorf("a document must be one object (a YAML mapping), not %s", describe(v))
	}
}

// within puts err, about an item of a list, at the item's path.
func within(at path, err error) error {
	var fe *fieldError
	if errors.As(err, &fe) {
		return &fieldError{at: append(slices.Clip(at), fe.at...), line: fe.line, err: fe.err}
	}
	if len(at) > 0 {
		return &fieldError{at: at, err: err}
	}
	return err
}

type item struct {
	obj map[string]any
	at  path // where in the document: nil, or items[i]
}

// unpack returns the objects of a document: itself, or the items of a list.
func unpack(doc map[string]any) ([]item, error) {
	gvk, ok := kindOf(doc)
	if !ok {
		return []item{{obj: doc}}, nil // resolve, in object, says what is wrong
	}
	itemKind, isList := listItemKind(gvk)
	if !isList {
		return []item{{obj: doc}}, nil
	}
	raw, ok := doc["items"].([]any)
	if doc["items"] != nil && !ok {
		return nil, mismatch(doc["items"], "a list", path{"items"})
	}
	var out []item
	for i, it := range raw {
		at := path{"items", i}
		obj, ok := it.(map[string]any)
		if !ok {
			return nil, fieldErrorf(at, "a list item must be an object, not %s", describe(it))
		}
		if err := itemOf(obj, gvk, itemKind); err != nil {
			return nil, within(at, err)
		}
		out = append(out, item{obj: obj, at: at})
	}
	return out, nil
}

// itemOf checks an item of a list of kind list: a typed list's items are of its item kind
// (and may leave apiVersion and kind out, as the API server does); a list holds no lists.
func itemOf(obj map[string]any, list, itemKind schema.GroupVersionKind) error {
	if !itemKind.Empty() {
		for _, f := range [][2]string{{"apiVersion", itemKind.GroupVersion().String()}, {"kind", itemKind.Kind}} {
			switch got := obj[f[0]]; got {
			case nil:
				obj[f[0]] = f[1]
			case f[1]:
			default:
				return fieldErrorf(path{f[0]}, "%s in a %s: its items are %s %s", describe(got), list.Kind, itemKind.GroupVersion(), itemKind.Kind)
			}
		}
	}
	if gvk, ok := kindOf(obj); ok {
		if _, nested := listItemKind(gvk); nested {
			return fieldErrorf(path{"kind"}, "a %s inside a %s is not read: put its items in the outer list", gvk.Kind, list.Kind)
		}
	}
	return nil
}

// kindOf reads apiVersion and kind, when they are there and strings.
func kindOf(obj map[string]any) (schema.GroupVersionKind, bool) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	return gv.WithKind(kind), err == nil && kind != ""
}

// object validates one object and adds it to the snapshot.
func (l *loader) object(d *document, obj map[string]any, at path) error {
	gvk, err := resolve(obj)
	if err != nil {
		return err
	}
	if err := validate(obj, gvk); err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: obj}
	if other := l.snap.insert(u, d.where(at)); other != "" {
		return fmt.Errorf("%s %s is also in %s: a snapshot holds each object (kind, namespace, name) once",
			gvk.Kind, objectKey(u), other)
	}
	return nil
}

func objectKey(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetName()
	}
	return u.GetNamespace() + "/" + u.GetName()
}
