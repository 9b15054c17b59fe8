package docs

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the module's root, seen from this package's directory.
const root = ".."

// The package map is the list under this heading of DESIGN.md, one item
// per package, each starting with the package's path under the module in
// backquotes: "- `lab/workload` — what it is ...".
const (
	mapFile    = "DESIGN.md"
	mapHeading = "### Packages"
)

var mapItem = regexp.MustCompile("^- `([^`]+)`")

// packageMap reads the package map: the paths it names, in its order,
// with their line numbers.
func packageMap(t *testing.T) (paths []string, lines map[string]int) {
	t.Helper()
	f, err := os.Open(mapFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines = map[string]int{}
	sc := bufio.NewScanner(f)
	in, n := false, 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if !in {
			in = line == mapHeading
			continue
		}
		if strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "### ") {
			break
		}
		if m := mapItem.FindStringSubmatch(line); m != nil {
			if l, dup := lines[m[1]]; dup {
				t.Errorf("docs/%s:%d: package %s is in the map twice (first at line %d)", mapFile, n, m[1], l)
				continue
			}
			paths = append(paths, m[1])
			lines[m[1]] = n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !in || len(paths) == 0 {
		t.Fatalf("docs/%s: no package map: a list of items \"- `path` — ...\" under %q", mapFile, mapHeading)
	}
	return paths, lines
}

// treePackages are the module's packages: every directory under the root
// with a .go file (tests included), by its path under the module, as `go
// list ./...` names them; testdata, hidden and _ directories and nested
// modules are not the module's.
func treePackages(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") {
			dir, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			seen[filepath.ToSlash(dir)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	for p := range seen {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	return pkgs
}

// The package map of DESIGN.md names every package of the tree, and no
// package that is not there, in the order of their paths.
func TestPackageMap(t *testing.T) {
	paths, lines := packageMap(t)
	tree := treePackages(t)
	if len(tree) == 0 {
		t.Fatalf("no package under %s", root)
	}
	for _, p := range tree {
		if _, ok := lines[p]; !ok {
			t.Errorf("docs/%s: package %s is missing from the package map: add an item \"- `%s` — what it is\" under %q", mapFile, p, p, mapHeading)
		}
	}
	for _, p := range paths {
		if !slices.Contains(tree, p) {
			t.Errorf("docs/%s:%d: the package map names %s, which is no package of the tree (no directory %s with a .go file): rename or remove the item", mapFile, lines[p], p, p)
		}
	}
	for i := 1; i < len(paths); i++ {
		if paths[i] < paths[i-1] {
			t.Errorf("docs/%s:%d: package %s comes after %s; the map is in the order of the paths", mapFile, lines[paths[i]], paths[i], paths[i-1])
		}
	}
}

// readmeMaxLines is the README's length at most: a front door, the rest
// in docs/.
const readmeMaxLines = 200

func TestReadmeLength(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move what is not the front door into docs/", n, readmeMaxLines)
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link of the README and of docs/*.md names a file or
// directory that exists.
func TestLinks(t *testing.T) {
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target, _, _ := strings.Cut(m[1], "#")
				if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				if _, err := os.Stat(filepath.Join(filepath.Dir(f), target)); err != nil {
					t.Errorf("%s:%d: link to %s: no such file", f, i+1, m[1])
				}
			}
		}
	}
}
