package deps

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/bcfab/bcfab/"

// layers is the tree's layering, bottom first: a folder at the top of the
// tree (or, for internal/, one below it) imports only folders of lower
// layers, and its own. docs/DESIGN.md draws the same picture.
var layers = [][]string{
	{"model", "queues", "xdp", "bpf", "wire", "internal/buildinfo", "internal/deps"},
	{"fabric", "internal/progress"},
	{"signaling"},
	{"node"},
	{"swd", "hostd"},
	{"lab"},
	{"study"},
	{"internal/testkit", "cmd"},
}

// folder is the layering's folder of a package path relative to the
// module: its first element, or its first two under internal/.
func folder(rel string) string {
	parts := strings.Split(rel, "/")
	if parts[0] == "internal" && len(parts) > 1 {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

func layerOf(t *testing.T) map[string]int {
	t.Helper()
	m := map[string]int{}
	for i, l := range layers {
		for _, f := range l {
			m[f] = i
		}
	}
	return m
}

// packageImports is every package of the module below root with the
// module packages its non-test files import, for every build target.
func packageImports(t *testing.T, root string) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "docs" || n == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		if out[rel] == nil {
			out[rel] = map[string]bool{}
		}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			if strings.HasPrefix(path, module) {
				out[rel][strings.TrimPrefix(path, module)] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLayers: no package imports a package of a folder above its own in
// the layering, so there is no import cycle between folders either, and
// every folder of the tree has its place.
func TestLayers(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no module root at %s: %v", root, err)
	}
	layer := layerOf(t)
	pkgs := packageImports(t, root)
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		from := folder(p)
		lf, ok := layer[from]
		if !ok {
			t.Errorf("%s: folder %s has no layer (add it to layers and to docs/DESIGN.md)", p, from)
			continue
		}
		for im := range pkgs[p] {
			to := folder(im)
			if to == from {
				continue
			}
			lt, ok := layer[to]
			if !ok {
				continue // reported as the importer of its own
			}
			if lt >= lf {
				t.Errorf("%s imports %s: %s (layer %d) may import only folders below it, and %s is layer %d", p, im, from, lf, to, lt)
			}
		}
	}
}
